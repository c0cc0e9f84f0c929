"""Aggregate metrics from each datum's top prediction (hardmax).

At score threshold ``t`` a datum's top prediction counts only if its score is ``>= t``.
For label value ``c``:

* TP: datums of truth ``c`` whose counted top prediction is ``c``;
* FP: datums of another truth whose counted top prediction is ``c``;
* FN: datums of truth ``c`` not counted as ``c`` (wrong top label, or below ``t``);
* TN: the rest.

From these: Precision = TP / (TP + FP), Recall = TP / (TP + FN), F1 = 2TP / (2TP + FP + FN)
(through :mod:`assay.ratios`), and per key Accuracy = (sum of TP over labels) / datums.

With ``hardmax=False`` every label is its own binary problem (valor-lite's ``hardmax=False``):
TP counts datums of truth ``c`` whose score for ``c`` is ``>= t``, FP datums of another truth
whose score for ``c`` is ``>= t``, FN = (datums of truth ``c``) - TP, TN the rest; one datum
can then give several TPs and FPs across labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

import assay.classification.records as records
from assay import ratios
from assay.classification.compute import sorted_threshold_counts
from assay.classification.types import KeyBlock
from assay.results import Metric

__all__ = ["build", "hardmax_records"]


def _top_counts(b: KeyBlock, score_thresholds: Sequence[float]) -> list[tuple[Any, ...]]:
    """Per threshold: TP, FP, FN, TN arrays (one entry per label) from the top predictions."""
    n, k, w = b.total, len(b.labels), b.weights
    top, top_score = b.top()
    true_count = _count(b.gt, w, k)
    # One bincount per threshold over (top label, outcome), outcome 0: below the threshold,
    # 1: counted but wrong, 2: counted and right.
    kt = np.dtype(np.uint8 if 3 * k <= 255 else np.int64)
    top3 = top.astype(kt) * np.array(3, dtype=kt)
    if_counted = (top == b.gt).astype(kt) + np.array(1, dtype=kt)
    out = []
    for t in score_thresholds:
        outcome = (top_score >= t).astype(kt) * if_counted
        cells = _count(top3 + outcome, w, 3 * k).reshape(k, 3)
        tp, fp = cells[:, 2], cells[:, 1]
        fn = true_count - tp
        out.append((tp, fp, fn, n - tp - fp - fn))
    return out


def _count(codes: Any, weights: Any, size: int) -> Any:
    """``bincount``, each entry counting its weight (the compact form) or one."""
    if weights is None:
        return np.bincount(codes, minlength=size)
    return np.bincount(codes, weights=weights, minlength=size).astype(np.int64)


def _binary_counts(b: KeyBlock, score_thresholds: Sequence[float]) -> list[tuple[Any, ...]]:
    """Per threshold: TP, FP, FN, TN arrays, every label its own binary problem."""
    th = np.asarray(score_thresholds, dtype=np.float64)
    splits = b.weighted_splits()
    per_label = np.stack([sorted_threshold_counts(p, q, th, pw, qw) for p, q, pw, qw in splits])
    return [tuple(per_label[:, i, c] for c in range(4)) for i in range(len(th))]


def hardmax_records(
    b: KeyBlock,
    score_thresholds: Sequence[float],
    *,
    want: AbstractSet[str],
    zero_division: float | None,
    hardmax: bool = True,
) -> list[Metric]:
    """Counts, Precision, Recall, F1 (per label and threshold) and Accuracy (per threshold)."""
    counts = _top_counts(b, score_thresholds) if hardmax else _binary_counts(b, score_thresholds)
    out: list[Metric] = []
    for t, (tp, fp, fn, tn) in zip(score_thresholds, counts):
        prec, rec, f1 = ratios.precision_recall_f1(tp, fp, fn, zero_division)
        for j, lab in enumerate(b.labels):
            where: dict[str, Any] = {"label_key": b.key, "label_value": lab, "score_threshold": t}
            if "Counts" in want:
                value = {"tp": int(tp[j]), "fp": int(fp[j]), "fn": int(fn[j]), "tn": int(tn[j])}
                out.append(records.counts(value, **where))
            if "Precision" in want:
                out.append(records.precision(prec[j], **where))
            if "Recall" in want:
                out.append(records.recall(rec[j], **where))
            if "F1" in want:
                out.append(records.f1(f1[j], **where))
        if "Accuracy" in want:
            acc = int(tp.sum()) / b.total
            out.append(records.accuracy(acc, label_key=b.key, score_threshold=t))
    if not hardmax:  # the default (hardmax) records keep their parameters as before
        for m in out:
            m.parameters["hardmax"] = False
    return out


def build(b: KeyBlock, want: AbstractSet[str], options: Mapping[str, Any]) -> list[Metric]:
    """The ``hardmax`` family's builder (:data:`assay.classification.declared.METRICS`):
    :func:`hardmax_records` at the evaluator's score thresholds."""
    return hardmax_records(
        b,
        options["score_thresholds"],
        want=want,
        zero_division=options["zero_division"],
        hardmax=options["hardmax"],
    )
