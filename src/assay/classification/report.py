"""A readable view of classification records: report, confusion matrix, curves summarised.

:func:`classification_report` reads the records an evaluator computed (no recomputation):

* per label key and score threshold, scikit-learn's ``classification_report`` layout: per
  label precision, recall, F1 and support (TP + FN), then accuracy, the macro average (the
  plain mean over labels) and the weighted average (weighted by support). An average over
  an undefined value is undefined (shown as ``-``) unless ``zero_division`` was set;
* the ``ConfusionMatrix`` as a grid (rows: truth, columns: prediction, and ``unmatched``);
* ROC AUC per label, and each precision-recall curve summarised by its best F1 and the
  threshold where it is reached.

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


def _averages(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    total = sum(r["support"] for r in rows.values())
    macro: dict[str, Any] = {"support": total}
    weighted: dict[str, Any] = {"support": total}
    for _, name in _FIELDS:
        values = [r[name] for r in rows.values()]
        macro[name] = None if not values or None in values else sum(values) / len(values)
        parts = [(r[name], r["support"]) for r in rows.values() if r["support"]]
        if not total or any(v is None for v, _ in parts):
            weighted[name] = None
        else:
            weighted[name] = sum(v * w for v, w in parts) / total
    return {"macro avg": macro, "weighted avg": weighted}


def _report_dict(ms: MetricSet) -> dict[str, dict[float, dict[str, Any]]]:
    rows: dict[tuple[str, float], dict[str, dict[str, Any]]] = defaultdict(dict)
    accuracy: dict[tuple[str, float], Any] = {}
    for m in ms:
        p = m.parameters
        where: tuple[str, float] = (str(p.get("label_key")), float(p.get("score_threshold", 0)))
        if m.type == "Counts":
            row = rows[where].setdefault(p["label_value"], {})
            row["support"] = m.value["tp"] + m.value["fn"]
        elif m.type in ("Precision", "Recall", "F1"):
            name = dict(_FIELDS)[m.type]
            rows[where].setdefault(p["label_value"], {})[name] = m.value
        elif m.type == "Accuracy":
            accuracy[where] = m.value
    out: dict[str, dict[float, dict[str, Any]]] = defaultdict(dict)
    for (key, t), labels in rows.items():
        if not all(
            {"precision", "recall", "f1-score", "support"} <= set(r) for r in labels.values()
        ):
            continue  # the report needs Counts, Precision, Recall and F1
        order = ("precision", "recall", "f1-score", "support")
        block: dict[str, Any] = {n: {f: r[f] for f in order} for n, r in labels.items()}
        if (key, t) in accuracy:
            block["accuracy"] = accuracy[key, t]
        block.update(_averages(labels))
        out[key][t] = block
    return dict(out)


def _num(v: Any, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _report_text(key: str, t: float, block: dict[str, Any], digits: int) -> list[str]:
    names = [n for n in block if n not in ("accuracy", "macro avg", "weighted avg")]
    width = max([len(n) for n in names] + [len("weighted avg"), digits])
    head = " " * width + "".join(f"{h:>10}" for h in ("precision", "recall", "f1-score"))
    lines = [f"label key {key!r}, score threshold {t}", "", head + f"{'support':>10}", ""]

    def row(name: str, r: dict[str, Any]) -> str:
        cells = "".join(f"{_num(r[f], digits):>10}" for _, f in _FIELDS)
        return f"{name:>{width}}{cells}{r['support']:>10}"

    lines += [row(n, block[n]) for n in names] + [""]
    if "accuracy" in block:
        support = block["macro avg"]["support"]
        acc = _num(block["accuracy"], digits)
        lines.append(f"{'accuracy':>{width}}{'':>20}{acc:>10}{support:>10}")
    lines += [row(n, block[n]) for n in ("macro avg", "weighted avg")]
    return lines


def _matrix_text(m: Metric) -> list[str]:
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
        f"{p.get('score_threshold')}{hardmax})",
        f"{corner:<{first}}" + "".join(f"{c:>{width}}" for c in cols),
    ]
    for g in labels:
        cells = [count(cm[g][q]) for q in labels] + [count(um[g])]
        lines.append(f"{g:<{first}}" + "".join(f"{c:>{width}}" for c in cells))
    return lines


def _curve_text(ms: MetricSet, digits: int) -> list[str]:
    lines = []
    for m in ms:
        p = m.parameters
        if m.type == "ROCAUC":
            lines.append(f"ROCAUC {p['label_key']}={p['label_value']}: {_num(m.value, digits)}")
        elif m.type == "mROCAUC":
            lines.append(f"mROCAUC {p['label_key']}: {_num(m.value, digits)}")
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
                    f"PrecisionRecallCurve {p['label_key']}={lab}: {len(points)} thresholds, "
                    f"best F1 {where}"
                )
    return lines


def classification_report(ms: MetricSet, *, output_dict: bool = False, digits: int = 2) -> Any:
    """The records as text (see the module docstring), or with ``output_dict`` as
    ``{label_key: {score_threshold: {label: {precision, recall, f1-score, support}, accuracy,
    "macro avg", "weighted avg"}}}`` (scikit-learn's keys)."""
    report = _report_dict(ms)
    if output_dict:
        return report
    lines: list[str] = []
    for key in sorted(report):
        for t in sorted(report[key]):
            lines += _report_text(key, t, report[key][t], digits) + [""]
    for m in ms:
        if m.type in ("ConfusionMatrix", "ConfusionMatrixWithExamples"):
            lines += _matrix_text(m) + [""]
    lines += _curve_text(ms, digits)
    rest: dict[str, int] = defaultdict(int)
    for m in ms:
        if m.type in ("Examples", "DetailedPrecisionRecallCurve"):
            rest[m.type] += 1
    for name, n in rest.items():
        lines.append(f"{name}: {n} record(s), see the JSON records")
    return "\n".join(lines).rstrip() + "\n"
