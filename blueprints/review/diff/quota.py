"""Kueue quota cuts in ``aitrain diff``: a team's ClusterQueue whose GPU quota shrinks, flagged when what the team
may use (its nominal quota plus what it may borrow) falls below one job of the stack's size.

Read from the plans alone: the ClusterQueues' ``spec.resourceGroups`` and the new plan's job size (its summary's
``nodes_per_job`` × ``gpus_per_node``). A running job larger than the new quota keeps running, but it
now counts as borrowing, and a pending job of another team that fits its own nominal quota may preempt it
(``reclaimWithinCohort``, kubernetes-sigs/kueue v0.19.2 site/content/en/docs/concepts/cluster_queue.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Iterator, Mapping

CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
GPU_RESOURCE = "nvidia.com/gpu"
# A Kubernetes quantity (the CRD's pattern): a number, then a decimal (k, M…), binary (Ki, Mi…) or exponent suffix.
# aitrain writes 1000 GPUs as "1k" (kueue.decimal_quantity).
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)([KMGTPE]i|[numkMGTPE])?")
_SCALE = {
    **{suffix: Fraction(1000) ** power for power, suffix in enumerate(("", "k", "M", "G", "T", "P", "E"))},
    **{suffix: Fraction(1000) ** -power for power, suffix in enumerate(("m", "u", "n"), start=1)},
    **{suffix: Fraction(1024) ** power for power, suffix in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), start=1)},
}


@dataclass(frozen=True)
class QuotaCut:
    """One ClusterQueue whose GPU quota shrinks."""

    resource: str
    queue: str
    old_gpus: int
    new_gpus: int
    borrowing_limit: int | None  # None: may borrow without limit
    job_gpus: int | None  # one job of the stack's size, when the plan says it

    @property
    def below_job(self) -> bool:
        """Whether the team can no longer hold one job of the stack's size (its quota plus what it may borrow)."""
        if self.job_gpus is None or self.borrowing_limit is None:
            return False  # job size unknown, or it may borrow the rest of the cohort without limit
        return self.new_gpus + self.borrowing_limit < self.job_gpus

    def message(self) -> str:
        """One sentence for the diff: the cut, and what it does to a job of the stack's size."""
        cut = f"ClusterQueue {self.queue}: GPU quota cut from {self.old_gpus} to {self.new_gpus}"
        if self.job_gpus is None:
            return cut
        may = "without limit" if self.borrowing_limit is None else f"up to {self.borrowing_limit} more"
        if self.below_job:
            return (
                f"{cut}, below one job of the stack's size ({self.job_gpus} GPUs) even with what it may borrow "
                f"({may}): such a job from this team is never admitted again, and one running now counts as "
                "borrowing, so another team reclaiming its quota may preempt it"
            )
        if self.new_gpus < self.job_gpus:
            return (
                f"{cut}, below one job of the stack's size ({self.job_gpus} GPUs): such a job runs only on borrowed "
                f"GPUs (it may borrow {may}), and another team reclaiming its quota may preempt it"
            )
        return cut


def quota_cuts(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[QuotaCut, ...]:
    """Every ClusterQueue in both plans whose nominal GPU quota is lower in ``new``, by resource name."""
    before = {r["name"]: r for r in _queues(old)}
    job_gpus = _job_gpus(new)
    cuts = []
    for resource in _queues(new):
        previous = before.get(resource["name"])
        if previous is None:
            continue
        old_gpus, _ = _gpu_quota(previous)
        new_gpus, limit = _gpu_quota(resource)
        if old_gpus is not None and new_gpus is not None and new_gpus < old_gpus:
            queue = str(((resource.get("inputs") or {}).get("metadata") or {}).get("name") or resource["name"])
            cuts.append(QuotaCut(resource["name"], queue, old_gpus, new_gpus, limit, job_gpus))
    return tuple(cuts)


def _queues(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for resource in plan.get("resources") or ():
        if (
            isinstance(resource, dict)
            and resource.get("type") == CLUSTER_QUEUE
            and isinstance(resource.get("name"), str)
        ):
            yield resource


def _gpu_quota(resource: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The queue's nominal GPU quota, summed over its flavors (None: no GPU resource, or a quota that is not a
    quantity), and its GPU borrowing limit (None: no limit, as soon as one flavor sets none or sets it null)."""
    spec = (resource.get("inputs") or {}).get("spec") or {}
    gpus = [
        quota
        for group in spec.get("resourceGroups") or ()
        for flavor in (group or {}).get("flavors") or ()
        for quota in (flavor or {}).get("resources") or ()
        if isinstance(quota, dict) and quota.get("name") == GPU_RESOURCE
    ]
    if not gpus:
        return None, None
    return _total(_count(q.get("nominalQuota")) for q in gpus), _total(_count(q.get("borrowingLimit")) for q in gpus)


def _total(counts: Iterable[int | None]) -> int | None:
    """The sum of the counts; None when one is None."""
    total = 0
    for count in counts:
        if count is None:
            return None
        total += count
    return total


def _count(value: Any) -> int | None:
    """A Kubernetes quantity of whole devices (``8``, ``"8"``, ``"1k"``), rounded down; None when absent or not one
    (None, ``True``, a list: what ``str`` makes of them is no quantity)."""
    match = _QUANTITY.fullmatch(str(value))
    if match is None:
        return None
    number, suffix = match.groups()
    return math.floor(Fraction(number) * _SCALE[suffix or ""])


def _job_gpus(plan: Mapping[str, Any]) -> int | None:
    summary = plan.get("summary") or {}
    nodes, per_node = summary.get("nodes_per_job"), summary.get("gpus_per_node")
    if not isinstance(nodes, int) or not isinstance(per_node, int) or isinstance(nodes, bool) or nodes < 1:
        return None
    return nodes * per_node if per_node > 0 and not isinstance(per_node, bool) else None
