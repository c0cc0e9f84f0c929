"""``assay classification``: evaluate classification files, long form or wide.

Long form: ``--groundtruths`` and ``--predictions`` (one row per label). Wide, as
scikit-learn users hold it: ``--data`` with ``--y-true`` and either ``--y-score`` (binary,
the score of ``--positive-label``) or ``--y-score-columns`` (``predict_proba`` columns named
by their labels).

Filters (``--where`` on datums, ``--where-groundtruths``, ``--where-predictions``) are
pandas-query expressions over ``uid``, ``label``, ``score`` and the datum's metadata (the
``metadata`` object of a JSONL ground-truth row, or the ``--metadata-columns`` of a CSV or
Parquet file); ``--examples-limit`` and ``--examples-offset`` page the ``Examples`` records.

Only typer and the shared CLI helpers are imported at module level; numpy, pandas and the
classification code load inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.options import (
    CI_OPTIONS,
    apply_where,
    by_option,
    cluster_option,
    examples_page_options,
    interval_options,
    scheduler_address,
    scheduler_option,
    scheduler_timeout_option,
    where_option,
)
from assay.cli.support import OutputFormat, db_option, guarded, parse_floats, publish, save_option

# Kept in step with assay.classification.options.METRIC_TYPES (a test checks it).
METRIC_CHOICES = (
    "Counts, Precision, Recall, F1, Accuracy, ROCAUC, mROCAUC, ROCCurve, PrecisionRecallCurve, "
    "DetailedPrecisionRecallCurve, ConfusionMatrix, ConfusionMatrixWithExamples, Examples"
)


#: Evaluator argument -> the option that sets it, so configuration errors name the option.
OPTIONS = {
    "score_thresholds": "--score-thresholds",
    "pr_curve_max_examples": "--pr-curve-max-examples",
    "metrics": "--metrics",
    "zero_division": "--zero-division",
    "number_of_examples": "--number-of-examples",
    "examples_limit": "--examples-limit",
    "examples_offset": "--examples-offset",
    "compact": "--compact",
}


def _evaluator(settings: dict[str, Any], out: Path | None) -> Any:
    """The configured evaluator; a bad option (or --out) fails before any file is read."""
    from assay.classification.evaluator import ClassificationEvaluator
    from assay.errors import InvalidInputError
    from assay.io.files import check_writable_file

    if out is not None:
        check_writable_file(out, option="--out")
    metrics = settings["metrics"]
    try:
        return ClassificationEvaluator(
            score_thresholds=parse_floats(settings["score_thresholds"], option="--score-thresholds")
            or [0.0],
            pr_curve_max_examples=settings["pr_curve_max_examples"],
            metrics=[m.strip() for m in metrics.split(",")] if metrics else None,
            zero_division=settings["zero_division"],
            hardmax=settings["hardmax"],
            number_of_examples=settings["number_of_examples"],
            examples_limit=settings["examples_limit"],
            examples_offset=settings["examples_offset"],
            compact=settings.get("compact", False),
            **{k: settings[k] for k in CI_OPTIONS},
            by=settings["by"],
        )
    except InvalidInputError as e:
        where = (OPTIONS | CI_OPTIONS).get(str(e.source), e.source)
        raise InvalidInputError(e.reason, source=where, record=e.record) from None


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
    meta = wide["metadata_columns"]
    layout = dict(
        y_true=wide["y_true"],
        y_score=wide["y_score"],
        y_score_columns=None if columns is None else _score_columns(columns),
        positive_label=wide["positive_label"],
        uid=wide["uid_column"],
        source=str(data),
        metadata_columns=None if meta is None else [c.strip() for c in meta.split(",")],
    )
    add_table(ev, data, partial(_add_wide_batch, layout=layout), scheduler=scheduler)


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


def _add_wide_batch(ev: Any, frame: Any, layout: dict[str, Any]) -> None:
    ev.add_wide(frame, **layout)


def _add_input(
    ev: Any,
    gts: Path | None,
    pds: Path | None,
    data: Path | None,
    wide: dict,
    scheduler: str | None = None,
) -> str:
    """Add the files; returns the dataset name. Exactly one input layout must be given."""
    from assay.errors import InvalidInputError

    if data is not None and (gts is not None or pds is not None):
        raise InvalidInputError(
            "give either --data (wide) or --groundtruths and --predictions (long form)",
            source="--data",
        )
    if data is not None:
        _add_wide(ev, data, wide, scheduler)
        return str(data)
    if gts is None or pds is None:
        raise InvalidInputError(
            "give --groundtruths and --predictions (long form), or --data with --y-true",
            source="--groundtruths" if gts is None else "--predictions",
        )
    columns = wide["metadata_columns"]
    given = None if columns is None else [c.strip() for c in columns.split(",")]
    _add_files(ev, gts, pds, given, read=wide.get("read_columns", []), scheduler=scheduler)
    return str(gts)


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


def _run(
    settings: dict[str, Any],
    inputs: tuple[Path | None, Path | None, Path | None],
    wide: dict[str, Any],
    where_by: dict[str, str | None],
    *,
    fmt: OutputFormat,
    out: Path | None,
    save: bool,
    db: str | None,
) -> None:
    """The command's work once its options are read: configure (failing before any file is
    read), add the input, filter, compute, publish. ``inputs``: groundtruths, predictions,
    data."""
    groundtruths, predictions, data = inputs
    ev = _evaluator(settings, out)
    if settings.get("compact") and any(v is not None for v in where_by.values()):
        from assay.errors import InvalidInputError

        raise InvalidInputError(
            "keeps counts, not datums: it cannot be combined with --where", source="--compact"
        )
    dataset = _add_input(ev, groundtruths, predictions, data, wide, settings.get("scheduler"))
    ev = apply_where(ev, where_by)
    parameters = {
        "groundtruths": None if groundtruths is None else str(groundtruths),
        "predictions": None if predictions is None else str(predictions),
        "data": None if data is None else str(data),
        **{k: v for k, v in wide.items() if data is not None},
        "score_thresholds": list(ev.score_thresholds),
        "hardmax": settings["hardmax"],
        "pr_curve_max_examples": settings["pr_curve_max_examples"],
        "zero_division": settings["zero_division"],
        **(
            {k: settings[k] for k in CI_OPTIONS if settings[k] is not None}
            if settings["ci"] is not None
            else {}
        ),
        **({"by": settings["by"]} if settings["by"] else {}),
        **{f"where_{k}": v for k, v in where_by.items() if v is not None},
    }
    record: dict[str, Any] = {
        "kind": "classification",
        "dataset": dataset,
        "parameters": parameters,
    }
    from functools import partial

    from assay.classification.report import classification_report

    binary = data is not None and wide["y_score"] is not None  # the positive label first
    view = partial(classification_report, positive_label=wide["positive_label"] if binary else None)
    publish(ev.compute(), fmt=fmt, out=out, save=save, db=db, view=view, **record)


EXAMPLES_LIMIT, EXAMPLES_OFFSET = examples_page_options()
CI, CI_METHOD, NUM_BOOTSTRAP, SEED = interval_options()


def register(app: typer.Typer) -> None:
    @app.command("classification")
    @guarded
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
        score_thresholds: str = typer.Option(
            "0.0",
            help="Comma-separated thresholds in 0..1 for Counts/Precision/Recall/F1/Accuracy "
            "and the confusion matrices.",
        ),
        hardmax: bool = typer.Option(
            True,
            "--hardmax/--no-hardmax",
            help="Only each datum's top prediction counts (default), or every label scoring "
            "at or above the threshold.",
        ),
        pr_curve_max_examples: int = typer.Option(
            1, min=0, help="Example uids per observation in DetailedPrecisionRecallCurve."
        ),
        number_of_examples: int | None = typer.Option(
            None, help="Examples per cell of ConfusionMatrixWithExamples (default: all)."
        ),
        examples_limit: int | None = EXAMPLES_LIMIT,
        examples_offset: int = EXAMPLES_OFFSET,
        where: str | None = where_option("datums", "uid and metadata"),
        where_groundtruths: str | None = where_option(
            "groundtruths", "uid, label, metadata", "; others drop the datum"
        ),
        where_predictions: str | None = where_option(
            "predictions",
            "uid, label, score, gt_label, metadata",
            "; a datum left without one is dropped",
        ),
        metadata_columns: str | None = typer.Option(
            None,
            help="Comma-separated columns of --groundtruths (or --data) that hold datum "
            "metadata; JSONL ground-truth rows may carry a metadata object instead.",
        ),
        metrics: str | None = typer.Option(
            None,
            help=f"Comma-separated metric types (default all but ROCCurve, "
            f"ConfusionMatrixWithExamples and Examples): {METRIC_CHOICES}.",
        ),
        zero_division: float | None = typer.Option(
            None,
            help="Report this value where a denominator is 0 (default: undefined, value null).",
        ),
        by: list[str] = by_option(
            "A datum metadata column",
            "With --data the column is read as metadata; long form: give it in "
            "--metadata-columns or metadata.",
        ),
        ci: float | None = CI,
        ci_method: str = CI_METHOD,
        num_bootstrap: int = NUM_BOOTSTRAP,
        seed: int = SEED,
        cluster: str | None = cluster_option("datum"),
        format: OutputFormat = typer.Option(
            OutputFormat.json,
            "--format",
            help="json (metric records) or table (a classification report per key and "
            "threshold, the confusion matrix, curves summarised).",
        ),
        out: Path | None = typer.Option(
            None, help="Write the JSON records to this file (atomically) instead of stdout."
        ),
        save: bool = save_option(),
        db: str | None = db_option(),
        scheduler: str | None = scheduler_option(),
        scheduler_timeout: float = scheduler_timeout_option(),
        compact: bool = typer.Option(
            False,
            "--compact",
            help="Keep counts of distinct (truth, scores) datums instead of every datum: "
            "memory O(labels x distinct scores), the same records (needs "
            "--pr-curve-max-examples 0; no --where).",
        ),
    ) -> None:
        """Classification metrics: counts, precision/recall/F1/accuracy, ROC AUC, PR curves,
        confusion matrices (with examples) and per-datum examples.

        Long form (--groundtruths, --predictions): a datum has one ground-truth value per
        label key ("class" if no key column) and any number of scored predicted values. Wide
        (--data, as scikit-learn users hold it): --y-true with --y-score (binary) or
        --y-score-columns (predict_proba). Aggregate metrics use each datum's top prediction
        unless --no-hardmax.
        """
        settings = {
            "score_thresholds": score_thresholds,
            "pr_curve_max_examples": pr_curve_max_examples,
            "metrics": metrics,
            "zero_division": zero_division,
            "hardmax": hardmax,
            "number_of_examples": number_of_examples,
            "examples_limit": examples_limit,
            "examples_offset": examples_offset,
            "scheduler": scheduler_address(scheduler, scheduler_timeout),
            "compact": compact,
            "ci": ci,
            "ci_method": ci_method,
            "num_bootstrap": num_bootstrap,
            "seed": seed,
            "cluster": cluster,
            "by": list(by),
        }
        read = [*by, *([cluster] if cluster else [])]
        if read and data is not None:  # the slice and cluster columns are datum metadata
            given = [c.strip() for c in (metadata_columns or "").split(",") if c.strip()]
            metadata_columns = ",".join(dict.fromkeys([*given, *read]))
        wide = {
            "y_true": y_true,
            "y_score": y_score,
            "y_score_columns": y_score_columns,
            "positive_label": positive_label,
            "uid_column": uid_column,
            "metadata_columns": metadata_columns,
        }
        if data is None:  # long form: those columns are metadata where the file has them
            wide["read_columns"] = read
        where_by = {
            "datums": where,
            "groundtruths": where_groundtruths,
            "predictions": where_predictions,
        }
        inputs = (groundtruths, predictions, data)
        _run(settings, inputs, wide, where_by, fmt=format, out=out, save=save, db=db)
