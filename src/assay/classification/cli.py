"""``assay classification``: evaluate long-form ground truths and predictions from files."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.classification.evaluator import METRIC_TYPES, ClassificationEvaluator
from assay.cli_support import (
    OutputFormat,
    db_option,
    emit,
    guarded,
    parse_floats,
    save_metrics,
    save_option,
)
from assay.io.tables import read_table


def register(app: typer.Typer) -> None:
    @app.command("classification")
    @guarded
    def classification(
        groundtruths: Path = typer.Option(
            ...,
            help="Ground truths: JSONL, CSV or Parquet with columns uid, key (optional), value.",
        ),
        predictions: Path = typer.Option(
            ...,
            help="Predictions: JSONL, CSV or Parquet with columns uid, key (optional), value, score in 0..1.",
        ),
        score_thresholds: str = typer.Option(
            "0.0", help="Comma-separated thresholds for Counts/Precision/Recall/F1/Accuracy."
        ),
        pr_curve_max_examples: int = typer.Option(
            1,
            min=0,
            help="Example datum uids kept per observation in DetailedPrecisionRecallCurve.",
        ),
        metrics: str | None = typer.Option(
            None, help=f"Comma-separated metric types (default all): {', '.join(METRIC_TYPES)}."
        ),
        zero_division: float | None = typer.Option(
            None,
            help="Report this value where a denominator is 0 (default: undefined, value null).",
        ),
        format: OutputFormat = typer.Option(
            OutputFormat.json, "--format", help="json (metric records) or table (for people)."
        ),
        out: Path | None = typer.Option(
            None, help="Write the JSON records to this file (atomically) instead of stdout."
        ),
        save: bool = save_option(),
        db: str | None = db_option(),
    ) -> None:
        """Classification metrics: counts, precision/recall/F1/accuracy, ROC AUC, PR curves.

        A datum has one ground-truth value per label key ("class" if no key column) and any
        number of scored predicted values; aggregate metrics use each datum's top prediction.
        """
        ev = ClassificationEvaluator(
            score_thresholds=parse_floats(score_thresholds, option="--score-thresholds") or [0.0],
            pr_curve_max_examples=pr_curve_max_examples,
            metrics=[m.strip() for m in metrics.split(",")] if metrics else None,
            zero_division=zero_division,
        )
        ev.add(
            read_table(groundtruths),
            read_table(predictions),
            gt_source=str(groundtruths),
            pd_source=str(predictions),
        )
        metrics = ev.compute()
        emit(metrics, fmt=format, out=out, title="classification")
        params = {
            "groundtruths": str(groundtruths),
            "predictions": str(predictions),
            "score_thresholds": list(ev.score_thresholds),
            "pr_curve_max_examples": pr_curve_max_examples,
            "zero_division": zero_division,
        }
        save_metrics(
            metrics,
            kind="classification",
            dataset=str(groundtruths),
            parameters=params,
            save=save,
            url=db,
        )
