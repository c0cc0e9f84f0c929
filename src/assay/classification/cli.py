"""``assay classification``: evaluate long-form ground truths and predictions from files.

Only typer and the shared CLI helpers are imported at module level; numpy, pandas and the
classification code load inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli_support import OutputFormat, db_option, guarded, parse_floats, publish, save_option

# Kept in step with assay.classification.evaluator.METRIC_TYPES (a test checks it).
METRIC_CHOICES = (
    "Counts, Precision, Recall, F1, Accuracy, ROCAUC, mROCAUC, PrecisionRecallCurve, "
    "DetailedPrecisionRecallCurve, ConfusionMatrix, ConfusionMatrixWithExamples, Examples"
)


#: Evaluator argument -> the option that sets it, so configuration errors name the option.
OPTIONS = {
    "score_thresholds": "--score-thresholds",
    "pr_curve_max_examples": "--pr-curve-max-examples",
    "metrics": "--metrics",
    "zero_division": "--zero-division",
}


def _evaluator(
    score_thresholds: str,
    pr_curve_max_examples: int,
    metrics: str | None,
    zero_division: float | None,
    out: Path | None,
) -> Any:
    """The configured evaluator; a bad option (or --out) fails before any file is read."""
    from assay.classification.evaluator import ClassificationEvaluator
    from assay.errors import InvalidInputError
    from assay.io.files import check_writable_file

    if out is not None:
        check_writable_file(out, option="--out")
    try:
        return ClassificationEvaluator(
            score_thresholds=parse_floats(score_thresholds, option="--score-thresholds") or [0.0],
            pr_curve_max_examples=pr_curve_max_examples,
            metrics=[m.strip() for m in metrics.split(",")] if metrics else None,
            zero_division=zero_division,
        )
    except InvalidInputError as e:
        where = OPTIONS.get(str(e.source), e.source)
        raise InvalidInputError(e.reason, source=where, record=e.record) from None


def _add_files(ev: Any, groundtruths: Path, predictions: Path) -> None:
    from assay.errors import InvalidInputError
    from assay.io.tables import read_table

    tables = {path: read_table(path) for path in (groundtruths, predictions)}
    for path, table in tables.items():
        if len(table) == 0:
            raise InvalidInputError("the file holds no rows", source=str(path))
    ev.add(
        tables[groundtruths],
        tables[predictions],
        gt_source=str(groundtruths),
        pd_source=str(predictions),
    )


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
            help="Predictions: JSONL, CSV or Parquet with columns uid, key (optional), value, "
            "score in 0..1.",
        ),
        score_thresholds: str = typer.Option(
            "0.0",
            help="Comma-separated thresholds in 0..1 for Counts/Precision/Recall/F1/Accuracy.",
        ),
        pr_curve_max_examples: int = typer.Option(
            1, min=0, help="Example uids per observation in DetailedPrecisionRecallCurve."
        ),
        metrics: str | None = typer.Option(
            None, help=f"Comma-separated metric types (default all): {METRIC_CHOICES}."
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
        ev = _evaluator(score_thresholds, pr_curve_max_examples, metrics, zero_division, out)
        _add_files(ev, groundtruths, predictions)
        publish(
            ev.compute(),
            fmt=format,
            out=out,
            title="classification",
            save=save,
            db=db,
            kind="classification",
            dataset=str(groundtruths),
            parameters={
                "groundtruths": str(groundtruths),
                "predictions": str(predictions),
                "score_thresholds": list(ev.score_thresholds),
                "pr_curve_max_examples": pr_curve_max_examples,
                "zero_division": zero_division,
            },
        )
