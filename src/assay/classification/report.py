"""A readable view of classification records: report, confusion matrix, curves summarised.

:func:`classification_report` reads the records an evaluator computed (no recomputation):

* per label key and score threshold, scikit-learn's ``classification_report`` layout: per
  label precision, recall, F1 and support (TP + FN), then accuracy, the macro average (the
  plain mean over labels) and the weighted average (weighted by support). An average over
  an undefined value is undefined (shown as ``-``) unless ``zero_division`` was set;
* the ``ConfusionMatrix`` as a grid (rows: truth, columns: prediction, and ``unmatched``);
* ROC AUC per label, and each precision-recall curve summarised by its best F1 and the
  threshold where it is reached;
* of any other type (the detailed curve, ROCCurve, Examples), how many records it has.

Every number the records carry is shown as they say it: a record with an interval reads
``0.84 [0.81, 0.87]``; records of a slice (``--by``) get their own blocks, titled with the
slice (``slice site=north, n=120``), after the whole set's. With ``positive_label`` (binary
input, ``--y-score``) the positive label's precision, recall and F1 come first under the
decision rule they are computed at: the top-scoring label, i.e. the positive label when its
score is above 0.5 (scikit-learn's ``predict``).

Example:
    >>> from assay.classification import ClassificationEvaluator
    >>> ms = ClassificationEvaluator().add_arrays(
    ...     ["a", "b", "b"], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], labels=["a", "b"]).compute()
    >>> rep = classification_report(ms, output_dict=True)
    >>> rep["class"][0.0]["b"]
    {'precision': 1.0, 'recall': 0.5, 'f1-score': 0.6666666666666666, 'support': 2}
    >>> print(classification_report(ms).splitlines()[2])
                  precision    recall  f1-score   support
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from assay.results import Metric, MetricSet

__all__ = ["classification_report"]

_FIELDS = (("Precision", "precision"), ("Recall", "recall"), ("F1", "f1-score"))
_FIELD = dict(_FIELDS)
_MATRICES = ("ConfusionMatrix", "ConfusionMatrixWithExamples")
#: The types this view shows; any other type's records are counted and left to the JSON
#: (so a new metric type needs nothing here).
_SHOWN = frozenset(
    {*_FIELD, "Counts", "Accuracy", *_MATRICES, "ROCAUC", "mROCAUC", "PrecisionRecallCurve"}
)


def _averages(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    supports = [r["support"] for r in rows.values()]
    total = None if None in supports else sum(supports)  # a slice has no Counts records
    macro: dict[str, Any] = {"support": total}
    weighted: dict[str, Any] = {"support": total}
    for _, name in _FIELDS:
        values = [r[name] for r in rows.values()]
        macro[name] = None if not values or None in values else sum(values) / len(values)
        parts = [(r[name], r["support"]) for r in rows.values() if r["support"]]
        if not total or any(v is None for v, _ in parts):  # (no support: no weights)
            weighted[name] = None
        else:
            weighted[name] = sum(v * w for v, w in parts) / total
    return {"macro avg": macro, "weighted avg": weighted}


def _interval(m: Metric, digits: int) -> str:
    """`` [lo, hi]`` when the record carries an interval, else nothing."""
    lo, hi = m.parameters.get("ci_low"), m.parameters.get("ci_high")
    if lo is None or hi is None:
        return ""
    return f" [{_num(lo, digits)}, {_num(hi, digits)}]"


def _report_dict(
    ms: MetricSet, intervals: dict[Any, str] | None = None, digits: int = 2
) -> dict[str, dict[float, dict[str, Any]]]:
    """The report's numbers; ``intervals`` (when given) collects each cell's interval text
    under ``(key, threshold, label, field)``."""
    rows: dict[tuple[str, float], dict[str, dict[str, Any]]] = defaultdict(dict)
    accuracy: dict[tuple[str, float], Any] = {}
    for m in ms:
        p = m.parameters
        where: tuple[str, float] = (str(p.get("label_key")), float(p.get("score_threshold", 0)))
        if m.type == "Counts":
            row = rows[where].setdefault(p["label_value"], {})
            row["support"] = m.value["tp"] + m.value["fn"]
        elif m.type in _FIELD:
            name = _FIELD[m.type]
            rows[where].setdefault(p["label_value"], {})[name] = m.value
            if intervals is not None:
                intervals[(*where, p["label_value"], name)] = _interval(m, digits)
        elif m.type == "Accuracy":
            accuracy[where] = m.value
            if intervals is not None:
                intervals[(*where, "accuracy", "accuracy")] = _interval(m, digits)
    out: dict[str, dict[float, dict[str, Any]]] = defaultdict(dict)
    for (key, t), labels in rows.items():
        if not all({"precision", "recall", "f1-score"} <= set(r) for r in labels.values()):
            continue  # the report needs Precision, Recall and F1 (and Counts for support)
        for r in labels.values():
            r.setdefault("support", None)
        order = ("precision", "recall", "f1-score", "support")
        block: dict[str, Any] = {n: {f: r[f] for f in order} for n, r in labels.items()}
        if (key, t) in accuracy:
            block["accuracy"] = accuracy[key, t]
        block.update(_averages(labels))
        out[key][t] = block
    return dict(out)


def _num(v: Any, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _report_text(
    key: str, t: float, block: dict[str, Any], digits: int, cis: dict[Any, str], title: str
) -> list[str]:
    names = [n for n in block if n not in ("accuracy", "macro avg", "weighted avg")]
    width = max([len(n) for n in names] + [len("weighted avg"), digits])

    def cell(name: str, field: str, v: Any) -> str:
        return _num(v, digits) + cis.get((key, t, name, field), "")

    cells = {
        (n, f): cell(n, f, block[n][f]) for n in [*names, "macro avg", "weighted avg"]
        for _, f in _FIELDS
    }  # fmt: skip
    acc = cell("accuracy", "accuracy", block["accuracy"]) if "accuracy" in block else ""
    w = max([len(c) + 2 for c in cells.values()] + [len(acc) + 2, 10])  # scikit-learn's 10
    head = " " * width + "".join(f"{h:>{w}}" for h in ("precision", "recall", "f1-score"))
    lines = [f"label key {key!r}, score threshold {t}{title}", "", head + f"{'support':>10}", ""]

    def row(name: str, r: dict[str, Any]) -> str:
        support = "-" if r["support"] is None else r["support"]
        return (
            f"{name:>{width}}"
            + "".join(f"{cells[name, f]:>{w}}" for _, f in _FIELDS)
            + (f"{support:>10}")
        )

    lines += [row(n, block[n]) for n in names] + [""]
    if "accuracy" in block:
        support = block["macro avg"]["support"]
        support = "-" if support is None else support
        lines.append(f"{'accuracy':>{width}}{'':>{2 * w}}{acc:>{w}}{support:>10}")
    lines += [row(n, block[n]) for n in ("macro avg", "weighted avg")]
    return lines


def _matrix_text(m: Metric, title: str = "") -> list[str]:
    cm, um = m.value["confusion_matrix"], m.value["unmatched_ground_truths"]
    labels = list(cm)

    def count(c: Any) -> int:
        return int(c["count"] if isinstance(c, dict) else c)

    cols = [*labels, "unmatched"]
    corner = "truth \\ predicted"
    first = max([len(x) for x in labels] + [len(corner)]) + 2
    width = max([len(x) for x in cols] + [6]) + 2
    p = m.parameters
    hardmax = "" if p.get("hardmax", True) else ", hardmax=False"
    lines = [
        f"{m.type} (label key {p.get('label_key')!r}, score threshold "
        f"{p.get('score_threshold')}{hardmax}){title}",
        f"{corner:<{first}}" + "".join(f"{c:>{width}}" for c in cols),
    ]
    for g in labels:
        cells = [count(cm[g][q]) for q in labels] + [count(um[g])]
        lines.append(f"{g:<{first}}" + "".join(f"{c:>{width}}" for c in cells))
    return lines


def _curve_text(ms: MetricSet, digits: int, title: str = "") -> list[str]:
    lines = []
    for m in ms:
        p = m.parameters
        if m.type == "ROCAUC":
            value = _num(m.value, digits) + _interval(m, digits)
            lines.append(f"ROCAUC {p['label_key']}={p['label_value']}{title}: {value}")
        elif m.type == "mROCAUC":
            value = _num(m.value, digits) + _interval(m, digits)
            lines.append(f"mROCAUC {p['label_key']}{title}: {value}")
        elif m.type == "PrecisionRecallCurve":
            for lab, points in m.value.items():
                scored = [
                    (v["f1_score"], t) for t, v in points.items() if v["f1_score"] is not None
                ]
                best = max(scored, default=None, key=lambda x: (x[0], -float(x[1])))
                where = (
                    "undefined"
                    if best is None
                    else (f"{_num(best[0], digits)} at score threshold {best[1]}")
                )
                lines.append(
                    f"PrecisionRecallCurve {p['label_key']}={lab}{title}: {len(points)} "
                    f"thresholds, best F1 {where}"
                )
    return lines


def _slices(ms: MetricSet) -> dict[str, MetricSet]:
    """The records per slice: ``""`` for the whole set, then ``", slice site=north, n=120"``."""
    out: dict[str, list[Metric]] = {"": []}
    for m in ms:
        p = m.parameters
        title = ""
        if "slice_column" in p:
            n = p.get("slice_n", p.get("n"))
            value = "null" if p["slice"] is None else p["slice"]
            title = f", slice {p['slice_column']}={value}" + (f", n={n}" if n is not None else "")
        out.setdefault(title, []).append(m)
    return {k: MetricSet(v) for k, v in out.items() if v}


def _headline(ms: MetricSet, positive: str, digits: int) -> list[str]:
    """The positive label's precision, recall and F1 (binary input), with the decision rule."""
    found = {
        m.type: m
        for m in ms
        if m.type in _FIELD
        and str(m.parameters.get("label_value")) == positive
        and "slice_column" not in m.parameters
        and float(m.parameters.get("score_threshold", 0)) == 0.0
    }
    if not found:
        return []
    cells = ", ".join(
        f"{name} {_num(found[t].value, digits)}{_interval(found[t], digits)}"
        for t, name in _FIELDS
        if t in found
    )
    return [
        f"positive label {positive!r}: {cells}",
        f"  decision: the top-scoring label, i.e. {positive!r} when its score is above 0.5 "
        "(scikit-learn's predict); the blocks below give both labels",
        "",
    ]


def classification_report(
    ms: MetricSet, *, output_dict: bool = False, digits: int = 2, positive_label: Any = None
) -> Any:
    """The records as text (see the module docstring), or with ``output_dict`` as
    ``{label_key: {score_threshold: {label: {precision, recall, f1-score, support}, accuracy,
    "macro avg", "weighted avg"}}}`` (scikit-learn's keys; the whole set's records only).
    ``positive_label``: the positive label of binary input, shown first."""
    if output_dict:
        return _report_dict(_slices(ms).get("", MetricSet([])))
    lines: list[str] = []
    if positive_label is not None:
        lines += _headline(ms, str(positive_label), digits)
    for title, part in _slices(ms).items():
        cis: dict[Any, str] = {}
        report = _report_dict(part, cis, digits)
        for key in sorted(report):
            for t in sorted(report[key]):
                lines += _report_text(key, t, report[key][t], digits, cis, title) + [""]
        for m in part:
            if m.type in _MATRICES:
                lines += _matrix_text(m, title) + [""]
        lines += _curve_text(part, digits, title)
    rest: dict[str, int] = defaultdict(int)
    for m in ms:
        if m.type not in _SHOWN:
            rest[m.type] += 1
    for name, n in rest.items():
        lines.append(f"{name}: {n} record(s), see the JSON records")
    return "\n".join(lines).rstrip() + "\n"
