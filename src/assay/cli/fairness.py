"""``assay fairness``: group-fairness metrics of a table of labels, predictions and group columns.

Only typer and the shared CLI helpers are imported at module level; pandas and the fairness
code load inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.command import MetricCommand
from assay.cli.options import scheduler_address, scheduler_option, scheduler_timeout_option
from assay.cli.support import (
    guarded,
)
from assay.fairness.declared import METRICS, OPTIONS

#: The fairness command's evaluator and declarations (its body reads the table first: the
#: --group texts and --positive-label are read against its columns).
FAIRNESS = MetricCommand("fairness", "assay.fairness.evaluator:FairnessEvaluator", OPTIONS, METRICS)


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


def _group_columns(texts: list[str], df: Any) -> list[Any]:
    """``--group`` values: a column name, or ``A,B`` for the crossed groups of columns A and
    B. A text that names a column of the table is that column, even with a comma in it."""
    from assay.errors import InvalidInputError

    out: list[Any] = []
    for t in texts:
        parts = t.split(",")
        if t in df.columns or len(parts) == 1:
            out.append(t)
        elif not all(parts):
            raise InvalidInputError(f"{t!r} has an empty column name", source="--group")
        else:
            out.append(tuple(parts))
    return out


def _check_columns(
    df: Any,
    groups: list[Any],
    group_columns: list[Any],
    src: str,
    control_columns: Any = (),
    by: Any = (),
    cluster: str | None = None,
) -> None:
    """Every named column exists and every privileged value occurs, naming the option."""
    import numpy as np

    from assay.errors import InvalidInputError
    from assay.fairness.batch import shown
    from assay.fairness.grouping import as_group_text

    have = ", ".join(map(str, df.columns))
    named = [("--sensitive", g.group_column) for g in groups]
    crossed = [c for g in group_columns for c in ([g] if isinstance(g, str) else g)]
    controls = [("--control", c) for c in control_columns] + [("--by", c) for c in by]
    controls += [("--cluster", cluster)] if cluster else []
    for option, column in [*named, *(("--group", c) for c in crossed), *controls]:
        if column not in df.columns:
            raise InvalidInputError(
                f"missing column (named by {option}; columns present: {have})",
                source=src,
                field=column,
            )
    for g in groups:
        if g.values is None or len(df) == 0:  # a dataset's schema: no rows to look in
            continue
        seen = np.unique(
            as_group_text(df[g.group_column].to_numpy(), source=src, field=g.group_column)
        )
        absent = [v for v in g.values if v not in set(seen.tolist())]
        if absent:
            raise InvalidInputError(
                f"{absent[0]!r} in {g.label!r} is not a value of column {g.group_column!r} "
                f"in {src} (it holds {shown(seen, limit=10)})",
                source="--sensitive",
            )


def _evaluate_file(
    first: Any,
    data: Path,
    label: str,
    prediction: str,
    given: dict[str, Any],
    sample_weight: str | None = None,
    scheduler: str | None = None,
) -> Any:
    """Check the table's columns, then add it: a file read whole (its privileged values
    checked too), or a Parquet directory or glob streamed by row group (checked against its
    schema), or any of them on the Dask cluster at ``scheduler``. ``first``: the evaluator
    of the options as given; the one returned reads ``--group`` texts and
    ``--positive-label`` against the table's columns."""
    from functools import partial

    from assay.cli.options import add_table
    from assay.errors import InvalidInputError
    from assay.io.parquet import is_parquet_dataset, schema_frame
    from assay.io.tables import read_table, require_columns

    src = str(data)
    streamed = is_parquet_dataset(data) or scheduler is not None
    df = schema_frame(data) if is_parquet_dataset(data) else read_table(data)
    if len(df) == 0 and not is_parquet_dataset(data):
        raise InvalidInputError("the file holds no rows", source=src)
    require_columns(df, [label], source=src)
    group_columns = _group_columns(given["group_columns"], df)
    _check_columns(
        df,
        [] if len(df) == 0 else list(first.groups),
        group_columns,
        src,
        given["control_columns"],
        given["by"],
        given["cluster"],
    )
    if sample_weight is not None and sample_weight not in df.columns:
        raise InvalidInputError(
            "missing column (named by --sample-weight)", source=src, field=sample_weight
        )
    label_value = _positive_label(given["positive_label"], df[label], src)
    ev = FAIRNESS.make(given | {"group_columns": group_columns, "positive_label": label_value})
    batch = partial(
        _add_batch, label=label, prediction=prediction, source=src, sample_weight=sample_weight
    )
    if not streamed:
        batch(ev, df)
        return ev
    return add_table(ev, data, batch, scheduler=scheduler)


def _add_batch(ev: Any, frame: Any, **kwargs: Any) -> None:
    ev.add(frame, **kwargs)


def register(app: typer.Typer) -> None:
    @app.command("fairness")
    @guarded
    @FAIRNESS.flags
    def fairness(
        data: Path = typer.Option(
            ...,
            help="Table (JSONL, CSV, Parquet, or a Parquet directory or glob, streamed by row "
            "group) with label, prediction and group columns.",
        ),
        label: str = typer.Option(..., help="Column of ground-truth labels."),
        prediction: str = typer.Option(..., help="Column of predicted labels."),
        sample_weight: str | None = typer.Option(
            None,
            help="Column of sample weights (numbers >= 0) weighing the --sensitive metrics, "
            "the per-group rates, the aggregates and the overall metrics (and, with --ci, "
            "their intervals).",
        ),
        scheduler: str | None = scheduler_option(),
        scheduler_timeout: float = scheduler_timeout_option(),
        **given: Any,
    ) -> None:
        """Group fairness: privileged vs unprivileged (--sensitive), per group (--group).

        --sensitive: statistical parity difference, disparate impact, average odds and equal
        opportunity difference per definition and averaged over them. --group: selection
        rate, TPR, FPR and accuracy per group, demographic parity and equalized odds
        difference and ratio over the groups. Always: accuracy, precision and recall on the
        positive label. --ci: a bootstrap interval over rows (or over the clusters of
        --cluster) on each of them.
        """
        from assay.errors import InvalidInputError

        if not given["groups"] and not given["group_columns"]:
            raise InvalidInputError(
                "give --sensitive (a privileged group) or --group (per-group metrics), or both",
                source="fairness",
            )
        scheduler = scheduler_address(scheduler, scheduler_timeout)
        options = {k: v for k, v in given.items() if k in OPTIONS}
        from assay.fairness.report import fairness_tables

        # stored as typed: the definitions and --group as texts, --positive-label as given
        inputs: dict[str, Any] = {"label": label, "prediction": prediction}

        def add(first: Any) -> Any:
            inputs["sensitive"] = [g.label for g in first.groups]
            inputs["sample_weight"] = sample_weight
            return _evaluate_file(first, data, label, prediction, options, sample_weight, scheduler)

        FAIRNESS.run(
            given,
            add=add,
            dataset=str(data),
            inputs=inputs,
            parameters={
                "group_columns": list(given["group_columns"]),
                "positive_label": given["positive_label"],
            },
            view=fairness_tables,
        )
