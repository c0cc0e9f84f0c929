"""``assay segmentation``: semantic segmentation IoU, precision, recall, mIoU from JSONL.

Example::

    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --format table
    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --where 'site == "b"'
    assay segmentation --groundtruths gt.jsonl --predictions pred.jsonl --by site --ci 0.95

Only typer and the shared CLI helpers are imported at module level; numpy, pycocotools and
shapely load inside the command, so ``--help`` is fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.options import (
    apply_where,
    by_option,
    cluster_option,
    interval_kwargs,
    interval_options,
    where_option,
)
from assay.cli.support import OutputFormat, db_option, guarded, publish, save_option

__all__ = ["register"]

_TYPES = ("IOU", "mIOU", "Precision", "Recall", "F1", "Accuracy", "ConfusionMatrix")
_CI, _CI_METHOD, _NUM_BOOTSTRAP, _SEED = interval_options()


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
        by: list[str] = by_option(
            "A datum metadata field", "Sliced: IOU, mIOU, Precision, Recall, F1, Accuracy."
        ),
        ci: float = _CI,
        ci_method: str = _CI_METHOD,
        num_bootstrap: int = _NUM_BOOTSTRAP,
        seed: int = _SEED,
        cluster: str = cluster_option("datum"),
        fmt: OutputFormat = typer.Option(OutputFormat.json, "--format", help="json or table."),
        out: Path = typer.Option(None, "--out", help="Write the JSON records here."),
        save: bool = save_option(),
        db: str = db_option(),
    ) -> None:
        """Semantic segmentation: per-label IoU, precision, recall, F1, mIoU, confusion counts.
        --ci puts a bootstrap interval over images on them."""
        from assay._validation import check_known, check_zero_division
        from assay.errors import InvalidInputError
        from assay.segmentation.io import read_datums

        interval = interval_kwargs(ci, ci_method, num_bootstrap, seed, cluster)
        wanted = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
        check_known(sorted(set(wanted or [])), _TYPES, source="--metrics")
        check_zero_division(zero_division, source="--zero-division")
        gt = read_datums(groundtruths, default="groundtruths")
        if not gt:
            raise InvalidInputError("holds no datum to evaluate", source=str(groundtruths))
        pr = read_datums(predictions, default="predictions")
        from assay.segmentation.evaluator import SegmentationEvaluator

        slices: dict[str, Any] = {"by": list(by)} if by else {}
        ev = SegmentationEvaluator(zero_division=zero_division, by=by or (), **interval)
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
                **interval,
                **slices,
            },
        )
