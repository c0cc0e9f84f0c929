"""``assay classification``: evaluate classification files, long form or wide.

Long form: ``--groundtruths`` and ``--predictions`` (one row per label). Wide, as
scikit-learn users hold it: ``--data`` with ``--y-true`` and either ``--y-score`` (binary,
the score of ``--positive-label``) or ``--y-score-columns`` (``predict_proba`` columns named
by their labels).

Filters (``--where`` on datums, ``--where-groundtruths``, ``--where-predictions``) are
pandas-query expressions over ``uid``, ``label``, ``score`` and the datum's metadata (the
``metadata`` object of a JSONL ground-truth row, or the ``--metadata-columns`` of a CSV or
Parquet file); ``--examples-limit`` and ``--examples-offset`` page the ``Examples`` records.

Example::

    assay classification --groundtruths gt.jsonl --predictions pred.jsonl --format table
    assay classification --data scores.csv --y-true label --y-score proba --ci 0.95 --by site
    assay classification --data part-*.parquet --y-true y --y-score-columns a,b,c --compact

The evaluator's options, the metric types and their help come from
:mod:`assay.classification.declared`; the body is the metric commands' skeleton
(:class:`assay.cli.command.MetricCommand`); this module writes only its input flags and how
it reads them. Only typer and the declarations are imported at module level; numpy, pandas
and the classification code load inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.classification.declared import OPTIONS
from assay.cli.command import MetricCommand
from assay.cli.options import (
    scheduler_address,
    scheduler_option,
    scheduler_timeout_option,
    where_option,
)
from assay.cli.support import guarded

__all__ = ["register"]

CLASSIFICATION = MetricCommand(
    "classification",
    "assay.classification.evaluator:ClassificationEvaluator",
    OPTIONS,
    None,  # --metrics is the evaluator's own option: it computes only the types named
    where={
        "datums": where_option("datums", "uid and metadata"),
        "groundtruths": where_option(
            "groundtruths", "uid, label, metadata", "; others drop the datum"
        ),
        "predictions": where_option(
            "predictions",
            "uid, label, score, gt_label, metadata",
            "; a datum left without one is dropped",
        ),
    },
    # what a stored run records of the configuration (as before the declarations)
    stored=(
        "score_thresholds",
        "hardmax",
        "pr_curve_max_examples",
        "zero_division",
        "ci",
        "ci_method",
        "num_bootstrap",
        "seed",
        "cluster",
        "by",
    ),
    format_help="json (metric records) or table (a classification report per key and "
    "threshold, the confusion matrix, curves summarised).",
)


def _columns(text: str | None) -> list[str] | None:
    return None if text is None else [c.strip() for c in text.split(",")]


def _score_columns(text: str) -> list[str]:
    """``--y-score-columns``: distinct column names, one per label (else one line)."""
    from assay.errors import InvalidInputError

    names = [c.strip() for c in text.split(",")]
    if not any(names) or "" in names:
        raise InvalidInputError(
            f"expected comma-separated score column names, one per label, got {text!r}",
            source="--y-score-columns",
        )
    twice = next((c for i, c in enumerate(names) if c in names[:i]), None)
    if twice is not None:
        raise InvalidInputError(
            f"column {twice!r} is named twice (one score column per label)",
            source="--y-score-columns",
        )
    return names


def _add_wide(ev: Any, data: Path, wide: dict[str, Any], scheduler: str | None) -> None:
    """Add the wide table (a file, or a Parquet directory or glob) batch by batch, in
    process or on the Dask cluster at ``scheduler``."""
    from functools import partial

    from assay.cli.options import add_table
    from assay.errors import InvalidInputError

    if wide["y_true"] is None:
        raise InvalidInputError("--data needs --y-true", source="--y-true")
    if (wide["y_score"] is None) == (wide["y_score_columns"] is None):
        raise InvalidInputError(
            "--data needs exactly one of --y-score (binary) and --y-score-columns",
            source="--y-score",
        )
    columns = wide["y_score_columns"]
    layout = dict(
        y_true=wide["y_true"],
        y_score=wide["y_score"],
        y_score_columns=None if columns is None else _score_columns(columns),
        positive_label=wide["positive_label"],
        uid=wide["uid_column"],
        source=str(data),
        metadata_columns=_columns(wide["metadata_columns"]),
    )
    add_table(ev, data, partial(_add_wide_batch, layout=layout), scheduler=scheduler)


def _add_wide_batch(ev: Any, frame: Any, layout: dict[str, Any]) -> None:
    ev.add_wide(frame, **layout)


def _add_files(
    ev: Any,
    groundtruths: Path,
    predictions: Path,
    metadata_columns: list[str] | None,
    *,
    read: list[str],
    scheduler: str | None = None,
) -> None:
    """Add the long-form files: in process, or joined by uid on the Dask cluster at
    ``scheduler`` (:func:`assay.dist.join.evaluate_joined`; the same records)."""
    from functools import partial

    from assay.errors import InvalidInputError
    from assay.io.tables import read_table

    add = partial(
        _add_long,
        sources=(str(groundtruths), str(predictions)),
        metadata_columns=metadata_columns,
        read=read,
    )
    if scheduler is not None:
        from assay.cli.options import check_scheduler
        from assay.dist.join import evaluate_joined

        check_scheduler(scheduler)
        evaluate_joined(ev, groundtruths, predictions, add=add, scheduler=scheduler)
        return
    tables = {path: read_table(path) for path in (groundtruths, predictions)}
    for path, table in tables.items():
        if len(table) == 0:
            raise InvalidInputError("the file holds no rows", source=str(path))
    add(ev, tables[groundtruths], tables[predictions])


def _add_long(
    ev: Any,
    groundtruths: Any,
    predictions: Any,
    *,
    sources: tuple[str, str],
    metadata_columns: list[str] | None,
    read: list[str],
) -> None:
    """Add long-form frames; a ``--by`` or ``--cluster`` column (``read``) of the
    ground-truth file is datum metadata without repeating it in ``--metadata-columns``."""
    found = [c for c in read if c in groundtruths.columns]
    if found:
        metadata_columns = list(dict.fromkeys([*(metadata_columns or []), *found]))
    ev.add(
        groundtruths,
        predictions,
        gt_source=sources[0],
        pd_source=sources[1],
        metadata_columns=metadata_columns,
    )


def _check_layout(gts: Path | None, pds: Path | None, data: Path | None) -> None:
    """Exactly one input layout: ``--data``, or ``--groundtruths`` with ``--predictions``."""
    from assay.errors import InvalidInputError

    if data is not None and (gts is not None or pds is not None):
        raise InvalidInputError(
            "give either --data (wide) or --groundtruths and --predictions (long form)",
            source="--data",
        )
    if data is None and (gts is None or pds is None):
        raise InvalidInputError(
            "give --groundtruths and --predictions (long form), or --data with --y-true",
            source="--groundtruths" if gts is None else "--predictions",
        )


def register(app: typer.Typer) -> None:
    """Add the ``classification`` command to ``app``."""

    @app.command("classification")
    @guarded
    @CLASSIFICATION.flags
    def classification(
        groundtruths: Path | None = typer.Option(
            None,
            help="Ground truths: JSONL, CSV or Parquet with columns uid, key (optional), value.",
        ),
        predictions: Path | None = typer.Option(
            None,
            help="Predictions: JSONL, CSV or Parquet with columns uid, key (optional), value, "
            "score in 0..1.",
        ),
        data: Path | None = typer.Option(
            None,
            help="Wide input, one row per datum (CSV, JSONL, Parquet, or a Parquet directory "
            "or glob, streamed by row group); see --y-true.",
        ),
        y_true: str | None = typer.Option(None, help="With --data: the ground-truth column."),
        y_score: str | None = typer.Option(
            None, help="With --data: the score column of --positive-label (binary)."
        ),
        y_score_columns: str | None = typer.Option(
            None,
            help="With --data: comma-separated score columns, one per label, named by the "
            "label (predict_proba layout).",
        ),
        positive_label: str = typer.Option(
            "1", help="With --y-score: the label the score is for; the other value is negative."
        ),
        uid_column: str | None = typer.Option(
            None, help="With --data: a column of datum ids (default: row numbers from 0)."
        ),
        metadata_columns: str | None = typer.Option(
            None,
            help="Comma-separated columns of --groundtruths (or --data) that hold datum "
            "metadata; JSONL ground-truth rows may carry a metadata object instead.",
        ),
        scheduler: str | None = scheduler_option(),
        scheduler_timeout: float = scheduler_timeout_option(),
        **given: Any,
    ) -> None:
        """Classification metrics: counts, precision/recall/F1/accuracy, ROC AUC, PR curves,
        confusion matrices (with examples) and per-datum examples.

        Long form (--groundtruths, --predictions): a datum has one ground-truth value per
        label key ("class" if no key column) and any number of scored predicted values. Wide
        (--data, as scikit-learn users hold it): --y-true with --y-score (binary) or
        --y-score-columns (predict_proba). Aggregate metrics use each datum's top prediction
        unless --no-hardmax.
        """
        read = [*given["by"], *([given["cluster"]] if given["cluster"] else [])]
        if read and data is not None:  # the slice and cluster columns are datum metadata
            named = [c.strip() for c in (metadata_columns or "").split(",") if c.strip()]
            metadata_columns = ",".join(dict.fromkeys([*named, *read]))
        wide = {
            "y_true": y_true,
            "y_score": y_score,
            "y_score_columns": y_score_columns,
            "positive_label": positive_label,
            "uid_column": uid_column,
            "metadata_columns": metadata_columns,
        }
        filtered = any(v is not None for k, v in given.items() if k.startswith("where"))

        def add(ev: Any) -> None:
            from assay.errors import InvalidInputError

            if ev.compact and filtered:
                raise InvalidInputError(
                    "keeps counts, not datums: it cannot be combined with --where",
                    source="--compact",
                )
            _check_layout(groundtruths, predictions, data)
            address = scheduler_address(scheduler, scheduler_timeout)
            if data is not None:
                _add_wide(ev, data, wide, address)
            else:
                assert groundtruths is not None and predictions is not None
                _add_files(
                    ev,
                    groundtruths,
                    predictions,
                    _columns(metadata_columns),
                    read=read,
                    scheduler=address,
                )

        from functools import partial

        from assay.classification.report import classification_report

        binary = data is not None and y_score is not None  # the positive label first
        CLASSIFICATION.run(
            given,
            add=add,
            dataset=str(data if data is not None else groundtruths),
            inputs={
                "groundtruths": None if groundtruths is None else str(groundtruths),
                "predictions": None if predictions is None else str(predictions),
                "data": None if data is None else str(data),
                **(wide if data is not None else {}),
            },
            view=partial(classification_report, positive_label=positive_label if binary else None),
        )
