"""Benchmark: wall time of `aitrain plan` (fresh process each run): medical-imaging at 12 and 128 nodes, and every
other bundled preset; prints medians and ratios to the 12-node plan.

The plan must not grow with the node count (instance sets batch ≤ 100 nodes), so that ratio should be close to 1; the
other presets' ratios show what each blueprint's plan costs against the fixed cluster's.
Run: `make bench` or `.venv/bin/python bench/bench_plan.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def aitrain_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m blueprints.cli.main`."""
    script = Path(sys.executable).with_name("aitrain")
    if script.exists():
        return [str(script)]
    found = shutil.which("aitrain")
    return [found] if found else [sys.executable, "-m", "blueprints.cli.main"]


def median_seconds(args: list[str], runs: int) -> float:
    """Median wall time of `aitrain ARGS` over `runs` fresh processes (output discarded; must exit 0)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(aitrain_command() + args, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    small = median_seconds(["plan", "medical-imaging"], runs)
    large = median_seconds(["plan", "medical-imaging", "--set", "compute.nodes=128"], runs)
    print(f"aitrain plan medical-imaging (12 nodes, 96 GPUs):      median {small:.3f} s over {runs} runs")
    print(f"aitrain plan medical-imaging --set compute.nodes=128:  median {large:.3f} s over {runs} runs")
    print(f"ratio 128-node / 12-node plan time: {large / small:.2f}")
    from blueprints.profile.stackconfig import preset_names

    for preset in (name for name in preset_names() if name != "medical-imaging"):
        seconds = median_seconds(["plan", preset], runs)
        print(
            f"aitrain plan {preset}: median {seconds:.3f} s over {runs} "
            f"runs, ratio to medical-imaging {seconds / small:.2f}"
        )


if __name__ == "__main__":
    main()
