"""What a changed node image does to running nodes, per resource kind: the diff's downtime risks.

A new ``imageId`` on an ``ecs.Instance`` is applied in place: the provider stops the instance, replaces its system disk
from the new image and starts it again, so `pulumi up` says only "update". An instance set is replaced (its nodes
deleted and launched again). A launch template, a scaling configuration or an ACK node pool changes only the nodes
created after it. Which kind does what is data, ``blueprints/data/image_changes.csv`` (each row with its source). A
type with a changed ``imageId`` that the table does not know is counted as a downtime risk of unknown size: the safe
side. Pure: no Pulumi.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from blueprints.core.errors import Problem, UserInputError
from blueprints.core.tokens import short_type
from blueprints.kinds import kind_of_short_type
from blueprints.review.guardrails.network import LOGIN_TAG

IMAGE_INPUT = "imageId"
DATA_FILE = Path(__file__).parents[2] / "data" / "image_changes.csv"
_COLUMNS = ("type", "effect", "nodes", "what_happens", "source")
# reimage: running nodes stop and get a new system disk; replace: they are deleted and launched again; new_nodes_only:
# nothing running changes, only nodes created afterwards boot the new image.
EFFECTS = ("reimage", "replace", "new_nodes_only")
DOWNTIME_EFFECTS = ("reimage", "replace", "unknown")
# How many running nodes one resource of the kind holds: one, its ``amount`` input, or none (it launches nodes later).
_NODE_COUNTS = ("1", "amount", "")
_REPLACING_ACTIONS = ("replace", "replace-delete-first")


@dataclass(frozen=True)
class ImageBehaviour:
    """What a kind does with a changed image: its effect, how many running nodes one resource holds, with its source."""

    effect: str
    nodes: str
    what_happens: str
    source: str


@dataclass(frozen=True)
class ImageChange:
    """One resource whose image changes: what happens to its running nodes (``nodes``: how many stop; None unknown)."""

    resource: str
    type: str
    effect: str  # one of EFFECTS, or "unknown" (a type the table does not know)
    nodes: int | None
    old: Any
    new: Any
    login: bool
    what_happens: str

    @property
    def downtime(self) -> bool:
        """Whether running nodes stop: a re-image in place, a replacement, or an effect nobody recorded."""
        return self.effect in DOWNTIME_EFFECTS

    def summary(self) -> str:
        """What happens to the running nodes, without the images: ``stops and re-images 1 node in place``."""
        if self.effect == "new_nodes_only":
            return "running nodes keep their image"
        if self.effect == "unknown":
            return f"may stop and re-image its nodes ({self.type} is not in blueprints/data/image_changes.csv)"
        what = "the login node" if self.login else _count(self.nodes)
        how = "in place" if self.effect == "reimage" else "by replacing them" if self.nodes != 1 else "by replacing it"
        return f"stops and re-images {what} {how}"

    def message(self) -> str:
        """One line: what `pulumi up` does to this resource's nodes and why, with both images."""
        image = f"imageId {self.old} → {self.new}"
        if self.effect == "new_nodes_only":
            return f"{image}: {self.what_happens}"
        if self.effect == "unknown":
            return f"{image}: {self.summary()}"
        return f"{self.summary()} ({image}): {self.what_happens}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of one image change."""
        return {
            "resource": self.resource,
            "type": self.type,
            "effect": self.effect,
            "nodes": self.nodes,
            "login_node": self.login,
            "image": {"old": self.old, "new": self.new},
            "downtime": self.downtime,
            "message": self.message(),
        }


@dataclass(frozen=True)
class Reimage:
    """Every image change of a diff; the ones that stop running nodes are its downtime risks."""

    changes: tuple[ImageChange, ...] = ()

    @property
    def downtime(self) -> tuple[ImageChange, ...]:
        """The image changes that stop running nodes."""
        return tuple(c for c in self.changes if c.downtime)

    @property
    def nodes(self) -> int | None:
        """How many running nodes stop and are re-imaged (None: at least one resource of unknown size)."""
        counts = [c.nodes for c in self.downtime]
        return None if any(n is None for n in counts) else sum(n for n in counts if n is not None)

    def headline(self) -> str:
        """``stops and re-images 3 nodes (2 GPU nodes, the login node)``; empty when no running node stops."""
        if not self.downtime:
            return ""
        login = sum(1 for c in self.downtime if c.login)
        nodes = self.nodes
        if nodes is None:
            return "stops and re-images nodes (how many is unknown: see the downtime risks)"
        parts = [_count(nodes - login, "GPU node")] if nodes - login else []
        parts += ["the login node"] if login else []
        return f"stops and re-images {_count(nodes)}" + (f" ({', '.join(parts)})" if login else "")

    def risks(self) -> list[str]:
        """The downtime risks, prefixed by their resource (as ``PlanDiff.risks`` lists data risks)."""
        return [f"{c.resource}: {c.message()}" for c in self.downtime]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the count, the headline and every image change (downtime or not)."""
        return {
            "nodes": self.nodes,
            "headline": self.headline(),
            "changes": [c.to_dict() for c in self.changes],
        }


class _Change(Protocol):
    """What this module reads of a ``ResourceChange``."""

    @property
    def action(self) -> str:
        """One of compare.ACTIONS."""

    @property
    def type(self) -> str:
        """Pulumi type token."""

    @property
    def name(self) -> str:
        """Logical name."""

    @property
    def inputs(self) -> dict[str, tuple[Any, Any]]:
        """Changed inputs: key → (old, new)."""


def image_changes(
    changes: Sequence[_Change],
    after: Mapping[tuple[str, str], Mapping[str, Any]],
    table: Mapping[str, ImageBehaviour] | None = None,
) -> Reimage:
    """The image change of every changed resource whose ``imageId`` differs (``after``: the new plan's resources)."""
    table = image_behaviours() if table is None else table
    out = []
    for change in changes:
        if IMAGE_INPUT not in change.inputs or change.action not in ("update", *_REPLACING_ACTIONS):
            continue
        old, new = change.inputs[IMAGE_INPUT]
        resource = after.get((change.type, change.name)) or {}
        inputs = resource.get("inputs") or {}
        short = short_type(change.type)
        known = table.get(short)
        if known is None:
            effect, nodes, what = "unknown", None, ""
        else:
            effect, what = known.effect, known.what_happens
            nodes = _nodes(known.nodes, inputs)
            if change.action in _REPLACING_ACTIONS and effect == "reimage":
                # Replaced for another reason as well: a new instance, booted from the new image.
                effect, what = "replace", "deleted and created again from the new image (it is replaced anyway)"
        login = (inputs.get("tags") or {}).get("aitrain-component") == LOGIN_TAG
        out.append(ImageChange(change.name, short, effect, nodes, old, new, login, what))
    return Reimage(tuple(out))


def _nodes(rule: str, inputs: Mapping[str, Any]) -> int | None:
    if rule == "1":
        return 1
    if rule == "amount":
        amount = inputs.get("amount")
        return amount if isinstance(amount, int) and not isinstance(amount, bool) else None
    return 0


def _count(n: int | None, noun: str = "node") -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def load_image_behaviours(path: Path = DATA_FILE) -> dict[str, ImageBehaviour]:
    """Read and check ``image_changes.csv``; every bad row is reported at once (line, column, value, allowed)."""
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserInputError(
            "invalid image-change data", [Problem(str(path), None, f"cannot be read ({exc.strerror})")]
        ) from None
    reader = csv.DictReader(text.splitlines())
    if tuple(reader.fieldnames or ()) != _COLUMNS:
        raise UserInputError(
            "invalid image-change data",
            [Problem(f"{path}: header", reader.fieldnames, f"must be {','.join(_COLUMNS)}")],
        )
    out: dict[str, ImageBehaviour] = {}
    for row in reader:
        where = f"{path}: line {reader.line_num}"
        if None in row or any(v is None for v in row.values()):
            problems.append(
                Problem(where, row.get(None) or "(short row)", f"must have exactly {len(_COLUMNS)} columns")
            )
            continue
        row = {k: v.strip() for k, v in row.items()}
        if kind_of_short_type(row["type"]) is None:
            problems.append(Problem(f"{where}: type", row["type"], "is not a resource kind of blueprints/kinds/"))
        elif row["type"] in out:
            problems.append(Problem(f"{where}: type", row["type"], "duplicates an earlier row"))
        elif row["effect"] not in EFFECTS:
            problems.append(Problem(f"{where}: effect", row["effect"], f"must be one of {', '.join(EFFECTS)}"))
        elif row["nodes"] not in _NODE_COUNTS or (row["nodes"] == "") != (row["effect"] == "new_nodes_only"):
            problems.append(
                Problem(
                    f"{where}: nodes",
                    row["nodes"],
                    "must be 1 or amount for a kind whose running nodes stop, and empty for new_nodes_only",
                )
            )
        elif not (row["what_happens"] and row["source"]):
            problems.append(Problem(where, row, "what_happens and source are both required"))
        else:
            out[row["type"]] = ImageBehaviour(row["effect"], row["nodes"], row["what_happens"], row["source"])
    if problems:
        raise UserInputError("invalid image-change data", problems)
    return out


@lru_cache(maxsize=1)
def image_behaviours() -> dict[str, ImageBehaviour]:
    """The shipped table (loaded once)."""
    return load_image_behaviours()


def newer_image_effect(resources: Sequence[Any], table: Mapping[str, ImageBehaviour] | None = None) -> str:
    """What a newer image does to a plan's nodes at the next `pulumi up`, from the same table the diff reads:
    ``stops and re-images 2 nodes``, and/or that the nodes launched from then on boot the newer one.

    ``resources`` are planned resources (``type``, ``name`` and ``inputs`` attributes, or dicts with those keys).
    """
    table = image_behaviours() if table is None else table
    stopped: list[ImageChange] = []
    later = False
    for r in resources:
        token, name, inputs = (
            (r["type"], r["name"], r["inputs"]) if isinstance(r, Mapping) else (r.type, r.name, r.inputs)
        )
        if IMAGE_INPUT not in inputs:
            continue
        short = short_type(token)
        known = table.get(short)
        login = (inputs.get("tags") or {}).get("aitrain-component") == LOGIN_TAG
        if known is not None and known.effect == "new_nodes_only":
            later = True
            continue
        effect, nodes = ("unknown", None) if known is None else (known.effect, _nodes(known.nodes, inputs))
        stopped.append(ImageChange(name, short, effect, nodes, None, None, login, ""))
    headline = Reimage(tuple(stopped)).headline()
    if headline and later:
        return f"{headline}, and the nodes launched from then on boot it"
    if later:
        return "makes the nodes launched from then on boot it while the running ones keep theirs (one pool, two images)"
    return headline
