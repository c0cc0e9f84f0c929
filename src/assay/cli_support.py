"""Shared pieces of the ``assay`` command: output, errors, option parsing.

Each domain defines its command in ``assay/<domain>/cli.py`` as ``register(app)`` and
uses these helpers, so every command writes JSON/tables and reports bad input the same
way: one message naming the file, row and field on stderr, exit code 2, and nothing
half-written to ``--out``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from assay.errors import AssayError
from assay.io.files import check_writable_file, write_atomic
from assay.report.table import metrics_table
from assay.results import MetricSet

__all__ = [
    "OutputFormat",
    "guarded",
    "emit",
    "write_atomic",
    "parse_floats",
    "EXIT_BAD_INPUT",
    "save_option",
    "db_option",
    "save_metrics",
    "publish",
]

EXIT_BAD_INPUT = 2
F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(str, Enum):
    json = "json"
    table = "table"


def guarded(fn: F) -> F:
    """Turn assay errors into one readable line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AssayError as e:
            console = Console(stderr=True, soft_wrap=True, highlight=False)
            # User values (paths, labels, scores) are printed verbatim: no rich markup in them.
            console.print(Text.assemble(("error:", "bold red"), " ", str(e)))
            raise typer.Exit(EXIT_BAD_INPUT) from None

    return wrapper  # type: ignore[return-value]


def emit(
    metrics: MetricSet,
    *,
    fmt: OutputFormat = OutputFormat.json,
    out: Path | None = None,
    title: str | None = None,
) -> None:
    """Print metrics as JSON (default) or a table, or write the JSON atomically to ``out``."""
    if out is not None:
        write_atomic(out, metrics.to_json(indent=2) + "\n")
        if fmt is OutputFormat.table:
            Console().print(metrics_table(metrics, title=title))
        return
    if fmt is OutputFormat.table:
        Console().print(metrics_table(metrics, title=title))
    else:
        sys.stdout.write(metrics.to_json(indent=2) + "\n")


def parse_floats(text: str | None, *, option: str) -> list[float] | None:
    """Parse ``"0.5,0.75"`` into floats; a clear error naming the option otherwise."""
    if text is None:
        return None
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated numbers, got {text!r}", param_hint=option
        ) from None


SAVE_HELP = (
    "Also record this evaluation in the evaluation store "
    "($ASSAY_DATABASE_URL, default $ASSAY_HOME/assay.db)."
)


def save_option() -> Any:
    """The ``--save`` flag, for any command that computes metrics.

    Example (in a command)::

        def command(..., save: bool = save_option(), db: str | None = db_option()):
            metrics = ...
            publish(metrics, fmt=fmt, out=out, save=save, db=db, kind="classification",
                    dataset=str(path), parameters={...})
    """
    return typer.Option(False, "--save", help=SAVE_HELP)


def db_option() -> Any:
    """The ``--db URL`` option naming the evaluation store (default: the environment's)."""
    return typer.Option(None, "--db", help="Evaluation store URL or SQLite file (with --save).")


def save_metrics(
    metrics: MetricSet,
    *,
    kind: str,
    dataset: str | None = None,
    model: str | None = None,
    parameters: dict[str, Any] | None = None,
    save: bool = True,
    url: str | None = None,
    items: Any = None,
) -> int | None:
    """Store ``metrics`` as a finished evaluation when ``save`` is true; returns its id.

    A note naming the evaluation id and the store goes to stderr (stdout stays the
    command's JSON). Store failures raise :class:`assay.store.StoreError`, which
    :func:`guarded` turns into one line on stderr and exit code 2.
    """
    if not save:
        return None
    from assay.store import Store

    with Store(url) as store:
        eid = store.save(
            metrics, kind=kind, dataset=dataset, model=model, parameters=parameters, items=items
        )
        Console(stderr=True, highlight=False).print(
            f"[dim]saved evaluation {eid} ({kind}) to {store.display_url}[/]"
        )
    return eid


def publish(
    metrics: MetricSet,
    *,
    fmt: OutputFormat = OutputFormat.json,
    out: Path | None = None,
    title: str | None = None,
    save: bool = False,
    db: str | None = None,
    kind: str,
    dataset: str | None = None,
    model: str | None = None,
    parameters: dict[str, Any] | None = None,
    items: Any = None,
) -> int | None:
    """The last step of every metric command: store (with ``--save``), then print/write.

    The store is written first, so a failing ``--save`` (an unusable store) leaves
    ``--out`` untouched: a command's outputs appear together or not at all. Returns the
    evaluation id when saved.
    """
    if out is not None:
        check_writable_file(out, option="--out")
    eid = save_metrics(
        metrics,
        kind=kind,
        dataset=dataset,
        model=model,
        parameters=parameters,
        save=save,
        url=db,
        items=items,
    )
    emit(metrics, fmt=fmt, out=out, title=title)
    return eid
