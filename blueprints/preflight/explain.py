"""The cloud's capacity and quota error codes explained: one paragraph each on what was short, where, and what next.

Pure: the codes, their meaning and their source are data (``data/capacity_errors.csv``, columns in
``data/README.md``); ``codes_in`` finds them in the log of a failed ``pulumi up``, ``explain`` turns one into a
paragraph, ``errors_document`` renders docs/capacity-errors.md.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Mapping
from urllib.parse import quote

from blueprints.core.text import md_cell, md_code, plain

DATA = Path(__file__).parent / "data" / "capacity_errors.csv"
COLUMNS = ("code", "service", "short", "meaning", "action", "source", "source_date")
SERVICES = {"ecs": "ECS", "ess": "Auto Scaling (ESS)", "cs": "ACK", "quotas": "Quota Center"}
# What ran out, as the paragraph opens ("Out of stock in this deployment: ...").
SHORT = {
    "stock": "Out of stock",
    "quota": "Out of quota",
    "zone": "Not sold in the zone",
    "type": "Instance type not available",
    "spot": "Spot capacity short",
    "reservation": "Reserved capacity short",
}
_CODE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*")
# A source in a repository: owner/repo@commit:path#Lline (the commit names the exact text cited).
_REPO_SOURCE = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)@(?P<commit>[0-9a-f]{40}):(?P<path>[^#]+)#L(?P<line>[1-9]\d*)")
_DATE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
# The message the SDKs print after the code: tea's "Message: code: 403, <text> request id: <id>", the older SDK's
# "Message: <text>" a few lines below "ErrorCode: <code>".
_MESSAGE = re.compile(r"\bMessage:[ \t]*(?P<text>[^\n]*)")
_STATUS_PREFIX = re.compile(r"^code: \d+,\s*")
_REQUEST_ID = re.compile(r"\s*request id:.*$", re.I)
CHOOSE = "aitrain preflight --choose"


@dataclass(frozen=True)
class CapacityErrorRow:
    """One error code: the service that returns it, what ran out (``short``), its meaning, what to do, its source."""

    code: str
    service: str
    short: str
    meaning: str
    action: str
    source: str
    source_date: str


def load_capacity_errors(path: Path = DATA) -> dict[str, CapacityErrorRow]:
    """The rows of ``path`` by code; ValueError naming the file, line and column of the first bad cell."""
    rows: dict[str, CapacityErrorRow] = {}
    first: dict[str, int] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        if tuple(header) != COLUMNS:
            raise ValueError(f"{path.name} line 1: columns {header}; expected {list(COLUMNS)}")
        for cells in reader:
            line = reader.line_num
            if not cells:
                continue
            if len(cells) != len(COLUMNS):
                raise ValueError(f"{path.name} line {line}: {len(cells)} fields; expected {len(COLUMNS)}")
            row = CapacityErrorRow(*(cell.strip() for cell in cells))
            for column, problem in _problems(row):
                raise ValueError(f"{path.name} line {line}, column {column!r}: {problem}")
            if row.code in first:
                raise ValueError(f"{path.name} line {line}, column 'code': {row.code!r} repeats line {first[row.code]}")
            first[row.code], rows[row.code] = line, row
    return rows


def _problems(row: CapacityErrorRow) -> list[tuple[str, str]]:
    """(column, what is wrong) of every bad cell of ``row``, in column order."""
    out = [(c, "empty") for c in COLUMNS if not getattr(row, c)]
    out += [(c, "spans lines; a cell is one line") for c in COLUMNS if "\n" in getattr(row, c)]
    if row.code and not _CODE.fullmatch(row.code):
        out.append(("code", f"{row.code!r} is not an error code (dotted words, e.g. OperationDenied.NoStock)"))
    if row.service and row.service not in SERVICES:
        out.append(("service", f"{row.service!r} is not one of {', '.join(SERVICES)}"))
    if row.short and row.short not in SHORT:
        out.append(("short", f"{row.short!r} is not one of {', '.join(SHORT)}"))
    if row.source and not (row.source.startswith("https://") or _REPO_SOURCE.fullmatch(row.source)):
        out.append(("source", f"{row.source!r} is neither an https:// URL nor owner/repo@commit:path#Lline"))
    if row.source_date and not _valid_date(row.source_date):
        out.append(("source_date", f"{row.source_date!r} is not a date (YYYY-MM-DD, or YYYY-MM)"))
    return sorted(out, key=lambda item: COLUMNS.index(item[0]))


def _valid_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        dt.date.fromisoformat(text if len(text) == 10 else f"{text}-01")
    except ValueError:
        return False
    return True


def _one_line(text: str, limit: int = 200) -> str:
    value = " ".join(plain(text).split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def _next_step(short: str, alternative: str | None) -> str:
    """The sentence that moves the user on: the profile's next alternative, or the command that finds one."""
    if alternative:
        step = (
            f"Next in capacity.fallbacks: {_one_line(alternative)}; run `{CHOOSE} --stack-config Pulumi.<stack>.yaml`"
        )
        if short == "quota":
            return f"{step} to switch to it, or keep the plan once Quota Center grants more."
        if short == "reservation":
            return f"{step} to switch to it, or enlarge the reservation (its size) or extend it (its term)."
        return f"{step} to switch to it."
    if short == "quota":
        return (
            "Run `aitrain preflight` to see each quota against what the plan needs, or "
            f"`{CHOOSE}` with capacity.fallbacks in the profile to move to a type or region with quota to spare."
        )
    if short == "reservation":
        return (
            "Check the reservation's size and term (a used-up or expired reservation matches no more nodes), "
            f"or run `{CHOOSE}` with capacity.fallbacks in the profile."
        )
    return (
        f"Run `{CHOOSE}` with capacity.fallbacks in the profile, "
        "or `aitrain zones --write` to see which zones offer the type."
    )


def explain(
    code: str,
    message: str,
    *,
    where: str,
    alternative: str | None = None,
    rows: Mapping[str, CapacityErrorRow] | None = None,
) -> str:
    """One paragraph, one line: what ran out ``where``, what ``code`` means (with the cloud's ``message``), what to do.

    With ``alternative`` (the profile's next ``capacity.fallbacks`` entry) the paragraph names it and the command that
    switches to it. A code aitrain does not know gets a paragraph saying so, with the message; this never raises.
    """
    known = load_capacity_errors() if rows is None else rows
    said = _REQUEST_ID.sub("", _STATUS_PREFIX.sub("", _one_line(message))).rstrip(". ")
    code, where = _one_line(code, 120) or "(no code)", _one_line(where) or "in this deployment"
    cited = f"({code}: {said})" if said else f"({code})"
    row = known.get(code)
    if row is None:
        return (
            f"aitrain does not know the error code {code} {where}: it is none of the capacity or quota errors in "
            f"docs/capacity-errors.md {cited}. Read the message, or look the code up in the API reference of the "
            "call that failed."
        )
    meaning, step = row.meaning.rstrip("."), _next_step(row.short, alternative)
    return f"{SHORT[row.short]} {where}: {meaning} {cited}. {row.action} {step}"


def _pattern(codes: list[str]) -> re.Pattern[str]:
    """Whole codes only: ``OperationDenied`` is not found inside ``OperationDenied.NoStock`` (longest first, and
    never followed by a word character or by a dot that starts another word)."""
    names = "|".join(re.escape(c) for c in sorted(codes, key=len, reverse=True))
    return re.compile(rf"(?<![\w.])(?:{names})(?![\w]|\.\w)")


def found_in(text: str, rows: Mapping[str, CapacityErrorRow] | None = None) -> list[tuple[str, str]]:
    """(code, message) of every known code in ``text`` (say a failed ``pulumi up``), in order of appearance, each
    once; the message is the SDK's ``Message:`` line after the code, before the next code ("" when there is none)."""
    known = load_capacity_errors() if rows is None else rows
    if not known:
        return []
    text = _plain_lines(text)
    hits = list(_pattern(list(known)).finditer(text))
    found: dict[str, str] = {}
    for index, hit in enumerate(hits):
        if hit.group(0) in found:
            continue
        # The message ends the code's error block: search up to the next other code (the same code repeats in
        # the older SDK's Recommend URL, above its Message line).
        end = next((h.start() for h in hits[index + 1 :] if h.group(0) != hit.group(0)), len(text))
        message = _MESSAGE.search(text, hit.end(), min(end, hit.end() + 1000))
        found[hit.group(0)] = message.group("text").strip() if message else ""
    return list(found.items())


def codes_in(text: str, rows: Mapping[str, CapacityErrorRow] | None = None) -> list[str]:
    """The known codes in ``text``, in order of appearance, each once (whole codes only)."""
    return [code for code, _ in found_in(text, rows)]


def _plain_lines(text: str) -> str:
    """``text`` with its lines kept and terminal escapes (terraform's red ``[ERROR]``) and control characters gone."""
    return "\n".join(plain(line) for line in text.splitlines())


def _source_link(source: str, date: str) -> str:
    match = _REPO_SOURCE.fullmatch(source)
    if match is None:
        url, label = source, source.rstrip("/").rsplit("/", 1)[-1]
    else:
        path, line = match["path"], match["line"]
        url = f"https://github.com/{match['repo']}/blob/{match['commit']}/{quote(path)}#L{line}"
        label = f"{match['repo']} {PurePosixPath(path).parts[0]} {PurePosixPath(path).name} line {line}"
    return f"[{md_cell(label)}]({url}) ({date})"


DOC_HEAD = (
    "# Capacity and quota errors\n\n"
    "What each capacity or quota error code of Alibaba Cloud means and what to do about it, one row per code, from "
    "`blueprints/preflight/data/capacity_errors.csv` (its columns: `blueprints/preflight/data/README.md`). "
    "`aitrain explain-error` reads the log of a failed `pulumi up` (a file, or standard input) and prints one "
    "paragraph per code it finds: what was short, where (`--where`), the meaning and the cloud's message, what to "
    "do, and the profile's next `capacity.fallbacks` entry (`--alternative`) or the command that finds one; "
    "with `--stack-config`, the stack's own profile, region and first fallback. Before `pulumi up`, `aitrain "
    "preflight` asks the cloud the same questions (quota and stock) and, when something is short, names the next "
    "fallback too. Auto Scaling reports the ECS codes of the "
    "instances it could not create in its scaling activities (`ErrorCode`, e.g. `OperationDenied.NoStock`: "
    "[DescribeScalingActivities](https://github.com/alibabacloud-go/ess-20220222/blob/"
    "759a5905321396453702304fbc1ee1f61bce55fe/client/describe_scaling_activities_response_body_model.go#L182)), "
    "so an ECS row serves a node pool too.\n"
    "Generated by `errors_document()` in `blueprints/preflight/explain.py`; a test keeps this file equal to it.\n\n"
)


def errors_document(rows: Mapping[str, CapacityErrorRow] | None = None) -> str:
    """docs/capacity-errors.md: a short head and a table of every code (service, what is short, meaning, what to
    do, source and its date)."""
    known = load_capacity_errors() if rows is None else rows
    lines = [
        "| Code | Service | What is short | Meaning | What to do | Source |",
        "|---|---|---|---|---|---|",
    ]
    for row in known.values():
        lines.append(
            f"| {md_code(row.code)} | {SERVICES[row.service]} | {row.short} | {md_cell(row.meaning)} | "
            f"{md_cell(row.action)} | {_source_link(row.source, row.source_date)} |"
        )
    return DOC_HEAD + "\n".join(lines) + "\n"
