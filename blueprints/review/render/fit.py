"""Fit Markdown into one GitHub comment: keep whole blocks in order and say what was left out."""

from __future__ import annotations

from typing import Callable, Sequence

# GitHub refuses an issue or pull-request comment body longer than 65,536 characters.
GITHUB_COMMENT_LIMIT = 65_536
# What aitrain aims for, leaving room for a CI job to wrap several plans or diffs into one comment.
COMMENT_BUDGET = 60_000


def fit_blocks(
    head: str, blocks: Sequence[str], tail: str, omitted: Callable[[int], str], limit: int = COMMENT_BUDGET
) -> str:
    """``head`` + as many whole ``blocks`` as fit + ``omitted(n)`` when n blocks were left out + ``tail``.

    Blocks are never cut in the middle (a table row, a code fence), so what is shown renders as written; the
    ``omitted`` text tells the reader how many were left out and where to read them all.
    """
    kept: list[str] = []
    used = len(head) + len(tail)
    for index, block in enumerate(blocks):
        # Room for the note in case a later block is left out (blocks from this one on would be).
        reserve = len(omitted(len(blocks) - index))
        if used + len(block) + reserve > limit:
            return head + "".join(kept) + omitted(len(blocks) - index) + tail
        kept.append(block)
        used += len(block)
    return head + "".join(kept) + tail
