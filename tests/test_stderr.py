"""The CLI prints nothing on stderr for a good run: no "Exception ignored in BaseEventLoop.__del__" at exit.

The message came from event loops pulumi's mocks create (main thread and executor threads) and never close; it
appeared in a few percent of runs, at interpreter shutdown, so only many fresh processes can show it.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 30


def _run(_: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", "plan", "medical-imaging", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_thirty_fresh_runs_have_empty_stderr():
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run, range(RUNS)))
    failures = [(r.returncode, r.stderr) for r in results if r.returncode != 0 or r.stderr]
    assert not failures, f"{len(failures)} of {RUNS} runs wrote to stderr or failed; first: {failures[0]}"
    assert all('"schema": "aitrain.plan/v2"' in r.stdout for r in results)


def test_offline_runs_leave_no_event_loop_open():
    """The root cause, in process: every loop a run creates (main and executor threads) is closed afterwards."""
    import asyncio
    import gc

    from blueprints.testing import offline_plan

    def open_loops() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop) and not o.is_closed())

    before = open_loops()
    offline_plan("medical-imaging")
    offline_plan("autoscaling-training")
    assert open_loops() <= before
