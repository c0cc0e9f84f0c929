"""The ``assay`` command line.

Every command is one module of this package, ``assay/cli/<name>.py``, defining
``register(app)``; see :mod:`assay.cli.support` for the shared output and error handling.

Commands are registered lazily: :data:`COMMANDS` knows each command's name, the module
that defines it and a one-line help, so ``assay --help`` lists every command without
importing any domain, and ``assay COMMAND ...`` (or ``assay COMMAND --help``) imports only
that command's module. A new command is one more line in :data:`COMMANDS`.

Example:
    >>> sorted(COMMANDS)[:3]
    ['classification', 'compare', 'detection']
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from assay import __version__
from assay._compat import removed_flag_message

__all__ = ["COMMANDS", "app", "main", "load_command"]

#: command name -> (module defining ``register(app)``, one-line help shown by ``assay --help``)
COMMANDS: dict[str, tuple[str, str]] = {
    "classification": (
        "assay.cli.classification",
        "Classification metrics: counts, precision/recall/F1/accuracy, ROC AUC, PR curves.",
    ),
    "fairness": (
        "assay.cli.fairness",
        "Group fairness: statistical parity, disparate impact, equal opportunity, odds.",
    ),
    "detection": (
        "assay.cli.detection",
        "Object detection and instance segmentation (COCO-exact AP/AR, curves).",
    ),
    "segmentation": ("assay.cli.segmentation", "Semantic segmentation: IoU, mIoU, confusion."),
    "scoring": (
        "assay.cli.scoring",
        "Automated-scoring evaluation: the RSMTool metric set, PRMSE, subgroup tables.",
    ),
    "llm": ("assay.cli.llm", "Call LLMs: ask one question, or run many items (JSONL)."),
    "serve-model": (
        "assay.cli.llm",
        "Serve the embedded model as an OpenAI-compatible endpoint on 127.0.0.1.",
    ),
    "pairwise": (
        "assay.cli.pairwise",
        "Pairwise LLM judging with position swap: consistency, win rates, ratings.",
    ),
    "runs": ("assay.cli.runs", "The evaluation store: list, show, latest, export, upgrade."),
    "import": (
        "assay.cli.imports",
        "Store runs made by Inspect AI, lm-evaluation-harness or Every Eval Ever.",
    ),
    "compare": (
        "assay.cli.runs",
        "Which run is better: paired differences, tests, adjusted p-values, ranks, power.",
    ),
    "plan": (
        "assay.cli.runs",
        "The units a comparison needs (--mde, --target-width), from one pilot run.",
    ),
    "report": (
        "assay.cli.report",
        "One self-contained HTML report (tables and plots) of stored runs.",
    ),
    "stats": (
        "assay.cli.stats",
        "Inspect-style score statistics: accuracy, stderr, ci ... over reduced epochs.",
    ),
    "text": ("assay.cli.text", "Text metrics: ROUGE, BLEU and LLM-judged (faithfulness, ...)."),
}

HELP = """Evaluate ML models and LLMs.

Output: every metric command prints its metric records (a JSON list of
{type, value, parameters}) on stdout. One rule for all commands: --format json
is the default, --format table prints a table for people, and --out FILE writes
the JSON to FILE (atomically; '-' is stdout, a device or FIFO is written in
place) instead of stdout.

Exit codes: 0 success, 1 some LLM calls failed (their records say why), 2 bad
input or options (one message naming the file, row and field), 130/143 when
interrupted.

Run 'assay COMMAND --help' for a command's options.
"""


def load_command(name: str) -> Any:
    """Import the module that defines ``name`` and return its click command."""
    module, _ = COMMANDS[name]
    sub = typer.Typer(rich_markup_mode=None, add_completion=False)
    importlib.import_module(module).register(sub)
    group = typer.main.get_group(sub)
    return group.commands[name]


# click's usage and base errors, from typer's own click (vendored in newer typer releases)
_USAGE_ERROR: Any = typer.BadParameter.__mro__[1]
_CLICK_ERROR: Any = typer.BadParameter.__mro__[2]


class LazyGroup(TyperGroup):
    """A group that lists :data:`COMMANDS` without importing them and loads one on use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS:
            return None
        # For listing only: a stub with the command's one-line help.
        return TyperCommand(cmd_name, help=COMMANDS[cmd_name][1], short_help=COMMANDS[cmd_name][1])

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:  # type: ignore[override]
        """As click's, except that a usage error (an unknown option, a value of the wrong
        type) is one line on stderr, ``error: ...`` and where to find help, exit 2, like
        every other refusal (click prints the usage, a hint and the error on three)."""
        run: Any = super().main
        if not standalone_mode:
            return run(*args, standalone_mode=False, **kwargs)
        shown = warnings.formatwarning
        warnings.formatwarning = _one_line_warning
        try:
            code = run(*args, standalone_mode=False, **kwargs)
        except _USAGE_ERROR as e:  # (Any: typer's click, vendored or not)
            if type(e).__name__ == "NoArgsIsHelpError":  # bare `assay`: the help itself
                e.show()
                sys.exit(e.exit_code)
            where = e.ctx.command_path if e.ctx is not None else "assay"
            message = removed_flag_message(e.format_message())
            print(f"error: {message} (see '{where} -h')", file=sys.stderr)
            sys.exit(2)
        except _CLICK_ERROR as e:
            e.show()
            sys.exit(e.exit_code)
        except typer.Abort:
            print("error: aborted", file=sys.stderr)
            sys.exit(1)
        finally:
            warnings.formatwarning = shown
        sys.exit(code if isinstance(code, int) else 0)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = str(args[0]) if args else None
        if name in COMMANDS and name not in self.commands:
            self.add_command(load_command(name), name)
        return super().resolve_command(ctx, args)


def _one_line_warning(message: Warning | str, *_: Any, **__: Any) -> str:
    """A warning on the command line: ``warning: ...``, one line (Python's own names the
    source file and line and prints the code)."""
    return f"warning: {message}\n"


app = typer.Typer(
    name="assay",
    cls=LazyGroup,
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: never cuts option names on narrow terminals, never reads
    # user-visible text as markup, and needs no rich import for --help.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate ML models and LLMs."""
    from assay.cli.support import mark_command_start

    mark_command_start()  # a saved evaluation's "created": when its command began


def main(argv: Any = None) -> None:
    """Entry point of the ``assay`` console script."""
    app(args=argv)


if __name__ == "__main__":
    main()
