"""``assay detection``: COCO-exact detection / instance-segmentation metrics from files.

Examples::

    assay detection --groundtruths instances_val.json --predictions results.json --coco
    assay detection --groundtruths gt.jsonl --predictions pred.jsonl --iou-type segm --metrics AP,mAP
"""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli_support import (
    OutputFormat,
    db_option,
    emit,
    guarded,
    parse_floats,
    save_metrics,
    save_option,
)
from assay.errors import InvalidInputError
from assay.results import MetricSet

__all__ = ["register", "format_coco_summary"]


def format_coco_summary(stats) -> str:
    """COCOeval's 12 summary lines for the given stats (as pycocotools prints them)."""
    from assay.detection.compute import STAT_NAMES

    lines = []
    for (stat, iou, area, md), v in zip(STAT_NAMES, stats):
        title = "Average Precision" if stat == "AP" else "Average Recall"
        lines.append(
            f" {title:<18} ({stat}) @[ IoU={iou:<9} | area={area:>6s} | maxDets={md:>3d} ] = {v:0.3f}"
        )
    return "\n".join(lines)


def _input_format(path: Path, given: str) -> str:
    if given != "auto":
        return given
    return "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "coco"


def register(app: typer.Typer) -> None:
    """Add the ``detection`` command to ``app``."""

    @app.command("detection")
    @guarded
    def detection(
        groundtruths: Path = typer.Option(
            ..., "--groundtruths", help="COCO annotations JSON, or assay detection JSONL."
        ),
        predictions: Path = typer.Option(
            ..., "--predictions", help="COCO results JSON list, or assay detection JSONL."
        ),
        iou_type: str = typer.Option("bbox", "--iou-type", help="bbox or segm."),
        iou_thresholds: str = typer.Option(
            None, "--iou-thresholds", help="Comma-separated; default 0.5:0.05:0.95."
        ),
        ar_iou_thresholds: str = typer.Option(
            "0.5,0.75", "--ar-iou-thresholds", help="IoU thresholds AR averages over."
        ),
        metrics: str = typer.Option(
            None,
            "--metrics",
            help="Comma-separated metric types (default: AP..mAR, PrecisionRecallCurve).",
        ),
        coco: bool = typer.Option(
            False, "--coco", help="Print COCOeval's classic 12-line summary."
        ),
        max_detections: int = typer.Option(
            100, "--max-detections", help="Detections kept per datum and label (0: all)."
        ),
        recall_score_threshold: float = typer.Option(0.0, "--recall-score-threshold"),
        pr_curve_iou_threshold: float = typer.Option(0.5, "--pr-curve-iou-threshold"),
        pr_curve_max_examples: int = typer.Option(1, "--pr-curve-max-examples"),
        input_format: str = typer.Option(
            "auto", "--input-format", help="auto (by extension), coco or jsonl."
        ),
        fmt: OutputFormat = typer.Option(OutputFormat.json, "--format", help="json or table."),
        out: Path = typer.Option(None, "--out", help="Write the JSON records here."),
        save: bool = save_option(),
        db: str = db_option(),
    ) -> None:
        """Object detection / instance segmentation metrics (COCO-exact AP, AR, mAP, mAR, PR curves)."""
        from assay.detection.compute import CocoParams, evaluate
        from assay.detection.io import load_coco, load_jsonl
        from assay.detection.metrics import METRIC_TYPES, coco_summary, compute_metrics

        if iou_type not in ("bbox", "segm"):
            raise typer.BadParameter("must be bbox or segm", param_hint="--iou-type")
        kinds = {
            _input_format(groundtruths, input_format),
            _input_format(predictions, input_format),
        }
        if len(kinds) != 1 or not kinds <= {"coco", "jsonl"}:
            raise InvalidInputError(
                f"cannot mix or guess input formats {sorted(kinds)}; use --input-format",
                source=str(predictions),
            )
        if kinds == {"coco"}:
            data = load_coco(groundtruths, predictions, iou_type=iou_type)
        else:
            data = load_jsonl(groundtruths, predictions)
        wanted = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
        if wanted:
            bad = [m for m in wanted if m not in METRIC_TYPES]
            if bad:
                raise typer.BadParameter(
                    f"unknown {bad}; choose from {', '.join(METRIC_TYPES)}", param_hint="--metrics"
                )
        ious = parse_floats(iou_thresholds, option="--iou-thresholds")
        ar = parse_floats(ar_iou_thresholds, option="--ar-iou-thresholds") or [0.5, 0.75]
        records = MetricSet()
        if not (coco and wanted is None):  # --coco alone: just the classic summary
            records = compute_metrics(
                data,
                iou_type=iou_type,
                iou_thresholds=ious,
                ar_iou_thresholds=ar,
                recall_score_threshold=recall_score_threshold,
                max_detections=None if max_detections == 0 else max_detections,
                pr_curve_iou_threshold=pr_curve_iou_threshold,
                pr_curve_max_examples=pr_curve_max_examples,
                metrics=wanted,
            )
        if coco:
            ev = evaluate(data, CocoParams(iou_type=iou_type), all_precision=False)
            if not records.filter("COCOSummary"):
                records = records + coco_summary(ev)
            typer.echo(format_coco_summary(ev.stats()))
            if out is not None:
                emit(records, fmt=OutputFormat.json, out=out)
        else:
            emit(records, fmt=fmt, out=out, title="detection")
        params = {
            "groundtruths": str(groundtruths),
            "predictions": str(predictions),
            "iou_type": iou_type,
            "iou_thresholds": ious,
            "ar_iou_thresholds": ar,
            "recall_score_threshold": recall_score_threshold,
        }
        save_metrics(
            records,
            kind="detection",
            dataset=str(groundtruths),
            parameters=params,
            save=save,
            url=db,
        )
