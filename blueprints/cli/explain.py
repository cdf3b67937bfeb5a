"""CLI: ``aitrain explain-error`` turns the capacity and quota error codes in a failed ``pulumi up`` log into
paragraphs that say what was short, where, and what to do next."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.support import reports_user_errors

DEFAULT_WHERE = "in this deployment"

HELP = (
    "Explain the cloud's capacity and quota errors in a text, typically the output of a failed `pulumi up` "
    "(`pulumi up 2>&1 | tee up.log`, then `aitrain explain-error up.log`): one paragraph per known error code "
    "(OperationDenied.NoStock, Zone.NotOnSale, QuotaExceed.ElasticQuota…), in the order they appear, saying what "
    "was short, where, what the code means with the cloud's message, what to do, and the next alternative.\n\n"
    "Every code it knows, with its source: docs/capacity-errors.md.\n\n"
    "Exit codes: 0 at least one code was explained; 1 the text holds none of the codes aitrain knows; 2 the file "
    "cannot be read."
)


def _read(source: str | None) -> str:
    """The text of ``source``: standard input for ``-`` or nothing, else the file (exit 2 when it cannot be read)."""
    from blueprints.core.errors import Problem, UserInputError

    if source in (None, "-"):
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        reason = "file does not exist"
    except IsADirectoryError:
        reason = "is a directory, not a file"
    except OSError as exc:
        reason = f"cannot be read ({exc.strerror or exc})"
    raise UserInputError(
        "cannot read the log", [Problem("LOG", source, f"{reason}; give a file, or - for standard input")]
    )


def explain_error(
    log: Annotated[
        Optional[str],
        typer.Argument(
            metavar="LOG",
            help="The text to read, e.g. the saved output of a failed `pulumi up`; `-` or none reads standard input.",
        ),
    ] = None,
    where: Annotated[
        str,
        typer.Option(
            "--where", help="Where it happened, as the paragraph says it, e.g. 'for node group gpu in cn-shanghai-b'."
        ),
    ] = DEFAULT_WHERE,
    alternative: Annotated[
        Optional[str],
        typer.Option(
            "--alternative",
            help=(
                "The next entry of the profile's capacity.fallbacks (e.g. 'ecs.gn7i-c32g1.8xlarge in cn-shanghai-l'); "
                "the paragraph names it and the command that switches to it."
            ),
        ),
    ] = None,
    stack_config: Annotated[
        Optional[Path],
        typer.Option(
            "--stack-config",
            help="The stack that failed: the paragraphs name its profile, region and first capacity.fallbacks entry.",
        ),
    ] = None,
) -> None:
    """Explain the capacity and quota error codes in a failed `pulumi up` log (see HELP)."""
    from blueprints.preflight.explain import explain, found_in

    text = _read(log)
    if stack_config is not None:
        from blueprints.cli.support import StackEdit

        profile = StackEdit.read(stack_config).profile
        if where == DEFAULT_WHERE:
            where = f"for {profile.name} in {profile.region}"
        if alternative is None and profile.capacity.fallbacks:
            alternative = profile.capacity.fallbacks[0].label()
    found = found_in(text)
    if not found:
        typer.echo(
            "no capacity or quota error code that aitrain knows was found in the input (docs/capacity-errors.md "
            "lists them)",
            err=True,
        )
        raise typer.Exit(code=1)
    # One paragraph (one line) per code, a blank line between them.
    typer.echo("\n\n".join(explain(code, message, where=where, alternative=alternative) for code, message in found))


def register(app: typer.Typer) -> None:
    """Add the ``explain-error`` command to the main app."""
    app.command("explain-error", help=HELP)(reports_user_errors(explain_error))
