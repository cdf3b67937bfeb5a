"""`make scan`: export every preset to Terraform JSON, scan each with checkov, and fail on any failed check that
scan/not-applicable.csv does not list with a reason; a canary with known violations must fail, proving the scan ran.

Usage: python scan/run.py [--checkov .venv-scan/bin/checkov] [--out build/scan] [--today 2026-12-01]
Run it with the project's Python (it calls `python -m blueprints.cli.main export terraform`); checkov lives in its own
virtualenv because it pins many libraries. Exit codes: 0 clean and the canary caught; 1 an unlisted failure, a scan
that ran no checks, or a canary that got through; 2 setup problem (checkov missing, bad not-applicable.csv).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
_CHECK_ID = re.compile(r"^CKV2?_[A-Z0-9]+_\d+$")


@dataclass(frozen=True)
class Waiver:
    """One not-applicable row: a check id, an fnmatch pattern over ``<tf_type>.<name>``, and why."""

    check_id: str
    resource: str
    reason: str

    def covers(self, check_id: str, address: str) -> bool:
        """Whether this row accepts a failure of ``check_id`` on ``address``."""
        return check_id == self.check_id and fnmatch.fnmatchcase(address, self.resource)


@dataclass
class Summary:
    """One directory's scan: how many checks ran, passed and failed, and which failures are listed or not."""

    passed: int = 0
    failed: int = 0
    check_ids: set[str] = field(default_factory=set)
    listed: list[tuple[str, str, str]] = field(default_factory=list)
    unlisted: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def ran(self) -> int:
        """Check results (one per check and resource), passed plus failed."""
        return self.passed + self.failed


def load_waivers(path: Path) -> list[Waiver]:
    """Read not-applicable.csv; a row without a well-formed check id, a pattern or a reason is refused."""
    waivers = []
    with path.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            check_id, resource, reason = (row.get(k, "") or "" for k in ("check_id", "resource", "reason"))
            if not _CHECK_ID.match(check_id.strip()) or not resource.strip() or not reason.strip():
                raise ValueError(
                    f"{path}:{line}: needs check_id (e.g. CKV_ALI_6), resource "
                    f"(pattern over <tf_type>.<name>) and a reason; got {row}"
                )
            waivers.append(Waiver(check_id.strip(), resource.strip(), reason.strip()))
    return waivers


def reports(raw: Any) -> list[dict[str, Any]]:
    """checkov's JSON output as a list of per-framework reports (it prints one object for one framework, a list
    for several, and a bare summary when it found nothing to scan)."""
    items = raw if isinstance(raw, list) else [raw]
    return [item for item in items if isinstance(item, dict) and "results" in item]


def address(result: dict[str, Any], document: dict[str, Any]) -> str:
    """``<tf_type>.<name>`` of a checkov result; terraform_json results say ``resource.<name>``, so the type is
    looked up in the exported document."""
    resource = str(result.get("resource", ""))
    head, _, name = resource.partition(".")
    types = document.get("resource", {})
    if head in types and name in types[head]:
        return resource
    owners = sorted(tf_type for tf_type, named in types.items() if name in named)
    return f"{owners[0]}.{name}" if len(owners) == 1 else resource


def summarize(raw: Any, document: dict[str, Any], waivers: list[Waiver]) -> Summary:
    """Compare one checkov run with the not-applicable list."""
    summary = Summary()
    for report in reports(raw):
        results = report["results"]
        for item in results.get("passed_checks", []):
            summary.passed += 1
            summary.check_ids.add(item["check_id"])
        for item in results.get("failed_checks", []):
            summary.failed += 1
            summary.check_ids.add(item["check_id"])
            where = address(item, document)
            waiver = next((w for w in waivers if w.covers(item["check_id"], where)), None)
            if waiver:
                summary.listed.append((item["check_id"], where, waiver.reason))
            else:
                summary.unlisted.append((item["check_id"], where, str(item.get("check_name", ""))))
    summary.listed.sort()
    summary.unlisted.sort()
    return summary


def line(label: str, summary: Summary) -> str:
    """The one-line figure per scanned directory."""
    return (
        f"{label}: checks ran {summary.ran} ({len(summary.check_ids)} distinct), passed {summary.passed}, "
        f"failed {summary.failed}, not applicable (listed) "
        f"{len(summary.listed)}, unlisted failures {len(summary.unlisted)}"
    )


def canary_verdict(summary: Summary, expected: frozenset[str]) -> list[str]:
    """The expected check ids the canary's scan did NOT report as unlisted failures (empty: the canary was caught)."""
    caught = {check for check, _, _ in summary.unlisted}
    return sorted(expected - caught)


def _checkov(checkov: str, directory: Path) -> Any:
    # --skip-download: no call to Prisma Cloud (offline, and the result must not depend on a remote service).
    done = subprocess.run(
        [checkov, "-d", str(directory), "--framework", "terraform_json", "-o", "json", "--skip-download"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"checkov failed on {directory} (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout)


def _export(preset: str, directory: Path, today: str) -> tuple[dict[str, Any], str]:
    """The preset's Terraform JSON (with --cloud-only: a kubernetes-pool plan's alicloud resources, its Kubernetes
    objects left out) and what the export left out (``N Kubernetes objects left out: …``; empty when nothing)."""
    cmd = [
        sys.executable,
        "-m",
        "blueprints.cli.main",
        "export",
        "terraform",
        preset,
        "--cloud-only",
        "--out",
        str(directory),
        "--today",
        today,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"export of {preset} failed (exit {done.returncode}): {done.stderr.strip()}")
    loaded: dict[str, Any] = json.loads((directory / "main.tf.json").read_text(encoding="utf-8"))
    return loaded, left_out_of(done.stdout)


def left_out_of(export_output: str) -> str:
    """The export's own words on what it left out (``N Kubernetes objects left out: …``), or '' when it wrote all."""
    _, found, rest = export_output.partition("cloud side only, ")
    return rest.strip() if found else ""


def main(argv: list[str] | None = None) -> int:
    """Export, scan, compare, print the figures; the exit code says whether the scan is clean."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkov", default=str(ROOT / ".venv-scan" / "bin" / "checkov"))
    parser.add_argument("--out", default=str(ROOT / "build" / "scan"))
    parser.add_argument("--today", default="2026-12-01", help="pinned so the exports are reproducible")
    parser.add_argument("--canary-preset", default="medical-imaging")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from blueprints.profile.stackconfig import preset_names

    sys.path.insert(0, str(HERE))
    from canary import EXPECTED_FAILURES, inject

    if not Path(args.checkov).exists():
        print(
            f"error: no checkov at {args.checkov}; run `make scan` (it creates .venv-scan from scan/requirements.txt)",
            file=sys.stderr,
        )
        return 2
    try:
        waivers = load_waivers(HERE / "not-applicable.csv")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    bad = 0
    used: set[Waiver] = set()
    documents: dict[str, dict[str, Any]] = {}
    for preset in preset_names():
        directory = out / preset
        documents[preset], skipped = _export(preset, directory, args.today)
        summary = summarize(_checkov(args.checkov, directory), documents[preset], waivers)
        print(line(preset, summary))
        if skipped:
            # Named, never silent: checkov saw the cloud side only; the guardrails check the Kubernetes objects.
            print(f"  not scanned (cloud side only): {skipped}")
        used.update(w for w in waivers for check, where, _ in summary.listed if w.covers(check, where))
        for check, where, name in summary.unlisted:
            print(f"  UNLISTED {check} {where}: {name}")
        if summary.ran == 0:
            print("  the scan ran no checks: is the export still Terraform JSON checkov can read?")
        bad += len(summary.unlisted) + (summary.ran == 0)
    canary_dir = out / "canary"
    canary_dir.mkdir(parents=True, exist_ok=True)
    canary_document = inject(documents[args.canary_preset])
    (canary_dir / "main.tf.json").write_text(
        json.dumps(canary_document, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    canary = summarize(_checkov(args.checkov, canary_dir), canary_document, waivers)
    missed = canary_verdict(canary, EXPECTED_FAILURES)
    print(line("canary", canary))
    print(f"  canary failures: {', '.join(f'{c} {w}' for c, w, _ in canary.unlisted) or 'none'}")
    if missed:
        print(f"  CANARY NOT CAUGHT: expected {', '.join(missed)} to fail; the scan is not checking what it claims")
        bad += 1
    for waiver in waivers:
        if waiver not in used:
            print(f"  note: not-applicable row {waiver.check_id} {waiver.resource} matched nothing (stale?)")
    print("scan: OK" if not bad else f"scan: FAILED ({bad} problem(s))")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
