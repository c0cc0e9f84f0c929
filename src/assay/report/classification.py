"""Classification plots: ROC and PR curves per label, the confusion matrix as a heat map.

ROC curves come from ``ROCCurve`` records (opt-in, exact points: thinned here); PR curves
from ``PrecisionRecallCurve`` (one point per curve threshold). Several runs are overlaid,
one line per run and label. Also used for any kind whose records have these types.
"""

from __future__ import annotations

from typing import Any

from assay.report.figures import Figure, figure, heatmap, line, records, run_label
from assay.store.records import Evaluation

__all__ = ["figures", "roc_figures", "pr_figures", "confusion_figures"]


def _by_key(runs: list[Evaluation], type_: str) -> dict[str, list[tuple[Evaluation, Any]]]:
    out: dict[str, list[tuple[Evaluation, Any]]] = {}
    for ev in runs:
        for m in records(ev, type_):
            out.setdefault(str(m.parameters.get("label_key", "class")), []).append((ev, m))
    return out


def roc_figures(runs: list[Evaluation]) -> list[Figure]:
    """One figure per label key: a ROC curve per run and label, and the chance diagonal."""
    out = []
    for key, found in _by_key(runs, "ROCCurve").items():
        traces = []
        for ev, m in found:
            for label, c in (m.value or {}).items():
                if c:
                    name = f"{run_label(ev)} · {label}" if len(runs) > 1 else str(label)
                    traces.append(line(c["fpr"], c["tpr"], name))
        if traces:
            chance = line([0, 1], [0, 1], "chance", line={"dash": "dot", "color": "#999"})
            out.append(
                figure(
                    f"ROC curves ({key})",
                    [*traces, chance],
                    x_title="false positive rate",
                    y_title="true positive rate",
                    caption="roc",
                )
            )
    return out


def pr_figures(runs: list[Evaluation], title: str = "Precision-recall curves") -> list[Figure]:
    """One figure per label key (and IoU threshold): precision against recall per label."""
    out = []
    found: dict[str, list[tuple[Evaluation, Any]]] = {}
    for ev in runs:
        for m in records(ev, "PrecisionRecallCurve"):
            key = str(m.parameters.get("label_key", "class"))
            if "iou_threshold" in m.parameters:
                key += f", IoU {m.parameters['iou_threshold']}"
            found.setdefault(key, []).append((ev, m))
    for key, pairs in found.items():
        traces = []
        for ev, m in pairs:
            for label, curve in (m.value or {}).items():
                pts = sorted(
                    (float(t), p["recall"], p["precision"])
                    for t, p in curve.items()
                    if p.get("recall") is not None and p.get("precision") is not None
                )
                if pts:
                    name = f"{run_label(ev)} · {label}" if len(runs) > 1 else str(label)
                    text = [f"score >= {t:g}" for t, _, _ in pts]
                    traces.append(
                        line([r for _, r, _ in pts], [p for _, _, p in pts], name, text=text)
                    )
                    traces[-1]["mode"] = "lines+markers"
        if traces:
            out.append(
                figure(
                    f"{title} ({key})",
                    traces,
                    x_title="recall",
                    y_title="precision",
                    caption="pr",
                    xaxis={"range": [0, 1.02]},
                    yaxis={"range": [0, 1.02]},
                )
            )
    return out


def _matrix(value: dict[str, Any]) -> tuple[list[str], list[str], list[list[int]]]:
    cm = value.get("confusion_matrix") or {}
    truths = sorted(cm)
    preds = sorted({p for row in cm.values() for p in row} | set(truths))
    z = [[int(cm[t].get(p, 0)) for p in preds] for t in truths]
    missed = value.get("unmatched_ground_truths") or {}
    if any(missed.values()):
        preds.append("(none)")
        for t, row in zip(truths, z):
            row.append(int(missed.get(t, 0)))
    return truths, preds, z


def confusion_figures(runs: list[Evaluation]) -> list[Figure]:
    """A heat map per run, label key and score threshold: truth rows, predicted columns."""
    out = []
    for ev in runs:
        for m in records(ev, "ConfusionMatrix"):
            if not isinstance(m.value, dict) or "confusion_matrix" not in m.value:
                continue
            truths, preds, z = _matrix(m.value)
            if not z:
                continue
            where = ", ".join(
                f"{k} {m.parameters[k]}"
                for k in ("label_key", "score_threshold")
                if k in m.parameters
            )
            out.append(
                figure(
                    f"Confusion matrix, {run_label(ev)} ({where})",
                    [heatmap(z, preds, truths)],
                    x_title="predicted",
                    y_title="ground truth",
                    height=max(320, 60 + 40 * len(truths)),
                    yaxis={"autorange": "reversed"},
                    caption="confusion",
                )
            )
    return out


def figures(runs: list[Evaluation]) -> list[Figure]:
    """ROC curves, PR curves, confusion matrices."""
    return roc_figures(runs) + pr_figures(runs) + confusion_figures(runs)
