"""``assay runs list|show|latest|export`` and ``assay compare``: the store from the command line.

Every command takes ``--db URL`` (default ``$ASSAY_DATABASE_URL`` or
``$ASSAY_HOME/assay.db``) and prints JSON, or a table with ``--format table``. These
commands only read: a store that does not exist is an error (exit 2) and nothing is
created. Model URLs are shown with their password masked.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.cli_support import (
    OutputFormat,
    cell,
    check_output_file,
    format_option,
    guarded,
    note,
    write_atomic,
)
from assay.errors import InvalidInputError
from assay.terminal import printable

__all__ = ["register", "runs_app", "select_runs", "RUNS_HELP", "LAST_HELP"]

runs_app = typer.Typer(
    name="runs",
    help="Stored evaluations: list, show, latest, export, upgrade.",
    no_args_is_help=True,
)

MODEL_FILTER_HELP = (
    "Only this model, typed any way: with or without credentials, or under another name "
    "its server answered as."
)
DB_HELP = "Store URL or SQLite file (default: $ASSAY_DATABASE_URL or $ASSAY_HOME/assay.db)."


class ExportFormat(str, Enum):
    json = "json"
    csv = "csv"
    every_eval_ever = "every-eval-ever"


def open_store(db: str | None):  # type: ignore[no-untyped-def]
    from assay.store import Store

    return Store(db, create=False)  # reading never creates a store


def _when(t: object) -> str:
    return "" if t is None else t.strftime("%m-%d %H:%M")  # type: ignore[attr-defined]


def _took(e: object) -> str:
    """How long the evaluation ran: ``0.4s``, ``12m05s``, ``3h02m``."""
    s = max(0.0, (e.finished - e.created).total_seconds())  # type: ignore[attr-defined]
    if s < 60:
        return f"{s:.1f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


def _table(evs: list, title: str | None = None) -> Table:  # type: ignore[type-arg]
    """One row per evaluation, readable in an 80-column terminal.

    Each cell holds two lines where two facts belong together: when it began (``MM-DD
    HH:MM`` UTC) over how long it took, the kind over the dataset. Kinds, ids, times,
    statuses and counts never break; the dataset and the model, free text of any length,
    wrap inside their cells. The JSON output keeps the full timestamps.
    """
    from rich import box

    kinds = max((len(str(e.kind)) for e in evs), default=4)
    t = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        caption="times in UTC",
    )
    t.add_column("id", no_wrap=True, justify="right")
    t.add_column("created", no_wrap=True)
    t.add_column("kind / dataset", overflow="fold", min_width=max(kinds, 14))
    t.add_column("model", overflow="fold", min_width=8)
    t.add_column("status", no_wrap=True)
    t.add_column("metrics", no_wrap=True, justify="right")
    for e in evs:
        n = "" if e.n_metrics is None else str(e.n_metrics)
        when = _when(e.created) + (f"\ntook {_took(e)}" if e.finished is not None else "")
        what = printable(e.kind) + ("" if e.dataset is None else "\n" + printable(e.dataset))
        # user values verbatim (never markup), control characters escaped
        model = Text(printable(e.model) + _served_line(e))
        t.add_row(cell(e.id), Text(when), Text(what), model, cell(e.status), cell(n))
    return t


def _served_line(e: object) -> str:
    """``\nas NAME`` under the model when its answers named another model (the name
    after ``#`` alone when the endpoint is the same), else nothing."""
    model, served = e.model, e.served_model  # type: ignore[attr-defined]
    if not served or served == model:
        return ""
    base, sep, name = served.rpartition("#")
    short = name if sep and str(model).startswith(base + "#") else served
    return "\nas " + printable(short)


def _print_json(obj: object) -> None:
    import json

    sys.stdout.write(json.dumps(obj, indent=2, allow_nan=False) + "\n")


@runs_app.command("list")
@guarded
def list_runs(
    kind: str = typer.Option(
        None, "--kind", "-k", help="Only this kind (classification, llm_fairness, ...)."
    ),
    dataset: str = typer.Option(None, "--dataset", "-d", help="Only this dataset."),
    model: str = typer.Option(None, "--model", "-m", help=MODEL_FILTER_HELP),
    status: str = typer.Option(None, "--status", help="running, finished or failed."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="At most this many, newest first."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
    fmt: OutputFormat = format_option(),
) -> None:
    """List stored evaluations, newest first."""
    with open_store(db) as st:
        evs = st.list(kind=kind, dataset=dataset, model=model, status=status, limit=limit)
    if fmt is OutputFormat.table:
        Console().print(_table(evs, title="evaluations"))
    else:
        _print_json([e.to_dict() for e in evs])


@runs_app.command("show")
@guarded
def show(
    evaluation_id: int = typer.Argument(..., help="The evaluation's id."),
    items: bool = typer.Option(False, "--items", help="Include per-item LLM records."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
    fmt: OutputFormat = format_option(),
) -> None:
    """One evaluation with its metric records."""
    with open_store(db) as st:
        ev = st.get(evaluation_id, items=items)
    if fmt is OutputFormat.table:
        from assay.report.table import metrics_table

        c = Console()
        c.print(_table([ev]))
        c.print(metrics_table(ev.metrics, title=f"evaluation {ev.id} metrics"))  # type: ignore[arg-type]
    else:
        _print_json(ev.to_dict())


@runs_app.command("latest")
@guarded
def latest(
    kind: str = typer.Option(
        ..., "--kind", "-k", help="The evaluation kind (required), e.g. classification."
    ),
    dataset: list[str] = typer.Option(
        None, "--dataset", "-d", help="Datasets (repeat); default: every dataset."
    ),
    model: str = typer.Option(None, "--model", "-m", help=MODEL_FILTER_HELP),
    require: bool = typer.Option(
        False, "--require", help="Fail if a named dataset has no finished evaluation."
    ),
    db: str = typer.Option(None, "--db", help=DB_HELP),
    fmt: OutputFormat = format_option(),
) -> None:
    """The latest finished evaluation of one kind per dataset (and model), with metrics.

    --kind is required: "latest" is asked per kind (use 'assay runs list' to see all).
    """
    with open_store(db) as st:
        found = st.latest_per_dataset(
            kind=kind, datasets=dataset or None, model=model, require=require
        )
    if fmt is OutputFormat.table:
        Console().print(_table(list(found.values()), title=f"latest {kind}"))
    else:
        _print_json({d: e.to_dict() for d, e in found.items()})


@runs_app.command("export")
@guarded
def export(
    evaluation_ids: list[int] = typer.Argument(
        None, help="Evaluation ids (default: every match of the filters)."
    ),
    kind: str = typer.Option(None, "--kind", "-k", help="Only evaluations of this kind."),
    dataset: str = typer.Option(None, "--dataset", "-d", help="Only this dataset."),
    model: str = typer.Option(None, "--model", "-m", help=MODEL_FILTER_HELP),
    status: str = typer.Option(None, "--status", help="Only running, finished or failed."),
    items: bool = typer.Option(
        False, "--items", help="Export per-item LLM records (CSV: one row per item)."
    ),
    fmt: ExportFormat = typer.Option(
        ExportFormat.json,
        "--format",
        "-f",
        help="json, csv, or every-eval-ever (the Every Eval Ever files of each run, "
        "under --out DIRECTORY: see docs/import.md).",
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Write here (atomically) instead of stdout."
    ),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Export evaluations (metrics, optionally items) as JSON or CSV.

    Give evaluation ids, or filters (--kind, --dataset, --model, --status), not both.
    """
    if fmt is ExportFormat.every_eval_ever:
        from assay.importers.cli import export_every_eval_ever

        return export_every_eval_ever(open_store(db), list(evaluation_ids or []), out)
    check_output_file(out)
    with open_store(db) as st:
        ids = list(evaluation_ids or [])
        if not ids:
            ids = [e.id for e in st.list(kind=kind, dataset=dataset, model=model, status=status)]
            ids.reverse()  # oldest first in exports
        elif any(v is not None for v in (kind, dataset, model, status)):
            raise InvalidInputError(
                "give evaluation ids or filters, not both", source="runs export"
            )
        text = st.export(ids, fmt=fmt.value, items=items)
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        write_atomic(out, text if text.endswith("\n") else text + "\n")


@runs_app.command("upgrade")
@guarded
def upgrade(db: str = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Bring a store made by an older assay up to date: add the tables and columns added
    since (every row kept). Reading never changes a store; any --save upgrades it too."""
    from assay.store import Store
    from assay.store.config import store_file

    path = store_file(db)
    if path is not None and not path.exists():
        raise InvalidInputError(
            "no such store (nothing has been saved there yet)", source=str(path)
        )
    with Store(db) as st:
        added = st.upgraded
        where = st.display_url
    note(f"{where}: added {', '.join(added)}" if added else f"{where}: already up to date")


RUNS_HELP = "Evaluation ids (the first is the baseline); or --kind with --last."
LAST_HELP = "With --kind: the newest N finished runs of that kind (oldest first)."


def select_runs(
    st: object,
    ids: list[int] | None,
    kind: str | None,
    dataset: str | None,
    last: int | None,
    *,
    model: str | None = None,
) -> list[int]:
    """Evaluation ids named on the command line, or the ``--last N`` runs of ``--kind``
    (of ``--model``: matched as ``runs list --model`` matches, however it was typed)."""
    source = "run selection"
    if ids:
        if any(v is not None for v in (kind, dataset, last, model)):
            raise InvalidInputError("give evaluation ids or --kind/--last, not both", source=source)
        return list(ids)
    if kind is None or last is None:
        raise InvalidInputError("give evaluation ids, or --kind K and --last N", source=source)
    evs = st.list(kind=kind, dataset=dataset, model=model, status="finished", limit=last)  # type: ignore[attr-defined]
    if not evs:
        where = f"kind {kind!r}" + (f", dataset {dataset!r}" if dataset else "")
        if model is not None:
            from assay.store.rows import model_key

            where += f", model {model_key(model)!r}"
        raise InvalidInputError(f"no finished evaluation of {where}", source=source)
    return [e.id for e in reversed(evs)]


class CompareFormat(str, Enum):
    json = "json"
    table = "table"
    csv = "csv"


def _compare_table(df: object) -> Table:
    from assay.store.comparison import finite_or_none

    base = df.attrs["baseline"]  # type: ignore[attr-defined]
    t = Table(title=f"runs compared (baseline: evaluation {base})")
    cols = list(df.columns)  # type: ignore[attr-defined]
    for c in cols:
        t.add_column(
            c.replace("_", " "), justify="left" if c in ("type", "parameters") else "right"
        )
    for row in df.itertuples(index=False):  # type: ignore[attr-defined]
        t.add_row(*(cell(_compare_cell(c, finite_or_none(v))) for c, v in zip(cols, row)))
    return t


def _compare_cell(column: str, v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:+.4f}" if column.startswith("diff_") else f"{v:.4f}"
    return str(v)


def compare_command(
    evaluation_ids: list[int] = typer.Argument(None, help=RUNS_HELP),
    kind: str = typer.Option(None, "--kind", "-k", help="Compare runs of this kind (with --last)."),
    dataset: str = typer.Option(None, "--dataset", "-d", help="With --kind: only this dataset."),
    last: int = typer.Option(None, "--last", "-n", min=2, help=LAST_HELP),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="With --kind: only runs of this model (matched as runs list --model matches).",
    ),
    fmt: CompareFormat = typer.Option(
        CompareFormat.json, "--format", "-f", help="json (default), table or csv."
    ),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Metrics of several stored runs side by side, with differences and interval overlap.

    Records are matched by type and parameters (not n, stderr or interval bounds); the
    first run is the baseline: diff_R = value_R - value_baseline, and overlap_R says
    whether both records' intervals (ci_low, ci_high) share a point (- without intervals).

    Examples: assay compare 12 15; assay compare --kind classification -d iris.csv --last 3;
    assay compare --kind llm_fairness -d pisa -m http://host/v1#smollm2 --last 2
    """
    from assay.store.comparison import compare, finite_or_none

    with open_store(db) as st:
        ids = select_runs(st, evaluation_ids, kind, dataset, last, model=model)
        df = compare(ids, store=st)
        unfinished = [e for e in map(st.get, df.attrs["runs"]) if e.status != "finished"]
    for e in unfinished:  # its records may be partial: said, not hidden
        note(f"evaluation {e.id} is {e.status}: its records may be partial or missing")
    if fmt is CompareFormat.table:
        Console().print(_compare_table(df))
    elif fmt is CompareFormat.csv:
        sys.stdout.write(df.to_csv(index=False))
    else:
        rows = [{k: finite_or_none(v) for k, v in r.items()} for r in df.to_dict("records")]
        _print_json({"runs": df.attrs["runs"], "baseline": df.attrs["baseline"], "rows": rows})


def register(app: typer.Typer) -> None:
    """Add ``assay runs`` and ``assay compare`` to the ``assay`` command."""
    app.add_typer(runs_app, name="runs")
    app.command("compare")(guarded(compare_command))
