"""Benchmark: time `recommend` over the full catalog and print the median and options evaluated per second.

Usage: python bench/bench_recommend.py [--repeat N] [--max-nodes M]
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    """Run the recommendation N times for a representative job and print median seconds and options/s."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20, help="repetitions (default 20)")
    parser.add_argument("--max-nodes", type=int, default=100, help="node counts tried per instance type (default 100)")
    args = parser.parse_args()

    import functools

    from blueprints.advisor import choice
    from blueprints.advisor.data import limits
    from blueprints.advisor.job import parse_job
    from blueprints.architectures import budget_tiers
    from blueprints.catalog import load_catalog

    catalog = load_catalog()
    recommend = functools.partial(choice.recommend, tiers=budget_tiers(limits()))
    # The medical-imaging case's workload: deadline and budget both bind, so every option is fully evaluated.
    job = parse_job({
        "name": "bench", "model_kind": "transformer", "params": 1.2e9, "tokens": 1.96e11, "dataset_tb": 100,
        "ingest_tb_per_day": 100, "runs_per_year": 12, "deadline_days": 7, "budget_cny_per_year": 2e6, "max_nodes": args.max_nodes,
    })
    recommend(job, catalog)  # warm-up: CSV loading and caches
    times = []
    evaluated = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        rec = recommend(job, catalog)
        times.append(time.perf_counter() - start)
        evaluated = rec.options_evaluated
    median = statistics.median(times)
    gpu_types = sum(1 for t in catalog.instance_types.values() if t.is_gpu)
    print(f"recommend: catalog {catalog.version}, {gpu_types} GPU types × {args.max_nodes} node counts = {evaluated:,} options")
    print(f"median {median:.4f} s over {args.repeat} runs (min {min(times):.4f} s, max {max(times):.4f} s)")
    print(f"{evaluated / median:,.0f} options evaluated per second")


if __name__ == "__main__":
    main()
