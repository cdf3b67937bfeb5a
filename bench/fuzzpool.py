"""Work items on worker processes whose deadlines the parent keeps: an item that overruns is killed, not awaited.

A deadline kept inside the worker (an alarm raising an exception) can be swallowed by the code it interrupts: a
Pulumi callback once caught it, and the whole fuzz run waited forever on a cancelled task. Here the parent measures
each item's time and, when it overruns, kills the worker (SIGKILL, which no handler can catch), reports the item as
timed out and starts a new worker, so a run always finishes.

Protocol (over one pipe per worker): the worker sends ``("ready",)`` once it has started, then for each index it
receives, ``("result", dict)``; when that dict has ``follow_up`` set it goes on to a second, slower phase (shrinking a
failure) with its own deadline and sends ``("final", dict)``. ``None`` tells it to exit.
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any


class WorkerStartError(RuntimeError):
    """A worker did not start (or died while starting): a fault of the harness, not of an item."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """Seconds an item, its follow-up phase and a worker's start may take before the worker is killed."""

    item: float
    follow_up: float
    start: float


@dataclasses.dataclass
class _Worker:
    process: Any
    conn: Connection
    phase: str = "starting"  # starting | idle | item | follow_up
    index: int = -1
    began: float = 0.0
    deadline: float = 0.0
    held: dict[str, Any] | None = None

    @classmethod
    def start(cls, ctx: Any, target: Callable[..., None], args: tuple[Any, ...], limit: float) -> _Worker:
        mine, theirs = ctx.Pipe()
        process = ctx.Process(target=target, args=(theirs, *args), daemon=True)
        process.start()
        theirs.close()
        return cls(process, mine, deadline=time.monotonic() + limit)

    def give(self, index: int, limit: float) -> None:
        self.phase, self.index, self.began = "item", index, time.monotonic()
        self.deadline = self.began + limit
        try:
            self.conn.send(index)
        except OSError:
            pass  # it died; wait() reports the pipe closed and the item is recorded as a crash

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


def run(
    indices: Iterable[int], jobs: int, target: Callable[..., None], args: tuple[Any, ...], limits: Limits
) -> Iterator[dict[str, Any]]:
    """Yield one result per index (in completion order), ``{"index", "outcome": "timeout", "seconds"}`` for overruns.

    ``target(conn, *args)`` is the worker's loop; a worker that dies mid-item yields ``outcome: "crash"`` with
    ``worker_died`` set. Raises ``WorkerStartError`` when a worker cannot start.
    """
    ctx = multiprocessing.get_context("spawn")
    todo = collections.deque(indices)
    workers = [_Worker.start(ctx, target, args, limits.start) for _ in range(max(1, min(jobs, len(todo))))]
    try:
        while todo or any(w.phase != "idle" for w in workers):
            for w in workers:
                if w.phase == "idle" and todo:
                    w.give(todo.popleft(), limits.item)
            busy = [w for w in workers if w.phase != "idle"]
            ready = wait([w.conn for w in busy], timeout=max(0.0, min(w.deadline for w in busy) - time.monotonic()))
            for n, w in enumerate(workers):
                if w in busy and w.conn in ready:
                    out, alive = _receive(w, limits)
                elif w in busy and time.monotonic() >= w.deadline:
                    out, alive = _overrun(w, limits), False
                else:
                    continue
                yield from out
                if not alive:
                    w.kill()
                    workers[n] = _Worker.start(ctx, target, args, limits.start)
        for w in workers:
            try:
                w.conn.send(None)
            except OSError:
                continue  # already gone: the finally below reaps it
            w.process.join(5)
    finally:  # also on an error or Ctrl-C: no worker outlives the run
        for w in workers:
            w.kill()


def _receive(w: _Worker, limits: Limits) -> tuple[list[dict[str, Any]], bool]:
    """The results a message completes, and whether the worker lives on."""
    try:
        message = w.conn.recv()
    except (EOFError, OSError):
        w.process.join(5)
        code = w.process.exitcode
        if w.phase == "starting":
            raise WorkerStartError(f"a worker process exited while starting (exit code {code})") from None
        if w.phase == "follow_up":
            return [w.held or {}], False
        return [
            {
                "index": w.index,
                "outcome": "crash",
                "detail": f"the worker process died (exit code {code})",
                "worker_died": True,
                "seconds": time.monotonic() - w.began,
            }
        ], False
    kind, *rest = message
    if kind == "ready":
        w.phase = "idle"
        return [], True
    result: dict[str, Any] = rest[0]
    if kind == "result" and result.get("follow_up"):
        w.phase, w.held, w.deadline = "follow_up", result, time.monotonic() + limits.follow_up
        return [], True
    w.phase, w.held = "idle", None
    return [result], True


def _overrun(w: _Worker, limits: Limits) -> list[dict[str, Any]]:
    if w.phase == "starting":
        raise WorkerStartError(f"a worker process did not start within {limits.start:.0f} s")
    if w.phase == "follow_up":  # the failure stands, with its unshrunk reproduction
        return [{**(w.held or {}), "follow_up_timed_out": True}]
    return [{"index": w.index, "outcome": "timeout", "seconds": time.monotonic() - w.began}]
