"""A readable view of detection records (``assay detection --format table``).

A COCO evaluation has hundreds of records per label key (AP at each IoU threshold, AR, curves);
a table of all of them is thousands of lines. This view shows, and recomputes nothing:

* the summary: ``mAPAveragedOverIOUs`` (COCO's AP@[.5:.95]), ``mAP`` at IoU 0.5 and 0.75,
  ``mAR`` and ``mARAveragedOverScores``, and COCOeval's 12 numbers when ``COCOSummary``
  records were asked for;
* the per-class headline, a row per label: AP@[.5:.95], AP at IoU 0.5 and 0.75, AR;
* one line counting the other records, which ``--all-records`` lists in full (one row per
  record, as every other command's table).

Values carry their intervals (``0.4210 [0.3900, 0.4500]``); each slice of ``--by`` gets its own
summary and headline, titled with the slice.

Example:
    >>> from assay.results import Metric, MetricSet
    >>> ms = MetricSet([Metric("mAPAveragedOverIOUs", 0.42, {"label_key": "class"}),
    ...     Metric("APAveragedOverIOUs", 0.5, {"label_key": "class", "label_value": "cat"})])
    >>> [str(t.title) for t in detection_tables(ms)]
    ['detection summary', 'per class']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.results import Metric, MetricSet
from assay.terminal import printable, value_text

if TYPE_CHECKING:  # rich loads when a table is printed (not for --format json)
    from rich.table import Table
    from rich.text import Text

__all__ = ["detection_tables"]

#: summary record type (at an IoU threshold, or None) -> its name on screen
SUMMARY = (
    ("mAPAveragedOverIOUs", None, "mAP@[.5:.95]"),
    ("mAP", 0.5, "mAP@.5"),
    ("mAP", 0.75, "mAP@.75"),
    ("mAR", None, "mAR"),
    ("mARAveragedOverScores", None, "mAR (averaged over scores)"),
)
#: per-class columns: (record type, IoU threshold or None, header)
PER_CLASS = (
    ("APAveragedOverIOUs", None, "AP@[.5:.95]"),
    ("AP", 0.5, "AP@.5"),
    ("AP", 0.75, "AP@.75"),
    ("AR", None, "AR"),
)


def _slice_title(m: Metric) -> str:
    p = m.parameters
    if "slice_column" not in p:
        return ""
    n = p.get("slice_n", p.get("n"))
    value = "null" if p["slice"] is None else p["slice"]
    return f" | slice {p['slice_column']}={value}" + (f", n={n}" if n is not None else "")


def _matches(m: Metric, type_: str, iou: float | None) -> bool:
    return m.type == type_ and (iou is None or m.parameters.get("iou_threshold") == iou)


def _text(v: Any) -> Text:
    from rich.text import Text

    return Text(printable(v))


def _summary(records: list[Metric], title: str) -> tuple[Table, set[int]]:
    from rich.table import Table

    table = Table(title=_text("detection summary" + title))
    for header in ("label key", "metric", "value"):
        table.add_column(header, justify="right" if header == "value" else "left")
    used = set()
    for type_, iou, name in SUMMARY:
        for m in records:
            if _matches(m, type_, iou):
                t = m.parameters.get("score_threshold")
                shown = name + (f" (score >= {t:g})" if isinstance(t, (int, float)) else "")
                table.add_row(_text(m.parameters.get("label_key", "")), shown,
                              value_text(m.value, m.parameters))  # fmt: skip
                used.add(id(m))
    for m in records:
        if m.type == "COCOSummary":
            p = m.parameters
            name = f"{p['statistic']} @IoU={p['iou']} area={p['area']} maxDets={p['max_dets']}"
            table.add_row(_text(p.get("iou_type", "")), name, value_text(m.value, p))
            used.add(id(m))
    return table, used


def _per_class(records: list[Metric], title: str) -> tuple[Table, set[int]]:
    from rich.table import Table

    rows: dict[tuple[str, str], dict[str, Metric]] = {}
    used = set()
    for m in records:
        for type_, iou, header in PER_CLASS:
            if _matches(m, type_, iou) and "label_value" in m.parameters:
                key = (str(m.parameters.get("label_key", "")), str(m.parameters["label_value"]))
                if header not in rows.setdefault(key, {}):  # (AR: the first score threshold)
                    rows[key][header] = m
                    used.add(id(m))
    table = Table(title=_text("per class" + title))
    table.add_column("label key")
    table.add_column("label", style="bold", overflow="fold")
    for _, _, header in PER_CLASS:
        table.add_column(header, justify="right")
    for (key, label), cells in rows.items():
        shown = [
            value_text(cells[h].value, cells[h].parameters) if h in cells else ""
            for _, _, h in PER_CLASS
        ]
        table.add_row(_text(key), _text(label), *shown)
    return table, used


def detection_tables(metrics: MetricSet) -> list[Any]:
    """The summary and per-class tables for the whole set and each slice, then a line
    counting the records not shown (see the module docstring)."""
    from rich.text import Text

    parts: dict[str, list[Metric]] = {}
    for m in metrics:
        parts.setdefault(_slice_title(m), []).append(m)
    out: list[Any] = []
    shown: set[int] = set()
    for title, records in parts.items():
        for build in (_summary, _per_class):
            table, used = build(records, title)
            if used:
                out.append(table)
                shown |= used
    rest: dict[str, int] = {}
    for m in metrics:
        if id(m) not in shown:
            rest[m.type] = rest.get(m.type, 0) + 1
    if rest:
        listed = ", ".join(f"{n} {t}" for t, n in rest.items())
        out.append(
            Text(f"not shown: {listed} (--all-records lists every record; the JSON has them)")
        )
    return out
