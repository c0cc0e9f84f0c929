"""``assay report RUN... --out report.html``: one self-contained HTML report of stored runs."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.support import check_output_file, guarded, note
from assay.errors import InvalidInputError

__all__ = ["register"]


def report_command(
    evaluation_ids: list[int] = typer.Argument(
        None, help="Evaluation ids, in the order shown; or --kind with --last."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="The HTML file to write (atomically)."),
    kind: str = typer.Option(None, "--kind", "-k", help="Report runs of this kind (with --last)."),
    dataset: str = typer.Option(None, "--dataset", "-d", help="With --kind: only this dataset."),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="With --kind: only runs of this model (matched as runs list --model matches).",
    ),
    last: int = typer.Option(
        None, "--last", "-n", min=1, help="With --kind: the newest N finished runs."
    ),
    title: str = typer.Option("assay report", "--title", help="The page's title."),
    db: str = typer.Option(
        None,
        "--db",
        help="Store URL or SQLite file (default: $ASSAY_DATABASE_URL or $ASSAY_HOME/assay.db).",
    ),
) -> None:
    """Write one HTML file with a section per kind: plots, tables, metrics, LLM items.

    The file is self-contained (plotly.js is inlined once; opening it makes no network
    request) and is built from the store alone. Runs of one kind are overlaid or grouped.

    Examples: assay report 3 4 7 --out report.html;
    assay report --kind classification --last 3 -o cls.html
    """
    from assay.cli.runs import open_store, select_runs
    from assay.report.page import write_report

    check_output_file(out)
    with open_store(db) as st:
        ids = select_runs(st, evaluation_ids, kind, dataset, last, model=model)
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise InvalidInputError(f"evaluation {twice[0]} is named twice", source="report")
        runs = [st.get(i, items=True) for i in ids]
        path = write_report(runs, out, title=title, store=st)
    note(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(runs)} runs)")
    typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add ``assay report`` to the ``assay`` command."""
    app.command("report")(guarded(report_command))
