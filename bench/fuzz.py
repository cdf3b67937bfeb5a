"""Property-based fuzz of every profile path through the functions `aitrain plan` runs.

Each draw (``bench/fuzzgen.py``) is a preset argument, a stack file and ``--set`` strings. It goes through
``parse_overrides`` → ``engine_config`` → ``with_cli_inputs`` → ``preview`` (the real Pulumi program under
mocks, with ``today`` fixed) and is classified:

- accepted: a Plan came back. Then the plan must satisfy the guardrails (no error finding) and the engine's
  rules (``plan_violations``); a violation is an *unsafe acceptance*;
- rejected: ``UserInputError`` with a non-empty message and no traceback (the CLI's clean exit 2);
- crash: any other exception (or a worker process that died), recorded with a shrunk reproduction;
- timed out: slower than ``--timeout`` seconds, twice. The deadline is kept by this (parent) process, not inside
  the worker, where an alarm can be swallowed by the code it interrupts (a Pulumi callback once did, and the run
  hung): the worker is killed and replaced (``fuzzpool``) and the other draws go on. After the run each such draw is
  retried once with ``RETRY_FACTOR`` × the limit: one that then finishes is reported as slow and counts as its
  outcome (a 2,000-node draw took 4 s on a quiet machine and over 20 s at load 5 on 2 cores); one that overruns
  again is a hang, reported with the command that replays it.

Run: ``make fuzz`` or ``python bench/fuzz.py --draws 20000 --jobs 2 [--seed N]``; exits 1 on any crash, unsafe
acceptance or timed-out draw (a hang the CLI would show as one). A draw is reproducible
from ``(seed, index)``: ``python bench/fuzz.py --seed N --only I`` runs it in this
process without a deadline, so a hang stays where Ctrl-C shows its traceback.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import ipaddress
import json
import os
import re
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# This checkout's blueprints (not whichever the venv installed) and fuzzgen, also in spawned workers.
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import fuzzgen  # noqa: E402
import fuzzpool  # noqa: E402
from fuzzgen import TODAY, Case  # noqa: E402

from blueprints.core.errors import UserInputError  # noqa: E402
from blueprints.profile.model import RESERVED_TAG_KEYS, tag_problems  # noqa: E402
from blueprints.review import guardrails  # noqa: E402
from blueprints.review.plan import Plan  # noqa: E402

ENGINE_MAX_TAGS = 20
NODE_RANGE = (1, 2000)
ESS_RANGE = (0, 2000)
LAUNCH_WINDOW_DAYS = 90
RECURRENCE_WINDOW_DAYS = 365
VSWITCH_PREFIXES = (16, 29)  # Alibaba vSwitch masks
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


# --- the engine's rules over an accepted plan -----------------------------------------------------------


def plan_violations(plan: Plan, today: dt.date = TODAY, catalog: Any = None) -> list[str]:
    """Every guardrail error and engine or cloud rule the plan breaks (empty: safe to accept)."""
    out = [f"guardrail {f.rule} on {f.resource}: {f.message}" for f in guardrails.check(plan) if f.level == "error"]
    seen: set[tuple[str, str]] = set()
    for r in plan.resources:
        if (r.type, r.name) in seen:
            out.append(f"duplicate URN {r.type} {r.name!r}")
        seen.add((r.type, r.name))
        if not r.name.isprintable() or _CONTROL.search(r.name) or any(ch.isspace() for ch in r.name):
            out.append(f"resource name {r.name!r} has control characters or whitespace")
        for key, value in r.inputs.items():
            if isinstance(value, str) and key != "userData" and _CONTROL.search(value):
                out.append(f"{r.name}.{key} has control characters: {value[:60]!r}")
        for key in ("tags", "templateTags"):
            tags = r.inputs.get(key)
            if not isinstance(tags, dict):
                continue
            if len(tags) > ENGINE_MAX_TAGS:
                out.append(f"{r.name}.{key}: {len(tags)} tags, the engine takes at most {ENGINE_MAX_TAGS}")
            for k, v in tags.items():
                problems = [
                    p
                    for p in tag_problems(str(k), str(v))
                    if not (k in RESERVED_TAG_KEYS and "set by aitrain itself" in p)
                ]
                out += [f"{r.name}.{key}: {p}" for p in problems]
    out += (
        _node_counts(plan)
        + _vswitches(plan)
        + _ess(plan, today)
        + (_capacity(plan, catalog) if catalog is not None else [])
    )
    return out


def _capacity(plan: Plan, catalog: Any) -> list[str]:
    """A file system's capacity inside its tier's range in the catalog (where the catalog gives one)."""
    out = []
    for r in plan.find("nas.FileSystem"):
        capacity = r.inputs.get("capacity")
        tier = next(
            (
                t
                for t in catalog.storage
                if t.file_system_type == r.inputs.get("fileSystemType")
                and t.storage_type == r.inputs.get("storageType")
            ),
            None,
        )
        if capacity is None or tier is None:
            continue
        if (tier.min_capacity_gib is not None and capacity < tier.min_capacity_gib) or (
            tier.max_capacity_gib is not None and capacity > tier.max_capacity_gib
        ):
            out.append(
                f"{r.name}: capacity {capacity} GiB outside {tier.kind}/{tier.tier}'s "
                f"{tier.min_capacity_gib}–{tier.max_capacity_gib} GiB"
            )
    return out


def _node_counts(plan: Plan) -> list[str]:
    sets = plan.find("ecs.EcsInstanceSet")
    if not sets:
        return []
    out = [
        f"{r.name}: amount {r.inputs.get('amount')} outside 1–100"
        for r in sets
        if not 1 <= int(r.inputs.get("amount", 0)) <= 100
    ]
    total = sum(int(r.inputs.get("amount", 0)) for r in sets)
    if not NODE_RANGE[0] <= total <= NODE_RANGE[1]:
        out.append(f"{total} nodes in instance sets, outside {NODE_RANGE[0]}–{NODE_RANGE[1]}")
    return out


def _vswitches(plan: Plan) -> list[str]:
    out = []
    vpcs = [ipaddress.ip_network(r.inputs["cidrBlock"]) for r in plan.find("vpc.Network")]
    nets = []
    for r in plan.find("vpc.Switch"):
        net = ipaddress.ip_network(r.inputs["cidrBlock"])
        if not any(net.version == v.version and net.subnet_of(v) for v in vpcs):  # type: ignore[arg-type]
            out.append(f"{r.name}: {net} outside the VPC {[str(v) for v in vpcs]}")
        if not VSWITCH_PREFIXES[0] <= net.prefixlen <= VSWITCH_PREFIXES[1]:
            out.append(f"{r.name}: vSwitch mask /{net.prefixlen} outside /{VSWITCH_PREFIXES[0]}–/{VSWITCH_PREFIXES[1]}")
        for other in nets:
            if net.overlaps(other):
                out.append(f"{r.name}: {net} overlaps {other}")
        nets.append(net)
    return out


def _ess(plan: Plan, today: dt.date) -> list[str]:
    out = []
    for r in plan.find("ess.ScalingGroup"):
        low, high, want = (
            r.inputs.get("minSize"),
            r.inputs.get("maxSize"),
            r.inputs.get("desiredCapacity", r.inputs.get("minSize")),
        )
        if not (ESS_RANGE[0] <= low <= want <= high <= ESS_RANGE[1] and high >= 1):
            out.append(f"{r.name}: min {low} ≤ desired {want} ≤ max {high} (0–2000, max ≥ 1) does not hold")
    start = dt.datetime.combine(today, dt.time(), dt.timezone.utc)
    for r in plan.find("ess.ScheduledTask"):
        low, high, want = r.inputs.get("minValue"), r.inputs.get("maxValue"), r.inputs.get("desiredCapacity")
        if not ESS_RANGE[0] <= low <= want <= high <= ESS_RANGE[1]:
            out.append(f"{r.name}: min {low} ≤ desired {want} ≤ max {high} does not hold")
        launch = dt.datetime.strptime(r.inputs["launchTime"], "%Y-%m-%dT%H:%MZ").replace(tzinfo=dt.timezone.utc)
        if not start <= launch <= start + dt.timedelta(days=LAUNCH_WINDOW_DAYS):
            out.append(
                f"{r.name}: launchTime {r.inputs['launchTime']} outside [{today}, {today} + {LAUNCH_WINDOW_DAYS} days]"
            )
        end = dt.datetime.strptime(r.inputs["recurrenceEndTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
        if not launch < end <= start + dt.timedelta(days=RECURRENCE_WINDOW_DAYS):
            out.append(
                f"{r.name}: recurrenceEndTime {r.inputs['recurrenceEndTime']} not "
                f"after launch or beyond {today} + {RECURRENCE_WINDOW_DAYS} days"
            )
    return out


def render_violations(plan: Plan) -> list[str]:
    """The terminal form carries no control characters (escape sequences, carriage returns) from user text."""
    from blueprints.review.render import render_markdown, render_table

    out = []
    if _CONTROL.search(render_table(plan).replace("\t", "")):
        out.append("terminal plan contains control characters")
    render_markdown(plan)
    plan.to_json()
    return out


# --- one draw -------------------------------------------------------------------------------------------


def run_case(case: Case, catalog: Any, workdir: Path, *, render: bool = True) -> tuple[str, str, list[str]]:
    """``(outcome, detail, violations)`` for one draw: outcome is accepted | rejected | crash."""
    from blueprints.architectures import profile_models
    from blueprints.engine.preview import preview
    from blueprints.profile.stackconfig import engine_config, parse_overrides, with_cli_inputs

    text, sets = case.stack_text(), case.sets()  # outside the try: a fault of the fuzzer itself must stop the run
    if case.preset is None and text is None:
        return "rejected", "no profile given (the CLI's own check)", []
    try:
        overrides = parse_overrides(sets, profile_models())
        config: dict[str, str] = {}
        if text is not None:
            path = workdir / "Pulumi.fuzz.yaml"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            config = engine_config(path)
        plan = preview(with_cli_inputs(config, case.preset, overrides), catalog=catalog, today=TODAY)
        violations = plan_violations(plan, TODAY, catalog) + (render_violations(plan) if render else [])
        return "accepted", "", violations
    except UserInputError as exc:
        message = exc.render()
        if not message.strip() or "Traceback" in message:
            return "crash", f"UserInputError with a bad message: {message[:200]!r}", []
        return "rejected", message, []
    except Exception as exc:
        return "crash", signature(exc), []


def signature(exc: BaseException) -> str:
    """Exception type, the innermost frame in blueprints/ and the message without numbers: one line per bug."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "blueprints" in f.filename] or frames
    where = f"{Path(ours[-1].filename).name}:{ours[-1].name}" if ours else "?"
    message = re.sub(r"\d+", "N", " ".join(str(exc).split()))[:100]
    return f"{type(exc).__name__} at {where}: {message}"


def shrink(case: Case, catalog: Any, workdir: Path, same: Any) -> Case:
    """Drop mutations one at a time while ``same(outcome)`` still holds: a minimal reproduction."""
    changed = True
    while changed:
        changed = False
        for i in range(len(case.mutations)):
            trial = Case(
                case.preset,
                case.profile,
                case.stack_preset,
                case.mutations[:i] + case.mutations[i + 1 :],
                case.document,
            )
            if same(run_case(trial, catalog, workdir)):
                case, changed = trial, True
                break
    return case


# --- workers --------------------------------------------------------------------------------------------

_STATE: dict[str, Any] = {}


def _init(seed: int) -> None:
    from blueprints.catalog import load_catalog

    catalog = load_catalog()
    _STATE.update(
        catalog=catalog,
        values=fuzzgen.Values(catalog),
        seed=seed,
        workdir=Path(tempfile.mkdtemp(prefix="aitrain-fuzz-")),
    )


def _first(index: int) -> tuple[dict[str, Any], Case, Any]:
    """Run draw ``index``: its result, its case and, for a failure, the predicate a shrink must keep (else None)."""
    case = fuzzgen.draw(_STATE["values"], _STATE["seed"], index)
    start = time.perf_counter()
    outcome, detail, violations = run_case(case, _STATE["catalog"], _STATE["workdir"])
    result: dict[str, Any] = {
        "index": index,
        "outcome": outcome,
        "seconds": time.perf_counter() - start,
        "kinds": [m.kind for m in case.mutations],
        "paths": [m.path for m in case.mutations],
    }
    if outcome != "crash" and not violations:
        return result, case, None
    result.update(detail=detail, violations=violations, repro=case.repro())
    if outcome == "crash":
        return result, case, lambda r: r[0] == "crash" and r[1] == detail
    return result, case, lambda r: r[0] == "accepted" and bool(r[2])


def _draw(index: int) -> dict[str, Any]:
    """One draw in this process, shrunk when it fails (no deadline: ``--only`` replays a hang where Ctrl-C shows it)."""
    result, case, same = _first(index)
    if same is not None:
        result["repro"] = shrink(case, _STATE["catalog"], _STATE["workdir"], same).repro()
    return result


def _serve(conn: Any, seed: int) -> None:
    """A worker's loop (``fuzzpool`` protocol): the parent keeps the deadlines and kills this process on overrun."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it kills the workers
    _init(seed)
    conn.send(("ready",))
    while (index := conn.recv()) is not None:
        result, case, same = _first(index)
        if same is None:
            conn.send(("result", result))
            continue
        conn.send(("result", {**result, "follow_up": True}))  # counted even if the shrink overruns
        conn.send(("final", {**result, "repro": shrink(case, _STATE["catalog"], _STATE["workdir"], same).repro()}))


def _replay(seed: int, index: int) -> dict[str, Any]:
    """How to rerun a draw the run could not finish, and its case, drawn here in the parent."""
    if "values" not in _STATE:
        _init(seed)
    return {
        "replay": f"python bench/fuzz.py --seed {seed} --only {index}",
        "repro": fuzzgen.draw(_STATE["values"], seed, index).repro(),
    }


RETRY_FACTOR = 3


def _supervised(indices: range, seed: int, jobs: int, timeout: float) -> Any:
    """Draws on worker processes. One that overran is retried once, with ``RETRY_FACTOR`` × the limit: a draw only
    slow on a loaded machine then finishes (reported as slow); one that overruns twice is a hang (``timeout``)."""

    def limits(item: float) -> fuzzpool.Limits:
        return fuzzpool.Limits(item=item, follow_up=item * 10, start=max(120.0, item * 6))

    first_try: dict[int, float] = {}
    for r in fuzzpool.run(indices, jobs, _serve, (seed,), limits(timeout)):
        if r["outcome"] == "timeout":
            first_try[r["index"]] = r["seconds"]
        else:
            yield r
    if first_try:
        for r in fuzzpool.run(sorted(first_try), jobs, _serve, (seed,), limits(timeout * RETRY_FACTOR)):
            yield {**r, "first_try_seconds": first_try[r["index"]]}


def fuzz(
    draws: int, seed: int = 0, jobs: int = 2, timeout: float = 20.0, start: int = 0, quiet: bool = False
) -> dict[str, Any]:
    """Run ``draws`` draws (indices ``start`` …) on ``jobs`` worker processes; return the summary.

    Each draw has ``timeout`` seconds, measured in this process: an overrunning worker is killed and restarted, and
    the draw is retried after the run (``_supervised``); a second overrun counts it as timed out. ``jobs=0`` runs the
    draws in this process, without a deadline (tests, ``--only``).
    """
    began = time.perf_counter()
    indices = range(start, start + draws)
    if jobs <= 0:
        _init(seed)
        results: Any = map(_draw, indices)
    else:
        results = _supervised(indices, seed, jobs, timeout)
    counts: collections.Counter[str] = collections.Counter()
    crashes: dict[str, dict[str, Any]] = {}
    unsafe: dict[str, dict[str, Any]] = {}
    accepted_paths: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    timeouts: list[dict[str, Any]] = []
    slow: list[dict[str, Any]] = []
    slowest = (0.0, -1)
    try:
        for n, r in enumerate(results, 1):
            counts[r["outcome"]] += 1
            if "first_try_seconds" in r:
                tries = {
                    "index": r["index"],
                    "first_try_seconds": round(r["first_try_seconds"], 1),
                    "seconds": round(r["seconds"], 1),
                }
                (timeouts if r["outcome"] == "timeout" else slow).append({**tries, **_replay(seed, r["index"])})
                if r["outcome"] == "timeout":
                    continue
            elif r.get("worker_died"):  # no reproduction came back: drawn again here
                r.update(repro=_replay(seed, r["index"])["repro"], kinds=[], paths=[])
            kinds.update(r["kinds"])
            slowest = max(slowest, (r["seconds"], r["index"]))
            if r["outcome"] == "accepted":
                accepted_paths.update(r["paths"])
            if r["outcome"] == "crash":
                entry = crashes.setdefault(r["detail"], {"count": 0, "index": r["index"], "repro": r["repro"]})
                entry["count"] += 1
            if r.get("violations"):
                counts["unsafe"] += 1
                key = re.sub(r"\d+", "N", r["violations"][0].split(": ", 1)[-1])[:100]  # without the resource name
                entry = unsafe.setdefault(
                    key, {"count": 0, "index": r["index"], "violations": r["violations"][:5], "repro": r["repro"]}
                )
                entry["count"] += 1
            if not quiet and n % 1000 == 0:
                print(
                    f"  {n:,}/{draws:,} draws, {time.perf_counter() - began:.0f} s: {dict(counts)}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:  # stops and kills the workers even when this loop fails
        getattr(results, "close", lambda: None)()
    wall = time.perf_counter() - began
    from blueprints.architectures import profile_models
    from blueprints.profile.parse import leaf_paths

    return {
        "seed": seed,
        "draws": draws,
        "accepted": counts["accepted"],
        "rejected": counts["rejected"],
        "crashes": counts["crash"],
        "distinct_crashes": len(crashes),
        "timeouts": len(timeouts),
        "slow": len(slow),
        "unsafe": counts["unsafe"],
        "distinct_unsafe": len(unsafe),
        "wall_seconds": round(wall, 1),
        "draws_per_second": round(draws / wall, 1) if wall else None,
        "slowest_draw": {"seconds": round(slowest[0], 2), "index": slowest[1]},
        "paths_never_accepted_mutated": sorted(set(leaf_paths(profile_models())) - set(accepted_paths)),
        "mutation_kinds": dict(sorted(kinds.items())),
        "crash_details": crashes,
        "unsafe_details": unsafe,
        "timeout_details": sorted(timeouts, key=lambda t: t["index"]),
        "slow_details": sorted(slow, key=lambda t: t["index"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--timeout",
        type=float,
        default=20.0,
        help=(
            "seconds one draw may take (measured by the parent) before "
            "its worker is killed and the draw counts as timed out"
        ),
    )
    parser.add_argument("--only", type=int, help="run the one draw with this index and print its reproduction")
    parser.add_argument("--json", type=Path, help="also write the full summary (with reproductions) to this file")
    args = parser.parse_args(argv)
    if args.only is not None:
        summary = fuzz(1, args.seed, 0, args.timeout, start=args.only, quiet=True)
        case = fuzzgen.draw(_STATE["values"], args.seed, args.only)
        print(json.dumps({"repro": case.repro(), "summary": summary}, indent=2, ensure_ascii=False, default=str))
        return 1 if summary["crashes"] or summary["unsafe"] else 0
    summary = fuzz(args.draws, args.seed, args.jobs, args.timeout)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=True, default=str), encoding="utf-8")
    for title, key in (("crash", "crash_details"), ("unsafe acceptance", "unsafe_details")):
        for what, entry in summary[key].items():
            print(f"\n{title} ×{entry['count']} (first: draw {entry['index']}): {what}")
            for line in entry.get("violations", []):
                print(f"    {line}")
            print("    repro: " + json.dumps(entry["repro"], ensure_ascii=True)[:1500])
    for entry in summary["slow_details"]:
        print(
            f"\nslow: draw {entry['index']} overran {args.timeout:g} s ({entry['first_try_seconds']} s, killed), then "
            f"finished in {entry['seconds']} s on its retry; replay: {entry['replay']}"
        )
    for entry in summary["timeout_details"]:
        print(
            f"\ntimed out (a hang): draw {entry['index']} overran {args.timeout:g} s and, retried, "
            f"{args.timeout * RETRY_FACTOR:g} s "
            f"({entry['first_try_seconds']} s and {entry['seconds']} s); its worker was killed each time"
        )
        print(f"    replay: {entry['replay']}")
        print("    repro: " + json.dumps(entry["repro"], ensure_ascii=True)[:1500])
    print(
        f"\nfuzz seed {summary['seed']}: {summary['draws']:,} draws, {summary['accepted']:,} accepted, "
        f"{summary['rejected']:,} rejected cleanly, "
        f"{summary['crashes']:,} crashes ({summary['distinct_crashes']} distinct), {summary['timeouts']:,} timed out "
        f"({summary['slow']} slow but finished on a retry), {summary['unsafe']:,} unsafe acceptances "
        f"({summary['distinct_unsafe']} distinct); {summary['wall_seconds']} "
        f"s wall, {summary['draws_per_second']} draws/s"
    )
    print(
        f"slowest draw: {summary['slowest_draw']}; paths never mutated in an accepted draw: "
        f"{summary['paths_never_accepted_mutated'] or 'none'}"
    )
    return 1 if summary["crashes"] or summary["unsafe"] or summary["timeouts"] else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
