"""``assay segmentation``: semantic segmentation IoU, precision, recall, mIoU from JSONL.

Example::

    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --format table
    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --where 'site == "b"'
    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --by site --ci 0.95

The options, metric types and their help come from :mod:`assay.segmentation.declared`; the
body is the metric commands' skeleton (:class:`assay.cli.command.MetricCommand`). Only typer
and the declarations are imported at module level; numpy, pycocotools and shapely load
inside the command, so ``--help`` is fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.command import MetricCommand
from assay.cli.options import where_option
from assay.cli.support import guarded
from assay.segmentation.declared import METRICS, OPTIONS

__all__ = ["register"]

SEGMENTATION = MetricCommand(
    "segmentation",
    "assay.segmentation.evaluator:SegmentationEvaluator",
    OPTIONS,
    METRICS,
    where={"datums": where_option("datums", "uid and the datum's metadata")},
)


def register(app: typer.Typer) -> None:
    """Add the ``segmentation`` command to ``app``."""

    @app.command("segmentation")
    @guarded
    @SEGMENTATION.flags
    def segmentation(
        groundtruths: Path = typer.Option(
            ..., "--groundtruths", help="assay JSONL: one datum per line with masks."
        ),
        predictions: Path = typer.Option(
            ..., "--predictions", help="assay JSONL with the predicted masks."
        ),
        **given: Any,
    ) -> None:
        """Semantic segmentation: per-label IoU, precision, recall, F1, mIoU, confusion counts.
        --ci puts a bootstrap interval over images on them."""

        def add(ev: Any) -> None:
            from assay.errors import InvalidInputError
            from assay.segmentation.io import read_datums

            gt = read_datums(groundtruths, default="groundtruths")
            if not gt:
                raise InvalidInputError("holds no datum to evaluate", source=str(groundtruths))
            pr = read_datums(predictions, default="predictions")
            ev.add(gt, pr, source=str(groundtruths), psource=str(predictions))

        SEGMENTATION.run(
            given,
            add=add,
            dataset=str(groundtruths),
            inputs={"groundtruths": str(groundtruths), "predictions": str(predictions)},
        )
