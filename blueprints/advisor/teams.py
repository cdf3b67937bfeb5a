"""The yearly cost split by team: teams sharing one GPU pool each hold a GPU quota (``teams:`` in the job, team name →
GPUs, the nominal quota a Kueue queue of the kubernetes-pool would hold), and each pays its share of the year.

**Share.** A team's share is its GPUs ÷ the GPUs all the teams hold, so the whole bill is charged to the teams and the
rows add up to the yearly cost a finance reviewer reconciles with the invoice. GPUs of the pool that no team holds are
named, not charged to an "unassigned" line: the recommended pool scales with the jobs that run (idle quota bills
nothing), and a cost line nobody owns is one nobody pays. Teams holding more GPUs than the chosen pool has are an
error (``check_fits``), raised once the pool is known: the job is validated before any pool is chosen.

**Rounding.** The split is of the yearly total as the JSON shows it (``yearly_cost.total_cny_per_year``, to the
cent), in whole cents, by largest remainder (Hamilton): each team gets the floor of its exact quota, and the cents
left over go one each to the largest remainders (ties to the team listed first). So the teams' amounts add up to the
total exactly, each is within a cent of its exact share, and a team with more GPUs never pays less.

**Unknown parts** (an unpriced compute, the NAT gateway's usage fee …) are not in the total, so they are not split:
each team's share of them is unknown, and the split names them — never ¥0.

Example (``examples/team-llm-pool.yaml`` with ``teams: {research: 24, product: 16, platform: 8}``, the shipped
catalog): the pool is 6 × ecs.gn7-c13g1.26xlarge = 48 GPUs and the year's known total ¥1,682,445.29 = 168,244,529
cents. Exact shares: research 84,122,264.5 cents (24/48), product 56,081,509.67 (16/48), platform 28,040,754.83
(8/48); the floors leave 2 cents, which go to the largest remainders, platform (0.83) and product (0.67): research
¥841,222.64, product ¥560,815.10, platform ¥280,407.55, ¥1,682,445.29 in all (tests/advisor/test_teams.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Mapping, Sequence

from blueprints.core.errors import FieldError, Problem, UserInputError

# A Kubernetes DNS-1123 label: a team name becomes a LocalQueue / ClusterQueue name and a namespace label value.
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_PATTERN = "^" + _LABEL.pattern + "$"
LABEL_MAX = 63
_EXAMPLE = "teams: {research: 24, product: 16}"


def check_teams(value: Any) -> Any:
    """The job's ``teams`` as given (None, or a mapping of team name to GPUs), whole floats made ints; a ``FieldError``
    naming the team (``teams.<name>``), or a ``ValueError`` about ``teams`` itself, for the first problem."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(
            "teams must be a mapping of team name to its GPUs (the team's GPU quota of the shared pool), "
            f"e.g. {_EXAMPLE}",
        )
    if not value:
        raise ValueError(f"teams names no team: give at least one (e.g. {_EXAMPLE}) or leave teams out")
    out: dict[str, int] = {}
    for name, gpus in value.items():
        if not isinstance(name, str) or len(name) > LABEL_MAX or not _LABEL.fullmatch(name):
            raise FieldError(
                str(name),
                name,
                f"a team name must be a DNS-1123 label (it names the team's queue in Kubernetes): lowercase letters, "
                f"digits and '-', starting and ending with a letter or digit, 1–{LABEL_MAX} characters, "
                f"e.g. {_EXAMPLE}",
            )
        if isinstance(gpus, float) and gpus.is_integer():
            gpus = int(gpus)
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
            raise FieldError(
                name,
                gpus,
                f"a team's GPUs (its quota of the shared pool's GPUs) must be a positive whole number: 1, 2, …; "
                f"e.g. {_EXAMPLE}",
            )
        out[name] = gpus
    return out


def split_cents(total_cents: int, weights: Sequence[int]) -> list[int]:
    """``total_cents`` split in proportion to ``weights`` (positive) by largest remainder: the parts add up to the
    total exactly, each is the floor or the ceiling of its exact quota, and ties go to the earlier weight."""
    if total_cents < 0 or not weights or any(w < 1 for w in weights):
        raise ValueError(f"split_cents needs cents ≥ 0 and positive weights, not {total_cents}, {list(weights)}")
    whole = sum(weights)
    parts = [total_cents * w // whole for w in weights]
    remainders = [total_cents * w % whole for w in weights]
    left = total_cents - sum(parts)
    for i in sorted(range(len(weights)), key=lambda i: (-remainders[i], i))[:left]:
        parts[i] += 1
    return parts


def to_cents(amount: float) -> int:
    """A CNY amount as whole cents, rounded as the JSON rounds it (``round(x, 2)``), then exactly."""
    return int((Decimal(repr(round(amount, 2))) * 100).to_integral_value(rounding=ROUND_HALF_UP))


def cny(cents: int) -> float:
    """Whole cents as the JSON number of CNY (its text has at most two decimals)."""
    return float(Decimal(cents) / 100)


def yuan(cents: int) -> str:
    """¥1,234.56 (to the cent: the rows must visibly add up to the total)."""
    sign = "-" if cents < 0 else ""
    return f"{sign}¥{abs(cents) // 100:,}.{abs(cents) % 100:02d}"


@dataclass(frozen=True)
class TeamShare:
    """One team's GPUs, its share of the teams' GPUs and its part of the known yearly total (whole cents)."""

    team: str
    gpus: int
    cents: int


@dataclass(frozen=True)
class TeamSplit:
    """The known yearly total split by team, the GPUs the teams and the pool hold, and what is not split (unknown)."""

    shares: tuple[TeamShare, ...]
    total_cents: int
    pool_gpus: int
    unknown: tuple[str, ...]

    @property
    def team_gpus(self) -> int:
        """The GPUs all the teams hold."""
        return sum(s.gpus for s in self.shares)

    def basis(self) -> str:
        """How the split was made, in one sentence."""
        held = self.team_gpus
        text = (
            f"the yearly cost {yuan(self.total_cents)} split by each team's GPUs ÷ the {held:,} GPUs the teams hold "
            f"(the pool has up to {self.pool_gpus:,})"
        )
        if held < self.pool_gpus:
            text += (
                f"; the {self.pool_gpus - held:,} GPUs no team holds are charged to no one: the teams pay the whole "
                "bill in proportion"
            )
        return text + "; cents by largest remainder, so the teams' amounts add up to the total exactly"

    def unknown_text(self) -> str | None:
        """The parts not split because their price is unknown (None when every part is priced)."""
        if not self.unknown:
            return None
        return f"unknown, so not split (each team's share of them is unknown, not ¥0): {', '.join(self.unknown)}"

    def rows(self) -> list[list[str]]:
        """Table rows: team, GPUs, share, CNY a year; then the total."""
        held = self.team_gpus
        out = [[s.team, f"{s.gpus:,}", f"{s.gpus / held:.1%}", yuan(s.cents)] for s in self.shares]
        out.append(["total", f"{held:,}", f"{1:.1%}", yuan(self.total_cents)])
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON form (``yearly_cost.by_team``): amounts in CNY to the cent, adding up to ``total_cny_per_year``."""
        held = self.team_gpus
        return {
            "basis": "gpus",
            "team_gpus": held,
            "pool_gpus": self.pool_gpus,
            "unassigned_gpus": max(self.pool_gpus - held, 0),
            "total_cny_per_year": cny(self.total_cents),
            "rounding": "largest remainder on cents",
            "teams": [
                {"team": s.team, "gpus": s.gpus, "share": round(s.gpus / held, 6), "cny_per_year": cny(s.cents)}
                for s in self.shares
            ],
            "unknown": list(self.unknown),
            "text": "; ".join(t for t in (self.basis(), self.unknown_text()) if t),
        }


HEADERS = ["team", "GPUs", "share", "CNY/year"]
NUMERIC = (1, 2, 3)


def split_by_team(
    teams: Sequence[tuple[str, int]], total_cny: float, pool_gpus: int, unknown: Sequence[str] = ()
) -> TeamSplit:
    """``total_cny`` (the known yearly total) split by each team's GPUs ÷ the teams' GPUs, in the teams' order."""
    total = to_cents(total_cny)
    parts = split_cents(total, [gpus for _, gpus in teams])
    shares = tuple(TeamShare(name, gpus, part) for (name, gpus), part in zip(teams, parts, strict=True))
    return TeamSplit(shares, total, pool_gpus, tuple(unknown))


def check_fits(teams: Mapping[str, int] | None, pool_gpus: int, pool: str, what: str, grow: str) -> None:
    """Exit 2 (``UserInputError``) when the teams hold more GPUs than the chosen pool has.

    ``pool`` says how the pool is made (``6 nodes × 8 GPUs …``), ``what`` names it (``the pool the recommendation
    picks``) and ``grow`` says how to make it larger."""
    if not teams:
        return
    held = sum(teams.values())
    if held <= pool_gpus:
        return
    raise UserInputError(
        "invalid job: the teams hold more GPUs than the pool has",
        [
            Problem(
                "teams",
                dict(teams),
                f"the teams' GPUs sum to {held:,}, more than the {pool_gpus:,} GPUs of {what} ({pool}); allowed: "
                f"team GPUs that sum to at most {pool_gpus:,}",
                f"lower the teams' GPUs, or {grow}",
            )
        ],
    )
