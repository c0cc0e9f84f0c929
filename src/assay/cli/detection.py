"""``assay detection``: COCO-exact detection / instance-segmentation metrics from files.

Examples::

    assay detection --groundtruths instances_val.json --predictions results.json --coco
    assay detection --groundtruths gt.jsonl --predictions pred.jsonl --iou-type segm \
        --metrics AP,mAP

``--where`` (datums), ``--where-groundtruths`` and ``--where-predictions`` filter with
pandas-query expressions over ``uid``, ``label``, ``score`` and the ``metadata`` objects of
the JSONL datums and annotations; ``--examples-limit``/``--examples-offset`` page Examples.

The options, metric types and their help come from :mod:`assay.detection.declared`; the
body is the metric commands' skeleton (:class:`assay.cli.command.MetricCommand`), with
detection's own compute (only the types asked for, and ``--coco``'s summary) and output
(the headline view; with ``--coco`` the classic summary on stdout). Only typer and the
declarations are imported at module level; the numpy-heavy detection modules (pycocotools,
shapely) load inside the command, so ``--help`` is fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.command import MetricCommand
from assay.cli.options import where_option
from assay.cli.support import guarded, publish, save_metrics
from assay.detection.declared import METRICS, OPTIONS
from assay.errors import InvalidInputError

__all__ = ["register", "format_coco_summary", "parse_max_detections"]


def format_coco_summary(stats: Any) -> str:
    """COCOeval's 12 summary lines for the given stats (as pycocotools prints them)."""
    from assay.detection.params import STAT_NAMES

    lines = []
    for (stat, iou, area, md), v in zip(STAT_NAMES, stats):
        title = "Average Precision" if stat == "AP" else "Average Recall"
        where = f"IoU={iou:<9} | area={area:>6s} | maxDets={md:>3d}"
        lines.append(f" {title:<18} ({stat}) @[ {where} ] = {v:0.3f}")
    return "\n".join(lines)


def parse_max_detections(text: str) -> int | None:
    """``--max-detections``: a positive integer, or ``all`` (the API's ``None``)."""
    t = text.strip().lower()
    if t in ("all", "none"):
        return None
    try:
        n = int(t)
    except ValueError:
        raise InvalidInputError(
            f"expected a positive integer or 'all', got {text!r}", source="--max-detections"
        ) from None
    if n < 1:
        raise InvalidInputError(
            f"must be >= 1 or 'all' (every detection), got {n}", source="--max-detections"
        )
    return n


def _input_format(path: Path, given: str) -> str:
    if given != "auto":
        return given
    return "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "coco"


def _load(groundtruths: Path, predictions: Path, input_format: str, iou_type: str) -> Any:
    from assay.detection.io import load_coco
    from assay.detection.jsonl import load_jsonl

    kinds = {_input_format(groundtruths, input_format), _input_format(predictions, input_format)}
    if len(kinds) != 1 or not kinds <= {"coco", "jsonl"}:
        raise InvalidInputError(
            f"cannot mix or guess input formats {sorted(kinds)}; use --input-format",
            source=str(predictions),
        )
    if kinds == {"coco"}:
        data = load_coco(groundtruths, predictions, iou_type=iou_type)
    else:
        data = load_jsonl(groundtruths, predictions)
    if data.n_datums == 0:
        raise InvalidInputError("holds no datum (image) to evaluate", source=str(groundtruths))
    return data


#: ``assay detection``: the evaluator's options (``--iou-type`` defaults to bbox here, the
#: API's default being the data's own), ``--max-detections`` parsed by the command (N or all).
DETECTION = MetricCommand(
    "detection",
    "assay.detection.evaluator:DetectionEvaluator",
    OPTIONS.replace("iou_type", default="bbox"),
    METRICS,
    where={
        "datums": where_option("datums", "uid and the datum's metadata"),
        "groundtruths": where_option("groundtruths", "uid, label, label_key, metadata"),
        "predictions": where_option("predictions", "uid, label, label_key, score, metadata"),
    },
    skip=("max_detections",),
)


def register(app: typer.Typer) -> None:
    """Add the ``detection`` command to ``app``."""

    @app.command("detection")
    @guarded
    @DETECTION.flags
    def detection(
        groundtruths: Path = typer.Option(
            ..., "--groundtruths", help="COCO annotations JSON, or assay detection JSONL."
        ),
        predictions: Path = typer.Option(
            ..., "--predictions", help="COCO results JSON list, or assay detection JSONL."
        ),
        input_format: str = typer.Option(
            "auto", "--input-format", help="auto (by extension), coco or jsonl."
        ),
        max_detections: str = typer.Option(
            "100", "--max-detections", help=OPTIONS["max_detections"].help
        ),
        coco: bool = typer.Option(
            False, "--coco", help="Print COCOeval's classic 12-line summary."
        ),
        all_records: bool = typer.Option(
            False,
            "--all-records",
            help="With --format table: one row per record (default: the summary and the "
            "per-class headline).",
        ),
        **given: Any,
    ) -> None:
        """Object detection / instance segmentation metrics (COCO-exact AP, AR, mAP, mAR, PR
        curves). --ci puts a bootstrap interval over images on AP and mAP."""
        given["max_detections"] = parse_max_detections(max_detections)
        summary: list[Any] = []  # COCOeval's view, with --coco

        def add(ev: Any) -> None:
            ev.add(_load(groundtruths, predictions, input_format, ev.options["iou_type"]))

        def compute(ev: Any, wanted: tuple[str, ...] | None) -> Any:
            from assay.detection.metrics import coco_summary
            from assay.results import MetricSet

            # --coco alone: just the classic summary
            records = MetricSet() if coco and wanted is None else ev.compute(wanted)
            if coco:
                summary.append(ev.coco(all_precision=False))
                if not records.filter("COCOSummary"):
                    records = records + coco_summary(summary[0])
            return records

        def show(records: Any, kwargs: dict[str, Any]) -> None:
            if summary and kwargs["out"] is None:  # stdout is the classic summary alone
                meta = {k: kwargs[k] for k in ("kind", "dataset", "parameters")}
                save_metrics(records, save=kwargs["save"], url=kwargs["db"], **meta)
            else:
                from assay.detection.report import detection_tables

                publish(records, **(kwargs | {"view": None if all_records else detection_tables}))
            if summary:
                typer.echo(format_coco_summary(summary[0].stats()))

        DETECTION.run(
            given,
            add=add,
            dataset=str(groundtruths),
            inputs={"groundtruths": str(groundtruths), "predictions": str(predictions)},
            compute=compute,
            show=show,
        )
