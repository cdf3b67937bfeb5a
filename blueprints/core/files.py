"""Replace a file atomically: the one way aitrain writes a
file the user keeps (outputs, stack files, catalog copies)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from blueprints.core.errors import Problem, UserInputError


def replace_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place; raise ``OSError`` on failure.

    A failure at any point leaves an existing ``path`` byte-for-byte as it was (never truncated) and no
    temporary file behind. A symlink is followed, so the file it points to is replaced. An existing file keeps
    its permission bits; a new one gets the usual mode (0666 minus the umask).
    """
    target = Path(os.path.realpath(path))
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, text: str, *, option: str = "--out") -> None:
    """``replace_atomically``, with a failure reported as one exit-2 message naming ``option``."""
    try:
        replace_atomically(path, text)
    except OSError as exc:
        raise UserInputError(
            "cannot write the output file",
            [Problem(option, str(path), f"{exc.strerror or exc}; give a writable path in an existing directory")],
        ) from None
