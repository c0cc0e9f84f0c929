"""Per-label ranking metrics: ROC AUC, its mean, and the precision-recall curves.

Each label value is its own binary problem over *all* its scores (not only top
predictions): the datums of that label are the positives, every other datum of the key a
negative, and a datum without a score for the label ranks below every given score.

* ``ROCAUC`` = (#{(p, n): s_p > s_n} + 0.5 #{(p, n): s_p = s_n}) / (#positives #negatives),
  the trapezoidal area under the ROC curve; undefined without positives and negatives.
* ``mROCAUC`` = the mean of the defined ROC AUCs of a key.
* ``ROCCurve``: the exact ROC curve per label (scikit-learn's ``roc_curve`` with
  ``drop_intermediate=True``: the points where the curve turns); opt-in, it has up to one
  point per distinct score.
* ``PrecisionRecallCurve``: at each curve threshold ``t``, TP = positives scoring ``>= t``,
  FP = negatives scoring ``>= t``, FN and TN the rest, with precision, recall and F1.
* ``DetailedPrecisionRecallCurve``: the same counts split by kind, see
  :mod:`assay.classification.detailed`.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
from numpy.typing import NDArray

import assay.classification.records as records
from assay import ratios
from assay.classification.compute import sorted_roc_auc, sorted_threshold_counts
from assay.classification.detailed import detailed_curve
from assay.classification.types import KeyBlock
from assay.results import Metric

__all__ = ["build", "curve_records", "roc_points"]


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


def roc_points(
    pos: NDArray[np.float64],
    neg: NDArray[np.float64],
    pos_weights: NDArray[Any] | None = None,
    neg_weights: NDArray[Any] | None = None,
) -> dict[str, Any] | None:
    """The ROC curve of ascending-sorted positive and negative scores; ``None`` without both.

    ``pos_weights``/``neg_weights`` say how many datums each score stands for (the compact
    evaluator's counts); ``None`` is one each.

    Thresholds are the distinct scores in decreasing order; TP (FP) at ``t`` counts the
    positive (negative) scores ``>= t``. Points on a straight segment are dropped (only
    where the curve turns is kept, as scikit-learn's ``drop_intermediate``), and the curve
    starts at (0, 0), whose threshold is ``None`` (scikit-learn's ``inf``); an unscored
    datum's ``-inf`` threshold is ``None`` too.

    Example:
        >>> roc_points(np.array([0.35, 0.8]), np.array([0.1, 0.4]))["fpr"]
        [0.0, 0.0, 0.5, 0.5, 1.0]
    """
    if len(pos) == 0 or len(neg) == 0:
        return None
    th = np.unique(np.concatenate((pos, neg)))[::-1]
    tps = _at_or_above(pos, pos_weights, th)
    fps = _at_or_above(neg, neg_weights, th)
    if len(th) > 2:
        turns = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        keep = np.flatnonzero(np.concatenate(([True], turns, [True])))
        th, tps, fps = th[keep], tps[keep], fps[keep]
    thresholds: list[float | None] = [None]
    thresholds += [float(t) if np.isfinite(t) else None for t in th]
    return {
        "fpr": (np.concatenate(([0], fps)) / fps[-1]).tolist(),
        "tpr": (np.concatenate(([0], tps)) / tps[-1]).tolist(),
        "thresholds": thresholds,
    }


def _at_or_above(
    scores: NDArray[np.float64], weights: NDArray[np.float64] | None, th: NDArray[np.float64]
) -> NDArray[Any]:
    """How many (weighted) sorted ``scores`` are ``>= t`` for each threshold ``t``."""
    idx = np.searchsorted(scores, th, side="left")
    if weights is None:
        return len(scores) - idx
    cum = np.concatenate(([0], np.cumsum(weights)))
    return cum[-1] - cum[idx]


def curve_records(
    b: KeyBlock,
    thresholds: NDArray[np.float64],
    *,
    want: AbstractSet[str],
    zero_division: float | None,
    max_examples: int,
) -> list[Metric]:
    """ROCAUC per label, mROCAUC, ROCCurve, PrecisionRecallCurve and its detailed form."""
    aucs, roc, counts = {}, {}, []
    want_counts = bool(want & {"PrecisionRecallCurve", "DetailedPrecisionRecallCurve"})
    # one label's sorted scores at a time: every use of them, then the next label
    for lab, (p, q, pw, qw) in zip(b.labels, b.weighted_splits()):
        aucs[lab] = sorted_roc_auc(p, q, pw, qw)
        if "ROCCurve" in want:
            roc[lab] = roc_points(p, q, pw, qw)
        if want_counts:
            counts.append(sorted_threshold_counts(p, q, thresholds, pw, qw))
    out = _roc_records(b, aucs, want)
    if "ROCCurve" in want:
        out.append(records.roc_curve(roc, label_key=b.key))
    if not want_counts:
        return out
    if "PrecisionRecallCurve" in want:
        curve = {lab: _curve_rows(c, thresholds, zero_division) for lab, c in zip(b.labels, counts)}
        out.append(records.pr_curve(curve, label_key=b.key))
    if "DetailedPrecisionRecallCurve" in want:
        value = detailed_curve(b, thresholds, counts, max_examples)
        out.append(
            records.detailed_pr_curve(value, label_key=b.key, pr_curve_max_examples=max_examples)
        )
    return out


def build(b: KeyBlock, want: AbstractSet[str], options: Mapping[str, Any]) -> list[Metric]:
    """The ``curves`` family's builder (:data:`assay.classification.declared.METRICS`):
    :func:`curve_records` on the evaluator's curve thresholds."""
    grid = np.asarray(options["pr_curve_thresholds"], dtype=np.float64)
    return curve_records(
        b,
        grid,
        want=want,
        zero_division=options["zero_division"],
        max_examples=options["pr_curve_max_examples"],
    )
