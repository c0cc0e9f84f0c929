"""Per-label ranking metrics: ROC AUC, its mean, and the precision-recall curves.

Each label value is its own binary problem over *all* its scores (not only top
predictions): the datums of that label are the positives, every other datum of the key a
negative, and a datum without a score for the label ranks below every given score.

* ``ROCAUC`` = (#{(p, n): s_p > s_n} + 0.5 #{(p, n): s_p = s_n}) / (#positives #negatives),
  the trapezoidal area under the ROC curve; undefined without positives and negatives.
* ``mROCAUC`` = the mean of the defined ROC AUCs of a key.
* ``PrecisionRecallCurve``: at each curve threshold ``t``, TP = positives scoring ``>= t``,
  FP = negatives scoring ``>= t``, FN and TN the rest, with precision, recall and F1.
* ``DetailedPrecisionRecallCurve``: the same counts split by kind, see
  :mod:`assay.classification.detailed`.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay import ratios
from assay.classification import records
from assay.classification.compute import sorted_roc_auc, sorted_threshold_counts
from assay.classification.detailed import detailed_curve
from assay.classification.types import KeyBlock
from assay.results import Metric

__all__ = ["CURVE_TYPES", "curve_records"]

CURVE_TYPES = frozenset(
    {"ROCAUC", "mROCAUC", "PrecisionRecallCurve", "DetailedPrecisionRecallCurve"}
)


def _curve_rows(
    counts: NDArray[np.int64], thresholds: NDArray[np.float64], zero_division: float | None
) -> dict[float, dict[str, Any]]:
    tp, fp, fn, tn = counts.T
    prec, rec, f1 = ratios.precision_recall_f1(tp, fp, fn, zero_division)
    return {
        float(t): {
            "tp": int(tp[i]),
            "fp": int(fp[i]),
            "fn": int(fn[i]),
            "tn": int(tn[i]),
            "precision": ratios.value_or_none(prec[i]),
            "recall": ratios.value_or_none(rec[i]),
            "f1_score": ratios.value_or_none(f1[i]),
        }
        for i, t in enumerate(thresholds)
    }


def _roc_records(b: KeyBlock, aucs: dict[str, float], want: AbstractSet[str]) -> list[Metric]:
    out: list[Metric] = []
    if "ROCAUC" in want:
        out.extend(records.roc_auc(v, label_key=b.key, label_value=lab) for lab, v in aucs.items())
    if "mROCAUC" in want:
        defined = [v for v in aucs.values() if not np.isnan(v)]
        excluded = sorted(lab for lab, v in aucs.items() if np.isnan(v))
        mean = float(np.mean(defined)) if defined else None
        out.append(records.mean_roc_auc(mean, label_key=b.key, labels_excluded=excluded))
    return out


def curve_records(
    b: KeyBlock,
    thresholds: NDArray[np.float64],
    *,
    want: AbstractSet[str],
    zero_division: float | None,
    max_examples: int,
) -> list[Metric]:
    """ROCAUC per label, mROCAUC, PrecisionRecallCurve and DetailedPrecisionRecallCurve."""
    splits = b.weighted_splits()
    aucs = {lab: sorted_roc_auc(*split) for lab, split in zip(b.labels, splits)}
    out = _roc_records(b, aucs, want)
    if not want & {"PrecisionRecallCurve", "DetailedPrecisionRecallCurve"}:
        return out
    counts = [sorted_threshold_counts(p, q, thresholds, pw, qw) for p, q, pw, qw in splits]
    if "PrecisionRecallCurve" in want:
        curve = {lab: _curve_rows(c, thresholds, zero_division) for lab, c in zip(b.labels, counts)}
        out.append(records.pr_curve(curve, label_key=b.key))
    if "DetailedPrecisionRecallCurve" in want:
        value = detailed_curve(b, thresholds, counts, max_examples)
        out.append(
            records.detailed_pr_curve(value, label_key=b.key, pr_curve_max_examples=max_examples)
        )
    return out
