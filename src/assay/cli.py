"""The ``assay`` command line.

Every domain registers its sub-command from ``assay/<domain>/cli.py``; see
:mod:`assay.cli_support` for the shared output and error handling. Run
``assay --help`` for the list of commands.
"""

from __future__ import annotations

import importlib

import typer

import assay

app = typer.Typer(
    name="assay",
    help="Evaluate ML models and LLMs. Every command prints metric records as JSON "
    "(a list of {type, value, parameters}) or, with --format table, a table for people.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

# One module per domain; each defines register(app).
COMMAND_MODULES: tuple[str, ...] = (
    "assay.classification.cli",
    "assay.fairness.cli",
    "assay.detection.cli",
    "assay.segmentation.cli",
    "assay.scoring.cli",
    "assay.llm.cli",
    "assay.llm.pairwise.cli",
    "assay.store.cli",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"assay {assay.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate ML models and LLMs."""


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Entry point of the ``assay`` console script."""
    app()


if __name__ == "__main__":
    main()
