"""Shared plumbing for CLI commands: user errors become exit 2 with one message, output goes to stdout or a file."""

from __future__ import annotations

import enum
import functools
import sys
from pathlib import Path
from typing import Callable, TypeVar

import typer

from blueprints.errors import Problem, UserInputError

F = TypeVar("F", bound=Callable[..., object])


class OutputFormat(str, enum.Enum):
    """How a command prints its result."""

    table = "table"
    markdown = "markdown"
    json = "json"


def reports_user_errors(fn: F) -> F:
    """Wrap a typer command so a ``UserInputError`` prints its message to stderr and exits 2, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserInputError as exc:
            typer.echo(exc.render(), err=True)
            raise typer.Exit(code=exc.exit_code) from None

    return wrapper  # type: ignore[return-value]


def emit(text: str, out: Path | None) -> None:
    """Print ``text`` or write it to ``out``; the text always ends with one newline."""
    if not text.endswith("\n"):
        text += "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserInputError(
            "cannot write the output file",
            [Problem("--out", str(out), f"{exc.strerror or exc}; give a writable path")],
        ) from None
