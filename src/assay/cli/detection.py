"""``assay detection``: COCO-exact detection / instance-segmentation metrics from files.

Examples::

    assay detection --groundtruths instances_val.json --predictions results.json --coco
    assay detection --groundtruths gt.jsonl --predictions pred.jsonl --iou-type segm \
        --metrics AP,mAP

``--where`` (datums), ``--where-groundtruths`` and ``--where-predictions`` filter with
pandas-query expressions over ``uid``, ``label``, ``score`` and the ``metadata`` objects of
the JSONL datums and annotations; ``--examples-limit``/``--examples-offset`` page Examples.

Only typer and the shared CLI helpers are imported at module level; the numpy-heavy
detection modules (pycocotools, shapely) load inside the command, so ``--help`` is fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.options import (
    apply_where,
    by_option,
    cluster_option,
    examples_page_options,
    interval_kwargs,
    interval_options,
    where_option,
)
from assay.cli.support import (
    OutputFormat,
    db_option,
    guarded,
    parse_floats,
    publish,
    save_metrics,
    save_option,
)
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


def _thresholds(text: str | None, option: str) -> Any:
    """Comma-separated IoU thresholds, each in [0, 1] (None when the option is absent)."""
    values = parse_floats(text, option=option)
    if values is not None and (not values or any(not 0.0 <= v <= 1.0 for v in values)):
        raise InvalidInputError(
            f"IoU thresholds must be numbers in [0, 1], got {text!r}", source=option
        )
    return values


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


def _iou_type(text: str) -> str:
    from assay._validation import check_choice

    return str(check_choice(text, ("bbox", "segm"), source="--iou-type"))


def _metric_list(text: str | None) -> list[str] | None:
    from assay.detection.options import METRIC_TYPES

    wanted = [m.strip() for m in text.split(",") if m.strip()] if text else None
    from assay._validation import check_known

    check_known(wanted or [], METRIC_TYPES, source="--metrics")
    return wanted


def _run(
    files: tuple[Path, Path, str],
    options: dict[str, Any],
    wanted: list[str] | None,
    *,
    coco: bool,
    fmt: Any,
    out: Path | None,
    save: bool,
    db: str | None,
    where: dict[str, str | None],
    view: str | None = "headline",
) -> None:
    """Evaluate, then store (``--save``), write ``--out`` and print: records, or with
    ``--coco`` the classic summary (the records then go to ``--out`` only)."""
    from assay.detection.evaluator import DetectionEvaluator
    from assay.detection.metrics import coco_summary
    from assay.results import MetricSet

    groundtruths, predictions, input_format = files
    ev = DetectionEvaluator(**options)
    ev.add(_load(groundtruths, predictions, input_format, options["iou_type"]))
    ev = apply_where(ev, where)
    summary_only = coco and wanted is None  # --coco alone: just the classic summary
    records = MetricSet() if summary_only else ev.compute(wanted)
    summary = ev.coco(all_precision=False) if coco else None
    if summary is not None and not records.filter("COCOSummary"):
        records = records + coco_summary(summary)
    params = {"groundtruths": str(groundtruths), "predictions": str(predictions), **ev.config()}
    params |= {f"where_{k}": v for k, v in where.items() if v is not None}
    meta: dict[str, Any] = dict(kind="detection", dataset=str(groundtruths), parameters=params)
    if summary is not None and out is None:  # stdout is the classic summary alone
        save_metrics(records, save=save, url=db, **meta)
    else:
        from assay.detection.report import detection_tables

        shown = detection_tables if view == "headline" else None
        publish(records, fmt=fmt, out=out, title="detection", save=save, db=db, view=shown, **meta)
    if summary is not None:
        typer.echo(format_coco_summary(summary.stats()))


EXAMPLES_LIMIT, EXAMPLES_OFFSET = examples_page_options()
CI, CI_METHOD, NUM_BOOTSTRAP, SEED = interval_options()


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
            None, "--iou-thresholds", help="Comma-separated, each in [0, 1]; default 0.5:0.05:0.95."
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
        max_detections: str = typer.Option(
            "100", "--max-detections", help="Detections kept per datum and label: N or 'all'."
        ),
        recall_score_threshold: float = typer.Option(
            0.0, "--recall-score-threshold", help="AR counts true positives scoring >= this."
        ),
        score_thresholds: str = typer.Option(
            None,
            "--score-thresholds",
            help="Comma-separated score thresholds of AR/mAR, Counts, Precision, Recall, F1, "
            "Accuracy, ConfusionMatrix (default: --recall-score-threshold).",
        ),
        matching: str = typer.Option(
            "coco",
            "--matching",
            help="coco (default) or valor: valor-lite's matching rule (and its binned AP) "
            "for AP, AR and the Counts family.",
        ),
        pr_curve_iou_threshold: float = typer.Option(
            0.5, "--pr-curve-iou-threshold", help="IoU threshold of the precision-recall curves."
        ),
        pr_curve_max_examples: int = typer.Option(
            1, "--pr-curve-max-examples", help="Examples per DetailedPrecisionRecallCurve entry."
        ),
        zero_division: float = typer.Option(
            None,
            "--zero-division",
            help="Value of a ratio with a zero denominator (default: null).",
        ),
        input_format: str = typer.Option(
            "auto", "--input-format", help="auto (by extension), coco or jsonl."
        ),
        examples_limit: int = EXAMPLES_LIMIT,
        examples_offset: int = EXAMPLES_OFFSET,
        where: str = where_option("datums", "uid and the datum's metadata"),
        where_groundtruths: str = where_option("groundtruths", "uid, label, label_key, metadata"),
        where_predictions: str = where_option(
            "predictions", "uid, label, label_key, score, metadata"
        ),
        by: list[str] = by_option("An image metadata field", "Sliced: AP, AR, mAP, mAR."),
        ci: float = CI,
        ci_method: str = CI_METHOD,
        num_bootstrap: int = NUM_BOOTSTRAP,
        seed: int = SEED,
        cluster: str = cluster_option("image"),
        fmt: OutputFormat = typer.Option(
            OutputFormat.json,
            "--format",
            help="json or table (the summary and the per-class headline; --all-records for "
            "every record).",
        ),
        all_records: bool = typer.Option(
            False, "--all-records", help="With --format table: one row per record."
        ),
        out: Path = typer.Option(None, "--out", help="Write the JSON records here."),
        save: bool = save_option(),
        db: str = db_option(),
    ) -> None:
        """Object detection / instance segmentation metrics (COCO-exact AP, AR, mAP, mAR, PR
        curves). --ci puts a bootstrap interval over images on AP and mAP."""
        wanted = _metric_list(metrics)
        from assay._validation import check_choice

        check_choice(matching, ("coco", "valor"), source="--matching")
        options = dict(
            iou_type=_iou_type(iou_type),
            iou_thresholds=_thresholds(iou_thresholds, "--iou-thresholds"),
            ar_iou_thresholds=_thresholds(ar_iou_thresholds, "--ar-iou-thresholds") or [0.5, 0.75],
            recall_score_threshold=recall_score_threshold,
            score_thresholds=parse_floats(score_thresholds, option="--score-thresholds"),
            matching=matching,
            max_detections=parse_max_detections(max_detections),
            pr_curve_iou_threshold=_thresholds(
                str(pr_curve_iou_threshold), "--pr-curve-iou-threshold"
            )[0],
            pr_curve_max_examples=pr_curve_max_examples,
            zero_division=zero_division,
            examples_limit=examples_limit,
            examples_offset=examples_offset,
            **interval_kwargs(ci, ci_method, num_bootstrap, seed, cluster),
            **({"by": list(by)} if by else {}),
        )
        files = (groundtruths, predictions, input_format)
        where_by = {
            "datums": where,
            "groundtruths": where_groundtruths,
            "predictions": where_predictions,
        }
        view = None if all_records else "headline"
        _run(files, options, wanted, coco=coco, fmt=fmt, out=out, save=save, db=db, where=where_by,
             view=view)  # fmt: skip
