"""Cross-node all-reduce bandwidth with PyTorch's own collectives, run under torchrun (standalone: no aitrain import).

Usage (every rank, e.g. through the node's launcher ``aitrain-torchrun -- python allreduce.py ...``)::

    torchrun --standalone --nproc-per-node 2 allreduce.py --backend gloo --size-mb 16 --iters 10 --json
    python allreduce.py --backend nccl|gloo --size-mb N --iters K [--warmup W] [--json]

Each rank all-reduces (sum) a float32 tensor of ``--size-mb`` MiB ``--iters`` times after ``--warmup`` untimed
rounds; rank 0 prints the result. ``--json``: one line ``AITRAIN-ALLREDUCE {...}`` with ``aitrain_allreduce`` "v1",
``backend``, ``world_size``, ``size_bytes``, ``iters``, ``seconds_per_iter``, ``algbw_gbps`` / ``busbw_gbps``
(Gbit/s, as the catalog gives link speeds) and ``algbw_GBps`` / ``busbw_GBps`` (GB/s = 1e9 bytes, nccl-tests' unit),
``correct`` (every element equals the world size) and ``hosts``. Without ``--json`` a short text line. Exit 0 when
the result is correct, 1 when not, 2 on bad arguments.

Bus bandwidth is nccl-tests' definition for all-reduce, busbw = algbw x 2(n-1)/n with n ranks
(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md); algbw = bytes / time per all-reduce.
The backend is ``nccl`` on GPU nodes (one GPU per local rank) and ``gloo`` on CPU. The rendezvous is torchrun's
(``MASTER_ADDR``/``RANK``/``WORLD_SIZE`` in the environment).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from typing import Any

MARKER = "AITRAIN-ALLREDUCE"
VERSION = "v1"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line (stable: the health gate and the netns test call it)."""
    parser = argparse.ArgumentParser(prog="allreduce.py", description="all-reduce bus bandwidth (rank 0 reports)")
    parser.add_argument("--backend", choices=("nccl", "gloo"), required=True)
    parser.add_argument("--size-mb", type=float, default=64.0, help="tensor size per rank, MiB (default 64)")
    parser.add_argument("--iters", type=int, default=20, help="timed all-reduces (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed all-reduces first (default 2)")
    parser.add_argument("--json", action="store_true", help=f"print one '{MARKER} {{json}}' line")
    args = parser.parse_args(argv)
    if args.size_mb <= 0 or args.iters < 1 or args.warmup < 0:
        parser.error("--size-mb must be > 0, --iters >= 1, --warmup >= 0")
    return args


def bus_bandwidth(algbw: float, ranks: int) -> float:
    """nccl-tests' all-reduce bus bandwidth: algbw * 2(n-1)/n."""
    return algbw * 2 * (ranks - 1) / ranks if ranks > 1 else 0.0


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run the all-reduces on this rank; the result dict (the same on every rank, printed by rank 0)."""
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend=args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cpu")
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    count = max(1, int(args.size_mb * 1024 * 1024) // 4)
    tensor = torch.ones(count, dtype=torch.float32, device=device)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(args.warmup):
        dist.all_reduce(tensor)
    tensor.fill_(1.0)
    dist.barrier()
    sync()
    start = time.perf_counter()
    for _ in range(args.iters):
        dist.all_reduce(tensor)
    sync()
    elapsed = time.perf_counter() - start
    # After iters sums of ones the elements are world**iters; check one all-reduce exactly instead.
    tensor.fill_(1.0)
    dist.all_reduce(tensor)
    correct = bool(torch.all(tensor == float(world)).item())
    seconds = torch.tensor([elapsed], dtype=torch.float64, device=device)
    dist.all_reduce(seconds, op=dist.ReduceOp.MAX)  # the slowest rank decides, as in nccl-tests
    per_iter = float(seconds.item()) / args.iters
    # Host names as fixed-width bytes (all_gather_object needs numpy, which a CPU-only venv may lack).
    name = torch.zeros(64, dtype=torch.uint8, device=device)
    raw = socket.gethostname().encode()[:64]
    name[: len(raw)] = torch.tensor(list(raw), dtype=torch.uint8, device=device)
    names = [torch.zeros_like(name) for _ in range(world)]
    dist.all_gather(names, name)
    hosts = [bytes(t.cpu().tolist()).rstrip(b"\0").decode(errors="replace") for t in names]
    dist.destroy_process_group()
    size_bytes = count * 4
    algbw_bytes = size_bytes / per_iter if per_iter > 0 else 0.0
    busbw_bytes = bus_bandwidth(algbw_bytes, world)
    return {
        "aitrain_allreduce": VERSION,
        "rank": rank,
        "backend": args.backend,
        "world_size": world,
        "size_bytes": size_bytes,
        "iters": args.iters,
        "seconds_per_iter": per_iter,
        "algbw_GBps": algbw_bytes / 1e9,
        "busbw_GBps": busbw_bytes / 1e9,
        "algbw_gbps": algbw_bytes * 8 / 1e9,
        "busbw_gbps": busbw_bytes * 8 / 1e9,
        "correct": correct,
        "hosts": sorted(set(hosts)),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure and (rank 0) print; the exit code says whether the sums were right."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    result = measure(args)
    if result.pop("rank") == 0:
        if args.json:
            print(f"{MARKER} {json.dumps(result, sort_keys=True)}", flush=True)
        else:
            print(
                f"all-reduce {args.backend} x{result['world_size']}: {result['size_bytes']} bytes, "
                f"algbw {result['algbw_GBps']:.3f} GB/s, busbw {result['busbw_GBps']:.3f} GB/s, "
                f"{'correct' if result['correct'] else 'WRONG SUMS'}",
                flush=True,
            )
    return 0 if result["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
