"""``assay segmentation``: semantic segmentation IoU / mIoU and confusion counts from JSONL.

Example::

    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --format table
"""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli_support import OutputFormat, db_option, emit, guarded, save_metrics, save_option

__all__ = ["register"]


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
            None, "--metrics", help="Comma-separated subset of IOU,mIOU,ConfusionMatrix."
        ),
        fmt: OutputFormat = typer.Option(OutputFormat.json, "--format", help="json or table."),
        out: Path = typer.Option(None, "--out", help="Write the JSON records here."),
        save: bool = save_option(),
        db: str = db_option(),
    ) -> None:
        """Semantic segmentation: per-label IoU, mIoU per label key, pixel confusion counts."""
        from assay.detection.io import _read_jsonl
        from assay.results import MetricSet
        from assay.segmentation.evaluator import SegmentationEvaluator

        ev = SegmentationEvaluator().add(
            _read_jsonl(groundtruths, str(groundtruths)),
            _read_jsonl(predictions, str(predictions)),
            source=str(groundtruths),
            psource=str(predictions),
        )
        records = ev.compute()
        if metrics:
            wanted = {m.strip() for m in metrics.split(",") if m.strip()}
            bad = wanted - {"IOU", "mIOU", "ConfusionMatrix"}
            if bad:
                raise typer.BadParameter(f"unknown {sorted(bad)}", param_hint="--metrics")
            records = MetricSet(m for m in records if m.type in wanted)
        emit(records, fmt=fmt, out=out, title="segmentation")
        save_metrics(
            records,
            kind="segmentation",
            dataset=str(groundtruths),
            parameters={"groundtruths": str(groundtruths), "predictions": str(predictions)},
            save=save,
            url=db,
        )
