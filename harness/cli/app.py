"""The ``retrychaos`` command: its commands, ``--version``, ``-h``, and the entry point.

Exit codes: 0 every run holds; 1 an invariant was violated or a controller
raised, hung or blocked; 2 usage or input error; 3 the harness itself failed.

Output is plain text (no markup, no colour, never wrapped), so a CI log
reads the same as a terminal and a printed command can be pasted back.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer

from . import commands
from .merge import merge
from .output import say
from .run import replay, run

__all__ = ["app", "main"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    # Plain click output: typer's rich panels wrap at 80 columns in a CI log.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=(
        "Chaos-test the retry controller between your agents and their tools.\n\n"
        "Settings: [tool.retrychaos] in the nearest pyproject.toml sets the defaults of "
        "`run` (scenarios, controller, seeds, report, watchdog); see docs/configuration.md."
    ),
)
scenarios_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Work with the shipped scenario library.",
)


def _version(value: bool) -> None:  # noqa: FBT001 (typer passes the flag positionally)
    if value:
        try:
            number = version("retrychaos")
        except PackageNotFoundError:  # run from a tree that was never installed
            number = "unknown"
        say(f"retrychaos {number}")
        raise typer.Exit


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Chaos-test the retry controller between your agents and their tools."""


app.command()(run)
app.command()(replay)
app.command("list")(commands.list_)
app.command()(commands.report)
app.command()(commands.schema)
app.command()(commands.check)
app.command()(commands.fuzz)
app.command()(commands.selftest)
app.command()(merge)
scenarios_app.command("copy")(commands.copy_scenarios)
app.add_typer(scenarios_app, name="scenarios")


def main() -> None:
    """Entry point of the ``retrychaos`` console script."""
    app()
