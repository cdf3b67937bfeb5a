"""When the cluster-wide all-reduce is slow: pair tests that name the node(s) every slow pair has in common.

The nodes are put on a ring and each node is tested with both its neighbours (two different partners), in rounds
of disjoint pairs so a round's pairs run at once. A node whose every pair is slow is a suspect: with one bad node
on 3 or more nodes that is exactly the bad node (its two partners each have one fast pair). Two nodes cannot be
told apart: both are named, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

Pair = tuple[str, str]


@dataclass(frozen=True)
class Narrowing:
    """The suspects, and why (one sentence for the report)."""

    suspects: tuple[str, ...]
    reason: str


def plan_pairs(nodes: Sequence[str]) -> list[list[Pair]]:
    """Rounds of disjoint pairs covering each node's two ring neighbours; [] for fewer than 2 nodes."""
    n = len(nodes)
    if n < 2:
        return []
    if n == 2:
        return [[(nodes[0], nodes[1])]]
    edges = [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    even = [e for i, e in enumerate(edges) if i % 2 == 0 and not (n % 2 and i == n - 1)]
    odd = [e for i, e in enumerate(edges) if i % 2 == 1]
    rounds = [even, odd]
    if n % 2:  # an odd ring's closing edge shares a node with both rounds
        rounds.append([edges[-1]])
    return rounds


def suspects(results: Mapping[Pair, bool]) -> Narrowing:
    """The nodes every tested pair of which was slow (``results[pair]`` is True when the pair was slow)."""
    pairs: dict[str, list[bool]] = {}
    for (a, b), slow in results.items():
        pairs.setdefault(a, []).append(slow)
        pairs.setdefault(b, []).append(slow)
    if not any(results.values()):
        return Narrowing((), "every pair reached the threshold: the slow link is not between two nodes alone")
    named = tuple(sorted(node for node, slows in pairs.items() if all(slows)))
    if len(pairs) == 2:
        return Narrowing(named, "two nodes: one pair cannot tell which node is slow, so both are named")
    if not named:
        return Narrowing((), "slow pairs share no node: the fabric itself (not one node) looks slow")
    return Narrowing(named, "every pair with this node was slow, and its partners were fast with other nodes")
