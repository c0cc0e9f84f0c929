"""``assay fairness``: group-fairness metrics of a table of labels, predictions and sensitive columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import typer

from assay.cli_support import OutputFormat, db_option, emit, guarded, save_metrics, save_option
from assay.errors import InvalidInputError
from assay.fairness.evaluator import FairnessEvaluator
from assay.fairness.types import PrivilegedGroup
from assay.io.tables import read_table, require_columns


def _positive_label(text: str, column: pd.Series, source: str) -> Any:
    """Interpret --positive-label in the label column's type (numbers stay numbers)."""
    if pd.api.types.is_bool_dtype(column):
        return text.lower() in ("1", "true", "yes")
    if pd.api.types.is_numeric_dtype(column):
        try:
            return float(text)
        except ValueError:
            raise InvalidInputError(
                f"--positive-label {text!r} is not a number but the label column is numeric",
                source=source,
            ) from None
    return text


def register(app: typer.Typer) -> None:
    @app.command("fairness")
    @guarded
    def fairness(
        data: Path = typer.Option(
            ..., help="Table (JSONL, CSV or Parquet) with label, prediction and sensitive columns."
        ),
        label: str = typer.Option(..., help="Column of ground-truth labels."),
        prediction: str = typer.Option(..., help="Column of predicted labels."),
        sensitive: list[str] = typer.Option(
            ...,
            help="Privileged-group definition COLUMN[:THRESHOLD[:invert]]; value > THRESHOLD (default 0) is privileged, invert flips it. Repeat for several.",
        ),
        positive_label: str = typer.Option("1", help="The favourable label value."),
        format: OutputFormat = typer.Option(
            OutputFormat.json, "--format", help="json (metric records) or table (for people)."
        ),
        out: Path | None = typer.Option(
            None, help="Write the JSON records to this file (atomically) instead of stdout."
        ),
        save: bool = save_option(),
        db: str | None = db_option(),
    ) -> None:
        """Statistical parity difference, disparate impact, average odds and equal opportunity difference.

        Each metric is reported per privileged-group definition and averaged over them, with
        overall accuracy, precision and recall on the positive label.
        """
        df = read_table(data)
        src = str(data)
        require_columns(df, [label], source=src)
        ev = FairnessEvaluator(
            [PrivilegedGroup.parse(s) for s in sensitive],
            pos_label=_positive_label(positive_label, df[label], src),
        )
        ev.add(df, label=label, prediction=prediction, source=src)
        metrics = ev.compute()
        emit(metrics, fmt=format, out=out, title="fairness")
        params = {
            "label": label,
            "prediction": prediction,
            "sensitive": list(sensitive),
            "positive_label": positive_label,
        }
        save_metrics(
            metrics, kind="fairness", dataset=str(data), parameters=params, save=save, url=db
        )
