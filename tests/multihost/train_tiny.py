"""A tiny model trained with DDP over gloo, the job tests/multihost/test_netns.py runs under aitrain-torchrun.

Every K steps rank 0 writes a checkpoint (model, optimizer, step) into $AITRAIN_CHECKPOINT_DIR; at start every rank
loads the newest one there, so a run the elastic agent restarts goes on where its last checkpoint left it. The lines
it prints (``train_tiny: start ...``, ``checkpoint ...``, ``done ...``) are what the test asserts on.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import socket
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

CHECKPOINT = re.compile(r"^step-(\d{6})\.pt$")


def newest_checkpoint(directory: Path) -> tuple[int, Path | None]:
    """(step, path) of the highest-step complete checkpoint in ``directory``; (0, None) when there is none."""
    found = [(int(m.group(1)), p) for p in directory.iterdir() if (m := CHECKPOINT.match(p.name))]
    return max(found) if found else (0, None)


def say(rank: int, text: str) -> None:
    print(f"train_tiny: {text} rank={rank} host={socket.gethostname()}", flush=True)


def batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The same batch for the same (step, rank) in every attempt, so a resumed run sees the data it would have."""
    g = torch.Generator().manual_seed(step * 1009 + rank)
    x = torch.randn(32, 16, generator=g)
    return x, x.sum(dim=1, keepdim=True) * 0.1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--step-seconds", type=float, default=0.0, help="sleep per step, so a test can act mid-run")
    parser.add_argument("--timeout-seconds", type=int, default=60, help="gloo collective timeout")
    args = parser.parse_args()
    where = os.environ.get("AITRAIN_CHECKPOINT_DIR")
    if not where:
        print("train_tiny: AITRAIN_CHECKPOINT_DIR is not set; aitrain-torchrun sets it per run id", file=sys.stderr)
        return 2
    directory = Path(where)
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout_seconds))
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        directory.mkdir(parents=True, exist_ok=True)
    dist.barrier()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    start, path = newest_checkpoint(directory)
    if path is not None:
        state = torch.load(path, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = int(state["step"])
    ddp = DistributedDataParallel(model)  # broadcasts rank 0's parameters; backward all-reduces the gradients
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    say(rank, f"start step={start} world_size={world} restart={restart} checkpoint={path.name if path else '-'}")
    loss = torch.tensor(0.0)
    for step in range(start, args.steps):
        x, y = batch(step, rank)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        done = step + 1
        if rank == 0 and done % args.checkpoint_every == 0:
            final = directory / f"step-{done:06d}.pt"
            partial = final.with_suffix(".tmp")
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": done}, partial)
            os.replace(partial, final)  # a reader never sees half a checkpoint
            say(rank, f"checkpoint step={done} path={final.name}")
        if args.step_seconds:
            time.sleep(args.step_seconds)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    digest = hashlib.sha256(repr(flat).encode()).hexdigest()[:16]  # equal on every rank when DDP kept them in step
    dist.barrier()
    say(rank, f"done step={args.steps} world_size={world} loss={loss.item():.6f} params={digest}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
