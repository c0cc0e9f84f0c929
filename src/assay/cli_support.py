"""Shared pieces of the ``assay`` command: output, errors, option parsing.

Each domain defines its command in ``assay/<domain>/cli.py`` as ``register(app)`` and
uses these helpers, so every command writes JSON/tables and reports bad input the same
way: one message naming the file, row and field on stderr, exit code 2, and nothing
half-written to ``--out``.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console

from assay.errors import AssayError
from assay.report.table import metrics_table
from assay.results import MetricSet

__all__ = ["OutputFormat", "guarded", "emit", "write_atomic", "parse_floats", "EXIT_BAD_INPUT"]

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
            Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {e}", highlight=False, markup=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None

    return wrapper  # type: ignore[return-value]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def emit(metrics: MetricSet, *, fmt: OutputFormat = OutputFormat.json, out: Path | None = None, title: str | None = None) -> None:
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
        raise typer.BadParameter(f"expected comma-separated numbers, got {text!r}", param_hint=option) from None
