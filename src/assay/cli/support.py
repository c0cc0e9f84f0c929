"""Shared pieces of the ``assay`` command: output, errors, option parsing.

Each command is a module of :mod:`assay.cli` defining ``register(app)``, and it uses
these helpers, so every command writes JSON/tables and reports bad input the same way: one
message naming the file, row and field on stderr, exit code 2, and nothing half-written to
``--out``.

One output rule for every command: ``--format json`` (the default) prints the metric
records as JSON on stdout, ``--format table`` prints a table for people, and ``--out
FILE`` writes the JSON to ``FILE`` atomically (:func:`format_option`, :func:`out_option`).

User values (paths, labels, model names, error messages) are always printed verbatim:
nothing here lets rich read them as markup (:func:`print_error`, :func:`note`,
:func:`cell`).

This module is imported by every command's ``--help``: it imports nothing heavy
(no numpy, pandas or SQLAlchemy at module level).

Example:
    >>> parse_floats("0.5, 0.75", option="--score-thresholds")
    [0.5, 0.75]
    >>> cell("[bold]high").plain
    '[bold]high'
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from assay.cli.options import (
    parse_tags,
    save_label_parameters,
)
from assay.errors import AssayError, InvalidInputError
from assay.io.files import check_writable_file, write_atomic
from assay.io.protect import protected, refuse_protected
from assay.terminal import printable

if TYPE_CHECKING:
    from rich.text import Text

    from assay.results import MetricSet

__all__ = [
    "mark_command_start",
    "OutputFormat",
    "guarded",
    "emit",
    "parse_floats",
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "save_option",
    "db_option",
    "format_option",
    "out_option",
    "save_metrics",
    "save_labels",
    "publish",
    "print_error",
    "note",
    "cell",
    "check_input_file",
    "check_output_file",
    "check_nonnegative",
]

EXIT_BAD_INPUT = 2
#: Exit code after Ctrl-C (128 + SIGINT); SIGTERM gives 143 (128 + 15).
EXIT_INTERRUPTED = 130
F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(str, Enum):
    json = "json"
    table = "table"


def _stderr() -> Any:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True, highlight=False)


def print_error(message: str) -> None:
    """``error: <message>`` on stderr; verbatim (no markup), control characters escaped."""
    from rich.text import Text

    text = printable(message, keep_newlines=True)
    _stderr().print(Text.assemble(("error:", "bold red"), " ", text))


def note(message: str) -> None:
    """A dim note on stderr (stdout stays the command's JSON); printed verbatim."""
    from rich.text import Text

    _stderr().print(Text(printable(message, keep_newlines=True), style="dim"))


def cell(value: Any) -> Text:
    """A table cell that shows ``value`` as it is (``[bold]x`` stays ``[bold]x``).

    Control characters (an escape sequence in a label or a model's answer) are shown
    escaped, as ``repr`` would (:func:`assay.terminal.printable`).
    """
    from rich.text import Text

    return Text(printable(value))


def _os_error_message(e: OSError) -> str:
    where = e.filename if e.filename is not None else None
    reason = e.strerror or type(e).__name__
    return f"{where}: {reason}" if where is not None else reason


def guarded(fn: F) -> F:
    """Turn assay errors into one readable line on stderr and exit code 2.

    Before the command runs, its ``--out`` must not be a file it reads (an input, the
    store, the response cache): refused in one line, nothing touched; every file it then
    writes is checked the same way (:mod:`assay.io.protect`).

    Also: a file the operating system refuses (a directory given as a file, no
    permission) is exit 2 naming the path; Ctrl-C is exit 130 without a traceback.
    """

    labels = _has_save(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _save_labels
        try:
            if labels:
                _save_labels = _take_save_labels(kwargs)
            with protected(_read_files(kwargs)):
                for name in OUTPUT_OPTIONS:
                    refuse_protected(kwargs.get(name), option=_option_name(name))
                return fn(*args, **kwargs)
        except AssayError as e:
            print_error(str(e))
            raise typer.Exit(getattr(e, "exit_code", EXIT_BAD_INPUT)) from None
        except (IsADirectoryError, NotADirectoryError, PermissionError, FileNotFoundError) as e:
            print_error(_os_error_message(e))
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except KeyboardInterrupt:
            print_error("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        finally:
            if labels:
                _save_labels = {}

    if labels:  # --name, --tag and --no-units beside --save (options.SAVE_LABELS)
        sig = inspect.signature(fn)
        extra = save_label_parameters()
        wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[*sig.parameters.values(), *extra]
        )
        wrapper.__annotations__ = {**fn.__annotations__, **{p.name: p.annotation for p in extra}}
    return wrapper  # type: ignore[return-value]


#: What --name, --tag and --no-units said to the running command (``guarded`` sets it;
#: :func:`save_metrics` reads it).
_save_labels: dict[str, Any] = {}


def save_labels() -> dict[str, Any]:
    """What ``--name``, ``--tag`` and ``--no-units`` said to the running command
    (``{"name": ..., "tags": {...}, "units": bool}``; empty outside a command), for a
    command that stores its run without :func:`save_metrics`."""
    return dict(_save_labels)


def _has_save(fn: Callable[..., Any]) -> bool:
    """Whether the command declares ``--save`` (:func:`save_option`)."""
    p = inspect.signature(fn).parameters.get("save")
    decls = getattr(p.default, "param_decls", None) or () if p is not None else ()
    return any(d.split("/")[0] == "--save" for d in decls)  # --save or --save/--no-save


def _take_save_labels(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the save labels out of the command's arguments, checked."""
    name = kwargs.pop("save_name", None)
    tags = parse_tags(kwargs.pop("save_tags", None) or [])
    units = not kwargs.pop("no_units", False)
    if name is not None and not name.strip():
        raise InvalidInputError("must not be empty", source="--name")
    return {"name": name, "tags": tags, "units": units}


#: the parameters that name a file a command writes (checked against every file it reads)
OUTPUT_OPTIONS = ("out",)
#: parameters that name a folder the command writes into (never an input of its own)
_OUTPUT_FOLDERS = ("out_dir",)


def _option_name(param: str) -> str:
    """How the user typed parameter ``param`` (``--groundtruths``), from click's context."""
    import importlib

    try:  # typer ships its own click
        click: Any = importlib.import_module("typer._click.globals")
    except ImportError:  # pragma: no cover - typer with the click package
        click = importlib.import_module("click")
    ctx = click.get_current_context(silent=True)
    for p in ctx.command.params if ctx is not None else ():
        if p.name == param and p.opts:
            longest = max(p.opts, key=len)
            return longest if longest.startswith("-") else longest.upper()
    return "--" + param.replace("_", "-")


def _read_files(kwargs: dict[str, Any]) -> dict[str, Path | None]:
    """Every file a command reads, by what it is: the evaluation store (``--db``, or the
    default one), the LLM response cache (``--cache``, or the default one), each input
    (a path option or argument, or a text option naming an existing file)."""
    from assay.paths import default_cache_path
    from assay.store.config import store_file

    files: dict[str, Path | None] = {}
    for name, value in kwargs.items():
        if name in OUTPUT_OPTIONS or name in _OUTPUT_FOLDERS or name in ("db", "cache"):
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, Path) or (isinstance(v, str) and v and Path(v).is_file()):
                files[f"the input {_option_name(name)} {v}"] = Path(v)
    db = kwargs.get("db")
    store = store_file(db if isinstance(db, str) else None)
    cache = kwargs.get("cache")
    cache = Path(cache) if isinstance(cache, (str, Path)) else default_cache_path()
    for what, path in (("the evaluation store", store), ("the LLM response cache", cache)):
        if path is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                files[f"{what} {path}{suffix}"] = Path(f"{path}{suffix}")
    return files


_command_started: datetime | None = None


def mark_command_start() -> None:
    """Note now as the time the current ``assay`` command began its work.

    The root command calls this before any sub-command runs; an evaluation a command
    saves gets it as ``created`` (when the work began), ``finished`` being when it was
    stored.
    """
    global _command_started
    _command_started = datetime.now(UTC)


#: A domain's view of its records for ``--format table``: a text, or rich renderables.
View = Callable[["MetricSet"], "str | list[Any]"]


def emit(
    metrics: MetricSet,
    *,
    fmt: OutputFormat = OutputFormat.json,
    out: Path | None = None,
    title: str | None = None,
    view: View | None = None,
) -> None:
    """Print metrics as JSON (default) or a table, or write the JSON atomically to ``out``.

    ``--format table`` prints ``view(metrics)`` when the domain has a view of its own (a
    classification report, fairness by group), else one row per record.
    """
    if out is not None:
        write_atomic(out, metrics.to_json(indent=2) + "\n")
    if fmt is OutputFormat.table:
        from rich.console import Console

        from assay.report.table import metrics_table

        shown = view(metrics) if view is not None else [metrics_table(metrics, title=title)]
        if isinstance(shown, str):
            sys.stdout.write(printable(shown, keep_newlines=True))
        else:
            Console().print(*shown)
    elif out is None:
        sys.stdout.write(metrics.to_json(indent=2) + "\n")


def parse_floats(text: str | None, *, option: str) -> list[float] | None:
    """Parse ``"0.5,0.75"`` into floats; a clear error naming the option otherwise."""
    from assay._validation import parse_numbers

    return parse_numbers(text, source=option)


def check_input_file(path: str | Path, *, option: str | None = None) -> Path:
    """``path`` if it is an existing regular file; otherwise InvalidInputError naming it."""
    p = Path(path)
    where = f"{option} {p}" if option else str(p)
    if not p.exists():
        raise InvalidInputError("file not found", source=where)
    if p.is_dir():
        raise InvalidInputError("is a directory, expected a file", source=where)
    return p


def check_output_file(path: str | Path | None, *, option: str = "--out") -> Path | None:
    """Check ``--out`` before any work is done (not a directory, parent folder usable)."""
    return None if path is None else check_writable_file(path, option=option)


def check_nonnegative(value: float | None, *, option: str) -> None:
    """A count or a duration given on the command line must not be negative."""
    if value is not None and value < 0:
        raise InvalidInputError(f"must be >= 0, got {value:g}", source=option)


SAVE_HELP = (
    "Also record this evaluation in the evaluation store "
    "($ASSAY_DATABASE_URL, default $ASSAY_HOME/assay.db)."
)
FORMAT_HELP = "json (metric records, the default) or table (for people)."


def save_option() -> Any:
    """The ``--save`` flag, for any command that computes metrics.

    Example (in a command)::

        def command(..., save: bool = save_option(), db: str | None = db_option()):
            metrics = ...
            publish(metrics, fmt=fmt, out=out, save=save, db=db, kind="classification",
                    dataset=str(path), parameters={...})
    """
    return typer.Option(False, "--save", help=SAVE_HELP)


def db_option(help: str = "Evaluation store URL or SQLite file (with --save).") -> Any:
    """The ``--db URL`` option naming the evaluation store (default: the environment's);
    ``help``: a command's own words."""
    return typer.Option(None, "--db", help=help)


def format_option(help: str | None = None) -> Any:
    """The ``--format/-f json|table`` option; json is the default for every command
    (``help``: a command's own words for its table)."""
    return typer.Option(OutputFormat.json, "--format", "-f", help=help or FORMAT_HELP)


def out_option(
    help: str = "Write the JSON records to this file (atomically) instead of stdout.",
) -> Any:
    """The ``--out/-o FILE`` option."""
    return typer.Option(None, "--out", "-o", help=help, dir_okay=False)


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
    started: datetime | None = None,
    served_model: str | None = None,
    error: str | None = None,
) -> int | None:
    """Store ``metrics`` as a finished evaluation when ``save`` is true (``failed``, with
    its reason, when ``error`` is given); returns its id.

    ``started`` is when the work began (it becomes the evaluation's ``created``; default:
    when the command started, :func:`mark_command_start`, else now). A note naming the
    evaluation id and the store goes to stderr (stdout stays the
    command's JSON). Store failures raise :class:`assay.store.StoreError`, which
    :func:`guarded` turns into one line on stderr and exit code 2.
    """
    if not save:
        return None
    from assay.store import Store

    labels = _save_labels
    with Store(url) as store:
        eid = store.save(
            metrics,
            units=labels.get("units", True),
            name=labels.get("name"),
            tags=labels.get("tags") or None,
            kind=kind,
            dataset=dataset,
            model=model,
            parameters=parameters,
            items=items,
            created=started or _command_started,
            served_model=served_model,
            error=error,
        )
        how = "saved" if error is None else "stored as failed"
        note(f"{how} evaluation {eid} ({kind}) to {store.display_url}")
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
    started: datetime | None = None,
    view: View | None = None,
    served_model: str | None = None,
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
        started=started,
        served_model=served_model,
    )
    emit(metrics, fmt=fmt, out=out, title=title, view=view)
    return eid
