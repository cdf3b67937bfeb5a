"""The preflight report: needs + checks → JSON (``aitrain.preflight/v1``) or text, and the exit code."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from blueprints.preflight.checks import KIND_NAMES, OK, SHORT, STATUSES, UNKNOWN, WARN, Check
from blueprints.preflight.needs import Needs

SCHEMA = "aitrain.preflight/v1"
EXIT_OK, EXIT_SHORT, EXIT_BAD_INPUT, EXIT_NO_CREDENTIALS, EXIT_UNANSWERED = 0, 1, 2, 3, 4
VERDICTS = {EXIT_OK: "ok", EXIT_SHORT: "short", EXIT_UNANSWERED: "unanswered"}


@dataclass(frozen=True)
class Report:
    """What the plan needs, what the cloud answered, and where it falls short.

    ``accepted`` names the kinds of check (``checks.KIND_NAMES``) whose unanswered results the user accepted.
    """

    needs: Needs
    checks: tuple[Check, ...]
    credentials: str
    accepted: tuple[str, ...] = ()
    # What to do when something is short: the profile's next fallback and the command that pins it, or how to add one.
    next_step: str = ""

    def count(self, status: str) -> int:
        """How many checks ended with ``status`` (ok / warn / short / unknown)."""
        return sum(1 for c in self.checks if c.status == status)

    def unanswered(self, *, accepted: bool) -> list[Check]:
        """The unanswered checks the user accepted by name (``accepted=True``) or not."""
        return [c for c in self.checks if c.status == UNKNOWN and (c.kind in self.accepted) == accepted]

    @property
    def exit_code(self) -> int:
        """1 when anything is short; else 4 when a check went unanswered and its kind was not accepted; else 0.

        A gate that checked nothing must not pass: an unanswered check is no evidence of capacity.
        """
        if self.count(SHORT):
            return EXIT_SHORT
        return EXIT_UNANSWERED if self.unanswered(accepted=False) else EXIT_OK

    @property
    def verdict(self) -> str:
        """ok | short | unanswered (the exit code in words)."""
        return VERDICTS[self.exit_code]

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form."""
        return {
            "schema": SCHEMA,
            "profile_name": self.needs.profile_name,
            "blueprint": self.needs.blueprint,
            "region": self.needs.region,
            "credentials": self.credentials,
            "needs": self.needs.to_dict(),
            "checks": [c.to_dict() for c in self.checks],
            "counts": {s: self.count(s) for s in STATUSES},
            "short": self.count(SHORT) > 0,
            "accepted_unanswered": list(self.accepted),
            "unanswered": {
                "accepted": [c.id for c in self.unanswered(accepted=True)],
                "blocking": [c.id for c in self.unanswered(accepted=False)],
            },
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "next_step": self.next_step if self.count(SHORT) else "",
        }

    def to_json(self) -> str:
        """Deterministic JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


_MARK = {OK: "ok", WARN: "WARN", SHORT: "SHORT", UNKNOWN: "??"}


def render_text(report: Report) -> str:
    """A terminal report: the needs, one line per check, and a verdict line."""
    n = report.needs
    lines = [
        f"preflight {n.profile_name} ({n.blueprint}) in {n.region}; credentials: {report.credentials}",
        "",
        "needs:",
    ]
    for g in n.compute:
        spot = f", {g.spot_strategy}" if g.spot else ""
        lines.append(
            f"  {g.instance_type} × {g.nodes} nodes in {', '.join(g.zones) or '(no zone)'} ({g.charge_type}{spot}): "
            f"{_num(g.vcpus)} vCPUs, {_num(g.gpus)} GPUs  [{g.resource}]"
        )
    if n.storage is not None:
        s = n.storage
        lines.append(
            f"  {s.kind} file system ({s.file_system_type} {s.storage_type}, "
            f"{s.protocol_type}) in {s.zone}  [{s.resource}]"
        )
    lines.append(f"  totals: {n.vcpus(spot=False)} pay-as-you-go vCPUs, {n.vcpus(spot=True)} spot vCPUs, {n.gpus} GPUs")
    lines += ["", "checks:"]
    width = max((len(c.subject) for c in report.checks), default=0)
    for c in report.checks:
        lines.append(f"  {_MARK[c.status]:<5} {c.subject:<{width}}  {c.detail}")
    lines.append("")
    short, warn, unknown = report.count(SHORT), report.count(WARN), report.count(UNKNOWN)
    blocking, accepted = report.unanswered(accepted=False), report.unanswered(accepted=True)
    if short:
        lines.append(f"SHORT: {short} check(s) fall short (exit 1); {warn} warning(s), {unknown} unanswered.")
        if report.next_step:
            lines.append(f"Next: {report.next_step}.")
    elif blocking:
        kinds = ",".join(k for k in KIND_NAMES if any(c.kind == k for c in blocking))
        lines.append(
            f"UNANSWERED: {len(blocking)} check(s) the cloud did not answer (exit 4), so nothing proves the plan fits; "
            f"{report.count(OK)} ok, {warn} warning(s). Fix the cause on each "
            f"?? line, or accept them by name: --accept-unanswered {kinds}"
        )
    else:
        tail = f", accepted by name ({', '.join(report.accepted)})" if accepted else ""
        lines.append(f"nothing short: {report.count(OK)} ok, {warn} warning(s), {unknown} unanswered{tail}.")
    if unknown:
        lines.append(
            "Unanswered checks are not proof of capacity: see their "
            "message (often a missing RAM permission or no network)."
        )
    return "\n".join(lines) + "\n"


def _num(value: int | None) -> str:
    return "?" if value is None else str(value)
