"""User-facing input errors: every problem with its path, bad value and what is allowed, in one message."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pydantic import ValidationError


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the user's input, located by a dotted path (``compute.nodes``)."""

    path: str
    value: Any
    message: str
    hint: str | None = None

    def render(self) -> str:
        """One line: ``path = value: message; hint``."""
        where = self.path or "(top level)"
        value = "" if self.value is _MISSING else f" = {_short_repr(self.value)}"
        text = f"{where}{value}: {self.message}"
        if self.hint:
            text += f"; {self.hint}"
        return text


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()
MISSING = _MISSING
"""Sentinel for ``Problem.value`` when the field was absent rather than wrong."""


class UserInputError(Exception):
    """Raised for a mistake in what the user gave us; the CLI prints ``render()`` and exits 2."""

    exit_code = 2

    def __init__(self, subject: str, problems: Sequence[Problem]):
        self.subject = subject
        self.problems = list(problems)
        super().__init__(self.render())

    def render(self) -> str:
        """Every problem, one per line, under a single heading."""
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        lines = [f"error: {self.subject} ({count} {noun}):"]
        lines += [f"  - {p.render()}" for p in self.problems]
        return "\n".join(lines)


def did_you_mean(word: str, candidates: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """``"did you mean 'x'?"`` for the closest candidate by edit similarity, or None."""
    matches = difflib.get_close_matches(str(word), list(candidates), n=1, cutoff=cutoff)
    return f"did you mean '{matches[0]}'?" if matches else None


def join_allowed(values: Iterable[Any], limit: int = 12) -> str:
    """A short, sorted, quoted list of allowed values for messages."""
    items = sorted({str(v) for v in values})
    shown = ", ".join(f"'{v}'" for v in items[:limit])
    if len(items) > limit:
        shown += f", … ({len(items) - limit} more)"
    return shown


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dotted(loc: Sequence[Any], prefix: str = "") -> str:
    """Join a pydantic location tuple into a dotted path; list indices become ``[i]``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


class FieldError(ValueError):
    """A validator's error about one field (``path`` below the model that raised it), with the field's value."""

    def __init__(self, path: str, value: object, message: str):
        super().__init__(f"{path}: {message}")
        self.path, self.value, self.message = path, value, message


def problems_from_validation_error(
    exc: ValidationError,
    *,
    prefix: str = "",
    known_fields: Mapping[str, Sequence[str]] | None = None,
    skip_loc_parts: Sequence[str] = (),
) -> list[Problem]:
    """Turn a pydantic ``ValidationError`` into Problems.

    ``known_fields`` maps a dotted parent path to its allowed keys, so that an unknown key gets
    "did you mean" and the list of allowed keys. ``skip_loc_parts`` drops discriminator tags
    (e.g. the union member name pydantic inserts into locations).
    """
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if p not in skip_loc_parts]
        path = dotted(loc, prefix)
        kind = err["type"]
        value = err.get("input", _MISSING)
        if kind == "extra_forbidden":
            parent = path.rsplit(".", 1)[0] if "." in path else ""
            key = str(loc[-1]) if loc else path
            allowed = (known_fields or {}).get(parent, ())
            hint = did_you_mean(key, allowed)
            message = "unknown key"
            if allowed:
                message += f"; allowed keys here: {join_allowed(allowed, limit=30)}"
            problems.append(Problem(path, value, message, hint))
        elif kind == "missing":
            problems.append(Problem(path, _MISSING, "required field is missing"))
        elif isinstance((err.get("ctx") or {}).get("error"), FieldError):
            # A check across sections (raised by a model validator) names the field it is about, not the whole model.
            located: FieldError = err["ctx"]["error"]
            problems.append(Problem(dotted([*loc, *located.path.split(".")], prefix), located.value, located.message))
        else:
            message = err["msg"]
            # pydantic prefixes custom errors with "Value error, "; the user needs only our text.
            for noise in ("Value error, ", "Assertion failed, "):
                if message.startswith(noise):
                    message = message[len(noise) :]
            problems.append(Problem(path, value, message))
    return problems


def read_text_file(path: Path, what: str) -> str:
    """Read a user-named file, turning a missing or unreadable file into a ``UserInputError``."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        reason = "file does not exist"
    except IsADirectoryError:
        reason = "is a directory, not a file"
    except (OSError, UnicodeDecodeError) as exc:
        reason = f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    raise UserInputError(
        f"cannot read the {what}", [Problem(what, str(path), reason + "; give the path of a readable UTF-8 YAML file")]
    )
