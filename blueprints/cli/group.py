"""The ``aitrain`` command group: an option that takes one value, given twice, is an error instead of "last one wins".

Click keeps the last of ``--stack-config a.yaml --stack-config b.yaml`` silently, so a command would plan one stack
file while the user believes it read the other. Before dispatching, the group parses the command line once more, down
to the command that will run, and refuses any single-value option (not a flag, not repeatable like ``--set``) that
occurs more than once, naming every value (exit 2).
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from blueprints.core.errors import MISSING, Problem, UserInputError


class AitrainGroup(TyperGroup):
    """Typer's group, refusing a repeated single-value option on any (sub)command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Check the whole command line for repeated options, then parse as usual."""
        # Completion parses partial command lines resiliently; it must offer words, not print errors.
        repeated = [] if ctx.resilient_parsing else repeated_options(self, ctx, list(args))
        if repeated:
            error = UserInputError(
                "an option given more than once", [_problem(name, values) for name, values in repeated]
            )
            typer.echo(error.render(), err=True)
            raise typer.Exit(code=error.exit_code)
        result: list[str] = super().parse_args(ctx, args)
        return result


def repeated_options(command: Any, ctx: Any, args: list[str]) -> list[tuple[str, list[str]]]:
    """``[("--stack-config", ["a.yaml", "b.yaml"])]`` for each single-value option ``args`` gives twice or more."""
    leaf, rest = _leaf(command, ctx, args)
    if leaf is None:
        return []
    try:
        _, _, order = leaf.make_parser(type(ctx)(leaf)).parse_args(list(rest))
    except Exception:  # a malformed command line: the real parse reports it, this dry run must not change that
        return []
    single = [
        p
        for p in leaf.params
        if p.param_type_name == "option"
        and not p.multiple
        and not getattr(p, "count", False)
        and not getattr(p, "is_flag", False)
    ]
    out = []
    for param in single:
        if sum(1 for p in order if p is param) > 1:
            out.append((max(param.opts, key=len), _values(param.opts, rest)))
    return out


def _leaf(command: Any, ctx: Any, args: list[str]) -> tuple[Any, list[str]]:
    """The command that ``args`` will run, and the arguments it gets (groups' own options stripped)."""
    rest = list(args)
    while hasattr(command, "get_command"):
        try:
            _, remaining, _ = command.make_parser(type(ctx)(command)).parse_args(list(rest))
        except Exception:  # as in repeated_options: leave error reporting to the real parse
            return None, []
        if not remaining:
            return None, []
        command = command.get_command(ctx, remaining[0])
        if command is None:
            return None, []
        rest = remaining[1:]
    return command, rest


def _values(opts: list[str], args: list[str]) -> list[str]:
    """Every value given to the option spelled by one of ``opts`` (``--opt V``, ``--opt=V``, ``-o V``)."""
    values = []
    for i, token in enumerate(args):
        if token == "--":
            break
        if token in opts and i + 1 < len(args):
            values.append(args[i + 1])
        else:
            name, sep, value = token.partition("=")
            if sep and name in opts:
                values.append(value)
    return values


def _problem(option: str, values: list[str]) -> Problem:
    shown = ", then ".join(repr(v) for v in values)
    return Problem(
        option,
        MISSING,
        f"is given {len(values)} times ({shown}); it takes one value, and the command would silently use only the last",
        "give it once",
    )
