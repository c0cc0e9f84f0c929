"""``assay scoring``: evaluate automated scores against human scores (RSMTool's tables).

Writes ``eval.csv``, ``eval_short.csv``, ``consistency.csv``, ``degradation.csv``,
``disattenuated_correlations.csv``, ``true_score_eval.csv``, ``eval_by_<subgroup>.csv``,
``consistency_by_<subgroup>.csv``, ``disattenuated_correlations_by_<subgroup>.csv``,
``fairness_metrics_by_<subgroup>.csv`` and ``undefined_metrics.csv`` into ``--out-dir``, plus
``metrics.json`` (all numbers as Metric records) and prints the records (JSON or a table).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from assay.cli_support import (
    OutputFormat,
    db_option,
    emit,
    guarded,
    save_metrics,
    save_option,
    write_atomic,
)

__all__ = ["register"]


def frame_table(df: pd.DataFrame, title: str) -> Table:
    """A rich table of a small DataFrame (index first; NaN shown as 'undefined')."""
    t = Table(title=title)
    t.add_column("")
    for c in df.columns:
        t.add_column(str(c), justify="right")
    for idx, row in df.iterrows():
        cells = []
        for v in row:
            if isinstance(v, (float, int)) and not isinstance(v, bool):
                v = float(v)
                cells.append(
                    "undefined"
                    if v != v
                    else (str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4f}")
                )
            else:
                cells.append(str(v))
        t.add_row(str(idx), *cells)
    return t


def register(app: typer.Typer) -> None:
    """Add the ``scoring`` command to ``app``."""

    @app.command("scoring")
    @guarded
    def scoring(
        data: Path = typer.Option(
            ..., "--data", help="Table with one response per row: CSV, Parquet, JSONL or JSON."
        ),
        human: str = typer.Option(..., "--human", help="Column of the (first) human score."),
        system: str = typer.Option(..., "--system", help="Column of the system score."),
        human2: list[str] = typer.Option(
            [], "--human2", help="Column of a second human score (repeat for more raters)."
        ),
        subgroup: list[str] = typer.Option(
            [], "--subgroup", help="Subgroup column for fairness tables (repeatable)."
        ),
        out_dir: Path = typer.Option(
            ..., "--out-dir", help="Directory for the CSV tables and metrics.json."
        ),
        keep_zero_scores: bool = typer.Option(
            False, "--keep-zero-scores", help="Do not exclude responses whose human score is 0."
        ),
        rater_error_variance: float | None = typer.Option(
            None,
            "--rater-error-variance",
            help="Rater error variance estimated elsewhere (for PRMSE).",
        ),
        fmt: OutputFormat = typer.Option(
            OutputFormat.table, "--format", help="How to print the records."
        ),
        save: bool = save_option(),
        db: str | None = db_option(),
    ) -> None:
        """Evaluate system scores against human scores: agreement, kappa, QWK, r, SMD, R2, PRMSE, DSM, fairness."""
        from assay.scoring.evaluator import evaluate_scoring

        res = evaluate_scoring(
            data,
            human=human,
            system=system,
            human2=human2 or None,
            subgroups=subgroup,
            exclude_zero_scores=not keep_zero_scores,
            rater_error_variance=rater_error_variance,
            source=str(data),
        )
        res.write_csv(out_dir)
        write_atomic(out_dir / "metrics.json", res.metrics.to_json(indent=2) + "\n")
        if fmt is OutputFormat.table:
            console = Console()
            for name in ("eval", "consistency", "true_score_eval"):
                if name in res.tables:
                    console.print(frame_table(res.tables[name].T, title=name))
            for name, table in res.tables.items():
                if name.startswith("fairness_metrics_by_"):
                    console.print(frame_table(table, title=name))
            console.print(f"all tables written to {out_dir}")
        else:
            emit(res.metrics, fmt=fmt)
        if res.dropped:
            typer.echo(f"dropped responses: {res.dropped}", err=True)
        params = {
            "human": human,
            "system": system,
            "human2": list(human2),
            "subgroups": list(subgroup),
            "exclude_zero_scores": not keep_zero_scores,
            "rater_error_variance": rater_error_variance,
        }
        save_metrics(
            res.metrics, kind="scoring", dataset=str(data), parameters=params, save=save, url=db
        )
