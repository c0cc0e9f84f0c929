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

from assay.cli.support import (
    OutputFormat,
    cell,
    check_output_file,
    db_option,
    format_option,
    guarded,
    note,
)
from assay.errors import InvalidInputError
from assay.io.files import write_atomic
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
    named = any(getattr(e, "name", None) or getattr(e, "tags", None) for e in evs)
    t.add_column("id", no_wrap=True, justify="right")
    if named:  # --name and --tag of the runs that have them
        t.add_column("name", overflow="fold", min_width=8)
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
        first = [cell(e.id)]
        if named:
            tags = "".join(f"\n{k}={v}" for k, v in (e.tags or {}).items())
            first.append(Text(printable((e.name or "") + tags)))
        t.add_row(*first, Text(when), Text(what), model, cell(e.status), cell(n))
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
    db: str = db_option(DB_HELP),
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
    db: str = db_option(DB_HELP),
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
    db: str = db_option(DB_HELP),
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
    db: str = db_option(DB_HELP),
) -> None:
    """Export evaluations (metrics, optionally items) as JSON or CSV.

    Give evaluation ids, or filters (--kind, --dataset, --model, --status), not both.
    """
    if fmt is ExportFormat.every_eval_ever:
        from assay.cli.imports import export_every_eval_ever

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
def upgrade(db: str = db_option(DB_HELP)) -> None:
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


def _compare_tables(df: object) -> list[Table]:
    """The comparison for people, one table per run compared with the baseline: per
    record, both values, the difference with its interval, the adjusted p-value with the
    test and the paired units (names and parameters wrap, never cut)."""
    from assay.store.comparison import finite_or_none

    attrs = df.attrs  # type: ignore[attr-defined]
    runs, labels = attrs["runs"], attrs.get("labels") or {}
    base = runs[0]
    rows = [{k: finite_or_none(v) for k, v in r.items()} for r in df.to_dict("records")]  # type: ignore[attr-defined]
    out = []
    for r in runs[1:]:
        t = Table(title=Text(f"{labels.get(r, r)} against {labels.get(base, base)} (baseline)"))
        t.add_column("record", overflow="fold", ratio=3)
        t.add_column(Text(str(labels.get(base, base))), justify="right", overflow="fold", ratio=1)
        t.add_column(Text(str(labels.get(r, r))), justify="right", overflow="fold", ratio=1)
        t.add_column("difference [interval]", justify="right", overflow="fold", ratio=2)
        t.add_column("adjusted p (test, n)", justify="right", overflow="fold", ratio=2)
        for row in rows:
            lo, hi = row.get(f"diff_ci_low_{r}"), row.get(f"diff_ci_high_{r}")
            ci = "" if lo is None or hi is None else f"\n[{lo:+.4f}, {hi:+.4f}]"
            test, n = row.get(f"test_{r}"), row.get(f"n_paired_{r}")
            how = "" if test is None else f"\n{test}" + (f", n={n}" if n else "")
            t.add_row(
                Text(_record(row["type"], row["parameters"])),
                _num(row.get(f"value_{base}")),
                _num(row.get(f"value_{r}")),
                _num(row.get(f"diff_{r}"), signed=True) + ci,
                _p(row.get(f"p_adjusted_{r}")) + how,
            )
        out.append(t)
    return out


def _record(kind: object, parameters: object) -> str:
    """A record's type over its parameters (user text verbatim, control characters
    escaped)."""
    return printable(str(kind)) + (f"\n{printable(str(parameters))}" if parameters else "")


def _num(v: object, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v:+.4f}" if signed else f"{v:.4f}"  # type: ignore[str-format]


def _p(v: object) -> str:
    if v is None:
        return "-"
    return "<0.0001" if v < 1e-4 else f"{v:.4f}"  # type: ignore[operator]


def _rank_table(ranks: list, labels: dict) -> Table:  # type: ignore[type-arg]
    t = Table(title="ranks (1 = best; interval over resamples of the shared units)")
    for c in ("record", "run", "value", "rank", "rank interval", "group"):
        t.add_column(c, overflow="fold", justify="left" if c in ("record", "run") else "right")
    for r in ranks:
        lo, hi = r["rank_low"], r["rank_high"]
        t.add_row(
            Text(_record(r["type"], r["parameters"])),
            Text(printable(str(labels.get(r["run"], r["run"])))),
            _num(r["value"]),
            str(r["rank"]),
            "-" if lo is None else f"{lo}-{hi}",
            r["group"],
        )
    return t


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
    adjust: str = typer.Option(
        "holm",
        "--adjust",
        help="p-values adjusted over the runs compared: holm (default), bh "
        "(Benjamini-Hochberg) or none.",
    ),
    rank: str = typer.Option(
        None,
        "--rank",
        metavar="METRIC",
        help="Rank the runs by this record type, with rank intervals and significance groups.",
    ),
    lower_is_better: bool = typer.Option(
        False, "--lower-is-better", help="With --rank: the lowest value ranks first."
    ),
    mde: float = typer.Option(
        None, "--mde", metavar="D", help="Add n_needed_R: the units needed to detect D."
    ),
    target_width: float = typer.Option(
        None,
        "--target-width",
        metavar="W",
        help="Add n_for_width_R: the units needed for an interval of the difference W wide.",
    ),
    ignore_param: str = typer.Option(
        None,
        "--ignore-param",
        metavar="A,B",
        help="Parameters left out when records are matched (runs differing in a setting, "
        "e.g. answer_mode, line up).",
    ),
    level: float = typer.Option(
        0.95, "--level", help="Level of the intervals; tests at alpha = 1 - level."
    ),
    num_bootstrap: int = typer.Option(1000, "--num-bootstrap", help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    fmt: CompareFormat = typer.Option(
        CompareFormat.json, "--format", "-f", help="json (default), table or csv."
    ),
    db: str = db_option(DB_HELP),
) -> None:
    """Compare stored runs with the first (the baseline), paired on the units they share.

    For every record: each run's value, and per other run R the difference with its
    interval (diff_R, diff_ci_low_R, diff_ci_high_R), the p-value of the test named in
    test_R (delong for ROC AUC, mcnemar for right/wrong units, paired_t for per-unit
    means, paired_bootstrap otherwise; unpaired without shared units), ci_method_R (how
    the interval is made: delong_normal, newcombe_hybrid_score, t, bootstrap_normal),
    p_adjusted_R (--adjust), mde_R (the minimum detectable difference at power 0.8) and n_paired_R.

    Examples: assay compare 12 15; assay compare 3 4 5 --rank Accuracy -f table;
    assay compare --kind classification -d iris.csv --last 3
    """
    from assay.store.comparison import comparison, finite_or_none

    if num_bootstrap < 2 or num_bootstrap > 100_000:
        raise InvalidInputError(
            f"must be from 2 to 100,000, got {num_bootstrap}", source="--num-bootstrap"
        )
    ignore = [p.strip() for p in (ignore_param or "").split(",") if p.strip()]
    with open_store(db) as st:
        ids = select_runs(st, evaluation_ids, kind, dataset, last, model=model)
        found = comparison(
            ids, store=st, adjust=adjust, level=level, num_bootstrap=num_bootstrap, seed=seed,
            mde=mde, target_width=target_width, ignore_params=ignore, rank=rank,
            lower_is_better=lower_is_better,
        )  # fmt: skip
        unfinished = [e for e in map(st.get, found.runs) if e.status != "finished"]
    for e in unfinished:  # its records may be partial: said, not hidden
        note(f"evaluation {e.id} is {e.status}: its records may be partial or missing")
    for line in found.notices:
        note(line)
    df = found.frame()
    if fmt is CompareFormat.table:
        c = Console()
        for table in _compare_tables(df):
            c.print(table)
        if found.ranks is not None:
            c.print(_rank_table(found.ranks, found.labels))
    elif fmt is CompareFormat.csv:
        sys.stdout.write(df.to_csv(index=False))
    else:
        rows = [{k: finite_or_none(v) for k, v in r.items()} for r in df.to_dict("records")]
        out: dict[str, object] = {"runs": found.runs, "baseline": found.runs[0]}
        out |= {"labels": {str(k): v for k, v in found.labels.items()}, "rows": rows}
        if found.ranks is not None:
            out["ranks"] = found.ranks
        _print_json(out)


def plan_command(
    run: int = typer.Option(..., "--from", help="The pilot run (its units are needed)."),
    mde: float = typer.Option(
        None, "--mde", metavar="D", help="The difference to detect (with power 0.8)."
    ),
    target_width: float = typer.Option(
        None, "--target-width", metavar="W", help="The width of the difference's interval."
    ),
    level: float = typer.Option(0.95, "--level", help="Level; tests at alpha = 1 - level."),
    num_bootstrap: int = typer.Option(1000, "--num-bootstrap", help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    fmt: OutputFormat = format_option(),
    db: str = db_option(DB_HELP),
) -> None:
    """How many units a comparison needs, from one pilot run, before a second is paid for.

    Assumes the second model's per-unit variance equals the pilot's and the two runs are
    independent given the unit (the variance of a difference is then twice the pilot's):
    for every record with a tally, the pilot's standard error gives mde (power 0.8 on the
    pilot's units), n_needed (with --mde) and n_for_width (with --target-width).
    """
    from assay.store.plan import plan

    with open_store(db) as st:
        rows = plan(st, run, mde=mde, target_width=target_width, level=level,
                    num_bootstrap=num_bootstrap, seed=seed)  # fmt: skip
    if fmt is OutputFormat.table:
        t = Table(title=f"plan from evaluation {run}")
        for c in ("record", "value", "se", "n", "mde", "n_needed", "n_for_width"):
            t.add_column(c, overflow="fold", justify="left" if c == "record" else "right")
        for r in rows:
            t.add_row(
                Text(_record(r["type"], r["parameters"])),
                *(cell("-" if r.get(c) is None else (f"{r[c]:.4f}" if isinstance(r[c], float)
                   else str(r[c]))) for c in ("value", "se", "n", "mde", "n_needed",
                                             "n_for_width")),
            )  # fmt: skip
        Console().print(t)
    else:
        _print_json({"run": run, "rows": rows})


def register(app: typer.Typer) -> None:
    """Add ``assay runs`` and ``assay compare`` to the ``assay`` command."""
    app.add_typer(runs_app, name="runs")
    app.command("compare")(guarded(compare_command))
    app.command("plan")(guarded(plan_command))
