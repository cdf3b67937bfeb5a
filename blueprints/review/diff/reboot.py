"""Updates that Pulumi calls "update" but that reboot a running node: the diff's other downtime risks.

An ``ecs.Instance`` whose user data changes is updated in place and rebooted by the provider, so a new aitrain
release (a new boot script) reboots every per-node instance at the next `pulumi up`. Which (type, input) does this is
data, ``blueprints/data/rebooting_updates.csv``, each row with its source. A node whose image also changes is counted
once, as re-imaged (``blueprints.review.diff.reimage``). Pure: no Pulumi.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from blueprints.core.errors import Problem, UserInputError
from blueprints.core.tokens import short_type
from blueprints.kinds import kind_of_short_type
from blueprints.review.diff.reimage import Reimage
from blueprints.review.guardrails.network import LOGIN_TAG

DATA_FILE = Path(__file__).parents[2] / "data" / "rebooting_updates.csv"
_COLUMNS = ("type", "input", "what_happens", "source")


@dataclass(frozen=True)
class Reboot:
    """One node that `pulumi up` updates in place and reboots, and why."""

    resource: str
    type: str
    inputs: tuple[str, ...]
    login: bool
    what_happens: str

    def message(self) -> str:
        """One line: which inputs change and what the provider does."""
        return f"reboots ({', '.join(self.inputs)} changed): {self.what_happens}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of one reboot."""
        return {
            "resource": self.resource,
            "type": self.type,
            "inputs": list(self.inputs),
            "login_node": self.login,
            "message": self.message(),
        }


def reboots(
    changes: Sequence[Any],
    after: Mapping[tuple[str, str], Mapping[str, Any]],
    reimage: Reimage,
    table: Mapping[tuple[str, str], str] | None = None,
) -> tuple[Reboot, ...]:
    """The updated resources whose changed inputs reboot them (``after``: the new plan's resources)."""
    table = rebooting_updates() if table is None else table
    reimaged = {(c.type, c.resource) for c in reimage.downtime}
    out = []
    for change in changes:
        short = short_type(change.type)
        if change.action != "update" or (short, change.name) in reimaged:
            continue
        hits = tuple(sorted(key for key in change.inputs if (short, key) in table))
        if not hits:
            continue
        inputs = (after.get((change.type, change.name)) or {}).get("inputs") or {}
        login = (inputs.get("tags") or {}).get("aitrain-component") == LOGIN_TAG
        out.append(Reboot(change.name, short, hits, login, table[(short, hits[0])]))
    return tuple(out)


def headline(found: Sequence[Reboot]) -> str:
    """``reboots 4 nodes`` (with the login node named); empty when nothing reboots."""
    if not found:
        return ""
    login = sum(1 for r in found if r.login)
    n = len(found)
    what = f"reboots {n} node{'' if n == 1 else 's'}"
    return what + (f" ({n - login} GPU node{'' if n - login == 1 else 's'}, the login node)" if login else "")


def load_rebooting_updates(path: Path = DATA_FILE) -> dict[tuple[str, str], str]:
    """Read and check ``rebooting_updates.csv``: (short type, input) → what happens; bad rows reported at once."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserInputError(
            "invalid rebooting-update data", [Problem(str(path), None, f"cannot be read ({exc.strerror})")]
        ) from None
    reader = csv.DictReader(text.splitlines())
    if tuple(reader.fieldnames or ()) != _COLUMNS:
        raise UserInputError(
            "invalid rebooting-update data",
            [Problem(f"{path}: header", reader.fieldnames, f"must be {','.join(_COLUMNS)}")],
        )
    out: dict[tuple[str, str], str] = {}
    problems: list[Problem] = []
    for row in reader:
        where = f"{path}: line {reader.line_num}"
        if None in row or any(v is None or not v.strip() for v in row.values()):
            problems.append(Problem(where, row, f"must have {len(_COLUMNS)} non-empty columns"))
        elif kind_of_short_type(row["type"]) is None:
            problems.append(Problem(f"{where}: type", row["type"], "is not a resource kind of blueprints/kinds/"))
        elif (row["type"], row["input"]) in out:
            problems.append(Problem(f"{where}: input", row["input"], "duplicates an earlier row"))
        else:
            out[(row["type"], row["input"])] = row["what_happens"]
    if problems:
        raise UserInputError("invalid rebooting-update data", problems)
    return out


@lru_cache(maxsize=1)
def rebooting_updates() -> dict[tuple[str, str], str]:
    """The shipped table (loaded once)."""
    return load_rebooting_updates()
