"""A fake `kubectl` for the launch tests: alone on PATH, it records each call's argv and stdin (JSON lines) and answers
`<created>` like `kubectl apply`; with FAKE_FAIL set it fails as the real one does without the job's CRD."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable


def install(tmp_path: Path, monkeypatch: Any, created: str, missing_kind: str) -> Callable[[], list[dict[str, Any]]]:
    """Put the fake on PATH; returns a reader of the calls made so far."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "kubectl.jsonl"
    script = textwrap.dedent(
        f"""\
        #!{sys.executable}
        import json, os, sys
        stdin = sys.stdin.read() if "-" in sys.argv else ""
        with open({str(calls)!r}, "a") as f:
            f.write(json.dumps({{"argv": sys.argv[1:], "stdin": stdin}}) + "\\n")
        if os.environ.get("FAKE_FAIL"):
            sys.stderr.write("error: the server doesn't have a resource type \\"{missing_kind}\\"\\n")
            sys.exit(1)
        print({created!r})
        """
    )
    exe = bin_dir / "kubectl"
    exe.write_text(script)
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return lambda: [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
