"""``assay fairness``: group-fairness metrics of a table of labels, predictions and group columns.

Only typer and the shared CLI helpers are imported at module level; pandas and the fairness
code load inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli_support import OutputFormat, db_option, guarded, publish, save_option


def _positive_label(text: str, column: Any, source: str) -> Any:
    """Read --positive-label in the label column's type (numbers stay numbers)."""
    import pandas as pd

    from assay.errors import InvalidInputError

    if pd.api.types.is_bool_dtype(column):
        return text.lower() in ("1", "true", "yes")
    if pd.api.types.is_numeric_dtype(column):
        try:
            return float(text)
        except ValueError:
            raise InvalidInputError(
                f"{text!r} is not a number but the label column of {source} holds numbers",
                source="--positive-label",
            ) from None
    return text


def _groups(texts: list[str]) -> list[Any]:
    from assay.errors import InvalidInputError
    from assay.fairness.types import PrivilegedGroup

    try:
        return [PrivilegedGroup.parse(t) for t in texts]
    except InvalidInputError as e:
        raise InvalidInputError(e.reason, source="--sensitive") from None


def _evaluate_file(
    data: Path, label: str, prediction: str, groups: list[Any], positive_label: str
) -> Any:
    from assay.errors import InvalidInputError
    from assay.fairness.evaluator import FairnessEvaluator
    from assay.io.tables import read_table, require_columns

    df = read_table(data)
    src = str(data)
    if len(df) == 0:
        raise InvalidInputError("the file holds no rows", source=src)
    require_columns(df, [label], source=src)
    ev = FairnessEvaluator(groups, positive_label=_positive_label(positive_label, df[label], src))
    return ev.add(df, label=label, prediction=prediction, source=src)


def register(app: typer.Typer) -> None:
    @app.command("fairness")
    @guarded
    def fairness(
        data: Path = typer.Option(
            ..., help="Table (JSONL, CSV or Parquet) with label, prediction and group columns."
        ),
        label: str = typer.Option(..., help="Column of ground-truth labels."),
        prediction: str = typer.Option(..., help="Column of predicted labels."),
        sensitive: list[str] = typer.Option(
            ...,
            help="Privileged-group definition COLUMN[:THRESHOLD[:invert]]: a value above "
            "THRESHOLD (default 0) is privileged, invert makes values at or below it "
            "privileged. Repeat for several definitions.",
        ),
        positive_label: str = typer.Option(
            "1", help="The favourable label value (read as a number when the labels are)."
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
        """Group fairness: statistical parity, disparate impact, average odds, equal opportunity.

        Each metric is reported per privileged-group definition and averaged over them, with
        overall accuracy, precision and recall on the positive label.
        """
        from assay.io.files import check_writable_file

        if out is not None:
            check_writable_file(out, option="--out")
        groups = _groups(sensitive)
        ev = _evaluate_file(data, label, prediction, groups, positive_label)
        publish(
            ev.compute(),
            fmt=format,
            out=out,
            title="fairness",
            save=save,
            db=db,
            kind="fairness",
            dataset=str(data),
            parameters={
                "label": label,
                "prediction": prediction,
                "group_columns": [g.label for g in groups],
                "positive_label": positive_label,
            },
        )
