"""``assay segmentation``: semantic segmentation IoU, precision, recall, mIoU from JSONL.

Example::

    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --format table
    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --where 'site == "b"'

Only typer and the shared CLI helpers are imported at module level; numpy, pycocotools and
shapely load inside the command, so ``--help`` is fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli_support import (
    OutputFormat,
    apply_where,
    db_option,
    guarded,
    publish,
    save_option,
    where_option,
)

__all__ = ["register"]

_TYPES = ("IOU", "mIOU", "Precision", "Recall", "F1", "Accuracy", "ConfusionMatrix")


def register(app: typer.Typer) -> None:
    """Add the ``segmentation`` command to ``app``."""

    @app.command("segmentation")
    @guarded
    def segmentation(
        groundtruths: Path = typer.Option(
            ..., "--groundtruths", help="assay JSONL: one datum per line with masks."
        ),
        predictions: Path = typer.Option(
            ..., "--predictions", help="assay JSONL with the predicted masks."
        ),
        metrics: str = typer.Option(
            None, "--metrics", help=f"Comma-separated subset of {','.join(_TYPES)}."
        ),
        zero_division: float = typer.Option(
            None,
            "--zero-division",
            help="Value of a ratio with a zero denominator (default: null).",
        ),
        where: str = where_option("datums", "uid and the datum's metadata"),
        fmt: OutputFormat = typer.Option(OutputFormat.json, "--format", help="json or table."),
        out: Path = typer.Option(None, "--out", help="Write the JSON records here."),
        save: bool = save_option(),
        db: str = db_option(),
    ) -> None:
        """Semantic segmentation: per-label IoU, precision, recall, F1, mIoU, confusion counts."""
        from assay.errors import InvalidInputError
        from assay.segmentation.io import read_datums

        wanted = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
        bad = sorted(set(wanted or []) - set(_TYPES))
        if bad:
            raise typer.BadParameter(
                f"unknown {bad}; choose from {', '.join(_TYPES)}", param_hint="--metrics"
            )
        gt = read_datums(groundtruths, default="groundtruths")
        if not gt:
            raise InvalidInputError("holds no datum to evaluate", source=str(groundtruths))
        pr = read_datums(predictions, default="predictions")
        from assay.segmentation.evaluator import SegmentationEvaluator

        ev = SegmentationEvaluator(zero_division=zero_division)
        ev.add(gt, pr, source=str(groundtruths), psource=str(predictions))
        records = apply_where(ev, {"datums": where}).compute()
        if wanted:
            from assay.results import MetricSet

            records = MetricSet(m for m in records if m.type in wanted)
        publish(
            records,
            fmt=fmt,
            out=out,
            title="segmentation",
            save=save,
            db=db,
            kind="segmentation",
            dataset=str(groundtruths),
            parameters={
                "groundtruths": str(groundtruths),
                "predictions": str(predictions),
                "zero_division": zero_division,
                **({"where_datums": where} if where is not None else {}),
            },
        )
