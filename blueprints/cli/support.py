"""Shared plumbing for CLI commands: user errors become exit 2 with one message, output goes to stdout or a file."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import functools
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

import typer
import yaml

from blueprints.core.errors import MISSING, Problem, UserInputError
from blueprints.core.files import write_atomic

if TYPE_CHECKING:
    from blueprints.catalog import Catalog
    from blueprints.review.plan import Plan

F = TypeVar("F", bound=Callable[..., object])

# The options every command that plans a profile takes, as `aitrain plan` names them (typer copies each per command).
PRESET = typer.Argument(help="A bundled preset, e.g. medical-imaging or autoscaling-training.")
STACK_CONFIG = typer.Option(
    "--stack-config",
    help="A Pulumi.<stack>.yaml: its aitrain:preset / aitrain:profile keys are read exactly as `pulumi up` reads them.",
)
SET = typer.Option(
    "--set", help="Override one profile field, PATH=VALUE (e.g. compute.nodes=16); repeatable, applied last."
)
TODAY = typer.Option(
    "--today", help="Plan as if today were this date (YYYY-MM-DD); default: $AITRAIN_TODAY, else the system date."
)


class FailLevel(str, enum.Enum):
    """The least severe guardrail finding that makes ``aitrain plan`` exit 1."""

    error = "error"
    warning = "warning"
    info = "info"


class OutputFormat(str, enum.Enum):
    """How a command prints its result."""

    table = "table"
    markdown = "markdown"
    json = "json"


def reports_user_errors(fn: F) -> F:
    """Wrap a typer command so a user-input error prints one message to stderr and exits 2, no traceback.

    Besides ``UserInputError`` this catches only the parser errors that can come from nothing but user input
    (YAML and JSON syntax, text that is not UTF-8); any other exception is a bug and keeps its traceback.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UserInputError as exc:
            typer.echo(exc.render(), err=True)
            raise typer.Exit(code=exc.exit_code) from None
        except (yaml.YAMLError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            error = UserInputError(
                "invalid input", [Problem("(input)", MISSING, f"cannot be parsed: {_one_line(exc)}")]
            )
            typer.echo(error.render(), err=True)
            raise typer.Exit(code=error.exit_code) from None

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def reading(source: str, expected: str) -> Iterator[None]:
    """Treat shape errors while interpreting user data (``KeyError``, ``TypeError``…) as that data's fault.

    Wrap only code that walks a user-supplied document, e.g. ``with reading(str(path), "a plan from `aitrain plan
    --format json`"): diff_plans(old, new)``; the error names the source and what was expected.
    """
    try:
        yield
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError) as exc:
        raise UserInputError(
            f"cannot read {source}",
            [
                Problem(
                    source,
                    MISSING,
                    f"has an unexpected shape ({type(exc).__name__}: {_one_line(exc)}); expected {expected}",
                )
            ],
        ) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


def emit(text: str, out: Path | None, *, option: str = "--out") -> None:
    """Print ``text`` or write it to ``out`` atomically; the text always ends with one newline."""
    if not text.endswith("\n"):
        text += "\n"
    if out is None:
        sys.stdout.write(text)
        return
    write_atomic(out, text, option=option)


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (after symlinks, ``..`` and hard links), existing or not."""
    try:
        if a.exists() and b.exists():
            return a.samefile(b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def require_credentials() -> str:
    """Where the SDK will find credentials; exit 3 with how to set them when nothing is configured.

    Credentials come first, found by looking only: no plan is built and no API is called without them.
    """
    from blueprints.preflight.credentials import HOW_TO, CredentialsProblem, find_credentials

    try:
        source = find_credentials()
    except CredentialsProblem as exc:
        typer.echo(f"error: the Alibaba Cloud credentials cannot be used: {exc}.", err=True)
        raise typer.Exit(code=3) from None
    if source is None:
        typer.echo(f"error: no Alibaba Cloud credentials found; {HOW_TO}.", err=True)
        raise typer.Exit(code=3)
    return source


def sdk_classes(command: str) -> Any:
    """The SDK client classes, or one exit-2 message naming the extra to install (``command`` says who needs them)."""
    from blueprints.core.errors import Problem, UserInputError
    from blueprints.preflight.aliyun import SdkMissing, sdk_client_classes

    try:
        return sdk_client_classes()
    except SdkMissing as exc:
        raise UserInputError(
            f"{command} needs the Alibaba Cloud SDKs", [Problem("(environment)", None, str(exc))]
        ) from None


def require_profile(preset: str | None, stack_config: Path | None) -> None:
    """Exit 2 unless the command names a profile: a preset, or a stack config holding one."""
    if preset is None and stack_config is None:
        from blueprints.profile.stackconfig import preset_names

        raise UserInputError(
            "no profile given",
            [Problem("preset", None, f"name a preset ({', '.join(preset_names())}) or give --stack-config")],
        )


def offline_plan(
    preset: str | None, stack_config: Path | None, assignments: list[str], today: str | None
) -> "tuple[Plan, Catalog]":
    """The offline plan of the profile a command names, and the catalog it was planned with: the stack config, the
    preset, then ``--set``, read exactly as `pulumi up` reads them; the day from ``--today`` or the clock."""
    from blueprints.catalog import load_catalog
    from blueprints.engine.preview import preview

    inputs, day = _offline_inputs(preset, stack_config, assignments, today)
    catalog = load_catalog()
    return preview(inputs, catalog=catalog, today=day), catalog


def offline_profile(preset: str | None, stack_config: Path | None, assignments: list[str], today: str | None) -> Any:
    """The validated profile ``offline_plan`` plans, read the same way (no mocks run)."""
    from blueprints.architectures import profile_models
    from blueprints.catalog import load_catalog
    from blueprints.profile.stackconfig import read_settings, resolve

    inputs, day = _offline_inputs(preset, stack_config, assignments, today)
    settings = read_settings(inputs, source="(preflight)")
    return resolve(settings, profile_models(), catalog=load_catalog(), today=day)[1]


def _offline_inputs(
    preset: str | None, stack_config: Path | None, assignments: list[str], today: str | None
) -> "tuple[dict[str, str], dt.date]":
    """The engine-form config a command names (stack config, preset, ``--set``) and the day it plans for."""
    from blueprints.architectures import profile_models
    from blueprints.core import clock
    from blueprints.profile.stackconfig import engine_config, parse_overrides, with_cli_inputs

    day = clock.parse_today(today, "--today") if today else clock.today()
    overrides = parse_overrides(assignments, profile_models())
    return with_cli_inputs(engine_config(stack_config) if stack_config else {}, preset, overrides), day


@dataclasses.dataclass(frozen=True)
class StackEdit:
    """A stack config opened for a rewrite (park, replace-node, image pin): its text, settings and resolved profile."""

    path: Path
    existing: str
    settings: Any  # blueprints.profile.stackconfig.StackSettings
    catalog: Any
    today: Any  # datetime.date
    data: dict[str, Any]  # the resolved profile as data
    profile: Any

    @property
    def source(self) -> str:
        """The path as messages name it."""
        return str(self.path)

    @classmethod
    def read(cls, path: Path) -> StackEdit:
        """Read and resolve ``path`` as `pulumi up` would (exit 2 on a bad file or profile)."""
        from blueprints.architectures import profile_models
        from blueprints.catalog import load_catalog
        from blueprints.core import clock
        from blueprints.core.errors import read_text_file
        from blueprints.profile.stackconfig import engine_config, read_settings, resolve

        existing = read_text_file(path, "stack config")
        settings = read_settings(engine_config(path), source=str(path))
        catalog, today = load_catalog(), clock.today()
        data, profile = resolve(settings, profile_models(), catalog=catalog, today=today)
        return cls(path, existing, settings, catalog, today, data, profile)

    def rewritten(self, new_profile: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
        """``new_profile`` checked as `pulumi up` would check it, then the stack config text with it as the profile
        (the preset, secrets and other keys kept): (the resolved data, the new text, ``merge_stack_text``'s action)."""
        from blueprints.architectures import profile_models
        from blueprints.profile.stackconfig import PRESET_KEY, PROFILE_KEY, StackSettings, resolve
        from blueprints.profile.stackfile import merge_stack_text

        preset = self.settings.preset
        new_data, _ = resolve(
            StackSettings(preset, new_profile), profile_models(), catalog=self.catalog, today=self.today
        )
        new_config: dict[str, Any] = {PROFILE_KEY: new_profile}
        if preset is not None:
            new_config = {PRESET_KEY: preset, **new_config}
        merged, action = merge_stack_text(self.existing, new_config, force=True, source=self.source)
        return new_data, merged, action


def show_and_write(stack_config: Path, existing: str, merged: str, label: str, *, write: bool) -> bool:
    """Print the stack config's unified diff; with ``write``, replace the file atomically. Whether it was written."""
    import difflib

    source = str(stack_config)
    diff = difflib.unified_diff(
        existing.splitlines(keepends=True),
        merged.splitlines(keepends=True),
        fromfile=f"{source} (now)",
        tofile=f"{source} ({label})",
    )
    typer.echo("".join(diff).rstrip("\n"))
    if not write:
        typer.echo(f"not written: add --write to change {source}")
        return False
    write_atomic(stack_config, merged, option="--stack-config")
    return True
