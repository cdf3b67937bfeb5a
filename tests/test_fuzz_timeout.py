"""A fuzz draw that hangs is killed from outside its worker and reported; the run finishes (``bench/fuzz.py``).

The hang is injected with a ``sitecustomize`` module on PYTHONPATH, which every process of the run (the parent and
each spawned worker) imports at start-up: it replaces ``blueprints.engine.preview.preview`` so that the first two stack
configs previewed in the run (one per worker, both hung at once as in the incident) sleep forever, each time they
are previewed, swallowing every exception an alarm could raise and ignoring SIGTERM; in "slow" mode only on their
first try, in "exit" mode they take their worker down. The fuzzer runs in a subprocess of its own session with a hard
timeout, so a fuzzer that hangs fails this test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOOK = textwrap.dedent(
    """
    import hashlib, json, os, signal, time

    import blueprints.engine.preview

    _real = blueprints.engine.preview.preview
    _dir = os.environ["AITRAIN_FUZZ_HANG_DIR"]


    def _chosen(config):
        # The first N distinct configs previewed in the whole run are chosen, and stay chosen when retried.
        key = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()
        for n in range(int(os.environ["AITRAIN_FUZZ_HANGS"])):
            slot = os.path.join(_dir, f"chosen-{n}")
            try:
                fd = os.open(slot, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                for _ in range(100):  # its writer may not have written the key yet
                    if (text := open(slot).read()):
                        break
                    time.sleep(0.01)
                if text == key:
                    return slot
                continue
            os.write(fd, key.encode())
            os.close(fd)
            return slot
        return None


    def preview(config, *args, **kwargs):
        slot = _chosen(config)
        if slot is None:
            return _real(config, *args, **kwargs)
        mode = os.environ["AITRAIN_FUZZ_HANG_MODE"]
        if mode == "exit":
            os._exit(3)  # a draw that takes its worker down (a segfault in an extension, say)
        if mode == "slow" and os.path.exists(slot + ".tried"):
            return _real(config, *args, **kwargs)  # slow only on a loaded machine: the retry finishes
        open(slot + ".tried", "w").close()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        open(os.path.join(_dir, f"hung-{os.getpid()}"), "w").close()
        while True:  # like the Pulumi callback that caught the alarm: nothing raised here gets out
            try:
                time.sleep(3600)
            except BaseException:
                pass


    blueprints.engine.preview.preview = preview
    """
)


def _run_fuzz(tmp_path: Path, *args: str, limit: float, mode: str) -> tuple[subprocess.CompletedProcess[str], float]:
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "hook"), str(ROOT)]),
        "AITRAIN_FUZZ_HANG_DIR": str(tmp_path),
        "AITRAIN_FUZZ_HANGS": "2",
        "AITRAIN_FUZZ_HANG_MODE": mode,
    }
    began = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "fuzz.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the fuzzer and the workers it left hanging
        out, err = process.communicate()
        raise AssertionError(
            f"bench/fuzz.py did not finish within {limit:.0f} s ({mode} mode): it hangs\n{out[-2000:]}\n{err[-2000:]}"
        ) from None
    finally:
        for left in tmp_path.glob("hung-*"):
            try:
                os.kill(int(left.name.removeprefix("hung-")), signal.SIGKILL)  # a worker the fuzzer failed to kill
            except ProcessLookupError:
                pass
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), time.monotonic() - began


def test_hung_draws_are_killed_counted_and_replayable_while_the_other_draws_run(tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.json"
    done, wall = _run_fuzz(
        tmp_path,
        "--draws",
        "30",
        "--jobs",
        "2",
        "--seed",
        "3",
        "--timeout",
        "4",
        "--json",
        str(summary_file),
        limit=120,
        mode="hang",
    )
    assert wall < 120
    summary = json.loads(summary_file.read_text(encoding="utf-8"))

    # Both hung draws were stopped and counted; every other draw still ran to its usual outcome.
    assert summary["timeouts"] == 2, done.stdout
    assert summary["accepted"] + summary["rejected"] == 28 and summary["crashes"] == 0 and summary["unsafe"] == 0
    hung = summary["timeout_details"]
    assert all(4 <= t["first_try_seconds"] < 30 and 12 <= t["seconds"] < 40 for t in hung), hung  # 4 s, then 3 × 4 s
    assert [t["replay"] for t in hung] == [f"python bench/fuzz.py --seed 3 --only {t['index']}" for t in hung]
    assert all(t["repro"] and "preset" in t["repro"] for t in hung)
    # The hung workers were killed (SIGKILL: they ignored SIGTERM and swallowed the alarm), not left behind.
    for left in tmp_path.glob("hung-*"):
        pid = int(left.name.removeprefix("hung-"))
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text(), (
            f"worker {pid} still runs"
        )

    # A timed-out draw fails the run, and the report says how to replay it.
    assert done.returncode == 1
    assert "2 timed out" in done.stdout
    for t in hung:
        assert (
            f"timed out (a hang): draw {t['index']} overran 4 s and, retried, 12 s" in done.stdout
            and f"replay: python bench/fuzz.py --seed 3 --only {t['index']}" in done.stdout
        )
    assert "Traceback" not in done.stderr


def test_a_draw_that_kills_its_worker_is_a_crash_with_its_reproduction_and_the_run_goes_on(tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.json"
    done, _ = _run_fuzz(
        tmp_path, "--draws", "20", "--jobs", "2", "--seed", "3", "--json", str(summary_file), limit=120, mode="exit"
    )
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    assert summary["crashes"] == 2 and summary["timeouts"] == 0
    assert summary["accepted"] + summary["rejected"] == 18
    died = summary["crash_details"]["the worker process died (exit code 3)"]
    assert died["count"] == 2 and "preset" in died["repro"]
    assert done.returncode == 1 and "crash ×2" in done.stdout


def test_a_draw_slow_only_on_its_first_try_finishes_on_the_retry_and_does_not_fail_the_run(tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.json"
    done, _ = _run_fuzz(
        tmp_path,
        "--draws",
        "20",
        "--jobs",
        "2",
        "--seed",
        "3",
        "--timeout",
        "4",
        "--json",
        str(summary_file),
        limit=120,
        mode="slow",
    )
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    assert summary["timeouts"] == 0 and summary["slow"] == 2
    assert summary["accepted"] + summary["rejected"] == 20 and summary["crashes"] == 0
    assert all(t["first_try_seconds"] >= 4 and t["seconds"] < 12 for t in summary["slow_details"])
    assert done.returncode == 0, done.stdout[-3000:]
    for t in summary["slow_details"]:
        assert (
            f"slow: draw {t['index']} overran 4 s" in done.stdout
            and f"replay: python bench/fuzz.py --seed 3 --only {t['index']}" in done.stdout
        )
