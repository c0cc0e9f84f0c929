"""Accumulating classification evaluator: ``add()`` batches, ``merge()`` evaluators, ``compute()``.

Metric types (one record each; ``parameters`` always holds ``label_key``):

=============================  ===============================================================
``Counts``                     ``{"tp", "fp", "fn", "tn"}`` per label value and score threshold
``Precision`` / ``Recall`` /   per label value and score threshold, from the highest-scoring
``F1``                         prediction of each datum (hardmax, as the spec's aggregate metrics)
``Accuracy``                   per key and score threshold: correct top predictions / datums
``ROCAUC``                     per label value, one-vs-rest over all scores of that label
``mROCAUC``                    per key: mean ROC AUC over the labels where it is defined
``PrecisionRecallCurve``       per key: ``{label: {threshold: {tp, fp, fn, tn, precision,
                               recall, f1_score}}}``, every label its own binary problem
``DetailedPrecisionRecallCurve``  per key: the same thresholds, with false positives and false
                               negatives stratified (misclassifications / no_predictions) and
                               up to ``pr_curve_max_examples`` example uids each
=============================  ===============================================================

Undefined values (a spec "requires" that fails) are ``None`` with the reason in
``parameters["undefined"]`` (inside curves: ``None`` entries), unless ``zero_division``
is set, in which case that value is used as scikit-learn does.

Example:
    >>> import pandas as pd
    >>> ev = ClassificationEvaluator()
    >>> ev.add(pd.DataFrame({"uid": ["a", "b"], "value": ["cat", "dog"]}),
    ...        pd.DataFrame({"uid": ["a", "b"], "value": ["cat", "cat"], "score": [0.9, 0.6]}))  # doctest: +ELLIPSIS
    <...ClassificationEvaluator...>
    >>> ms = ev.compute()
    >>> ms.get("Precision", label_value="cat", score_threshold=0.0).value
    0.5
    >>> ms.get("Precision", label_value="dog", score_threshold=0.0).parameters["undefined"]
    'requires TP + FP > 0'
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.classification.compute import (
    DEFAULT_PR_CURVE_THRESHOLDS,
    sorted_roc_auc,
    sorted_threshold_counts,
)
from assay.classification.types import (
    DEFAULT_KEY,
    KeyBlock,
    block_from_arrays,
    concat_blocks,
    parse_long_form,
)
from assay.errors import InvalidInputError
from assay.results import Metric, MetricSet, undefined

__all__ = ["ClassificationEvaluator", "evaluate_classification", "METRIC_TYPES"]

METRIC_TYPES: tuple[str, ...] = (
    "Counts",
    "Precision",
    "Recall",
    "F1",
    "Accuracy",
    "ROCAUC",
    "mROCAUC",
    "PrecisionRecallCurve",
    "DetailedPrecisionRecallCurve",
)


def _rate(num: NDArray[Any], den: NDArray[Any], zero_division: float | None) -> NDArray[np.float64]:
    out = np.full(np.shape(num), np.nan if zero_division is None else float(zero_division))
    np.divide(num, den, out=out, where=np.asarray(den) > 0)
    return out


def _f1(
    tp: NDArray[Any], fp: NDArray[Any], fn: NDArray[Any], zero_division: float | None
) -> NDArray[np.float64]:
    """F1 per entry; NaN where precision or recall is undefined (strict mode)."""
    den = 2 * tp + fp + fn
    out = np.full(np.shape(tp), np.nan if zero_division is None else float(zero_division))
    np.divide(2 * tp, den, out=out, where=den > 0)
    if zero_division is None:
        out[(tp + fp == 0) | (tp + fn == 0)] = np.nan
    return out


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


class ClassificationEvaluator:
    """Classification metrics over batches of datums (see the module docstring for the metric types).

    Args:
        score_thresholds: thresholds for Counts, Precision, Recall, F1 and Accuracy; the top
            prediction of a datum counts only if its score is ``>= threshold``.
        pr_curve_thresholds: thresholds of the (detailed) precision-recall curves.
        pr_curve_max_examples: example uids kept per observation in the detailed curve.
        metrics: metric types to compute (default: all of :data:`METRIC_TYPES`).
        zero_division: value to use where a ratio's denominator is 0 (default: undefined).

    A batch must hold whole datums: a datum's ground truth and all its predictions (for a
    key) arrive in the same ``add`` call. Ties for the top prediction go to the label value
    that sorts first.
    """

    def __init__(
        self,
        *,
        score_thresholds: Sequence[float] = (0.0,),
        pr_curve_thresholds: Sequence[float] = DEFAULT_PR_CURVE_THRESHOLDS,
        pr_curve_max_examples: int = 1,
        metrics: Iterable[str] | None = None,
        zero_division: float | None = None,
    ) -> None:
        self.score_thresholds = tuple(float(t) for t in score_thresholds)
        self.pr_curve_thresholds = tuple(sorted(float(t) for t in pr_curve_thresholds))
        if pr_curve_max_examples < 0:
            raise InvalidInputError("must be >= 0", source="pr_curve_max_examples")
        self.pr_curve_max_examples = int(pr_curve_max_examples)
        self.metrics = tuple(METRIC_TYPES if metrics is None else metrics)
        unknown = set(self.metrics) - set(METRIC_TYPES)
        if unknown:
            raise InvalidInputError(
                f"unknown metric type(s) {sorted(unknown)}; choose from {', '.join(METRIC_TYPES)}",
                source="metrics",
            )
        self.zero_division = zero_division
        self._blocks: dict[str, list[KeyBlock]] = defaultdict(list)

    # ------------------------------------------------------------ accumulate

    def add(
        self,
        groundtruths: Any,
        predictions: Any,
        *,
        gt_source: str = "groundtruths",
        pd_source: str = "predictions",
    ) -> ClassificationEvaluator:
        """Add a batch in long form (see :func:`assay.classification.parse_long_form`)."""
        for key, block in parse_long_form(
            groundtruths, predictions, gt_source=gt_source, pd_source=pd_source
        ).items():
            self._blocks[key].append(block)
        return self

    def add_arrays(
        self,
        y_true: ArrayLike,
        y_score: ArrayLike,
        *,
        labels: Sequence[Any],
        uids: ArrayLike | None = None,
        key: str = DEFAULT_KEY,
    ) -> ClassificationEvaluator:
        """Add a batch from arrays (see :func:`assay.classification.block_from_arrays`).

        Without ``uids``, datums are numbered from the number already added for this key.
        """
        if uids is None:
            start = sum(b.n for b in self._blocks.get(key, []))
            uids = np.arange(start, start + len(np.asarray(y_true)))
        self._blocks[key].append(
            block_from_arrays(y_true, y_score, labels=labels, uids=uids, key=key)
        )
        return self

    def merge(self, other: ClassificationEvaluator) -> ClassificationEvaluator:
        """Fold another evaluator's datums into this one (e.g. from another worker)."""
        for key, blocks in other._blocks.items():
            self._blocks[key].extend(blocks)
        return self

    # ------------------------------------------------------------ compute

    def compute(self) -> MetricSet:
        """Compute the requested metrics for every label key."""
        out: list[Metric] = []
        for key in sorted(self._blocks):
            out.extend(self._compute_key(concat_blocks(self._blocks[key])))
        return MetricSet(out)

    def _compute_key(self, b: KeyBlock) -> list[Metric]:
        want = set(self.metrics)
        zd = self.zero_division
        key = b.key
        n, k = b.n, len(b.labels)
        out: list[Metric] = []
        if n == 0:
            return out

        # Hardmax: each datum's top prediction (ties -> first label in sorted order).
        if want & {"Counts", "Precision", "Recall", "F1", "Accuracy"}:
            top = np.argmax(b.scores, axis=0)
            top_score = b.scores[top, np.arange(n)]
            true_count = np.bincount(b.gt, minlength=k)
            correct = top == b.gt
            for t in self.score_thresholds:
                passes = top_score >= t
                tp = np.bincount(top[passes & correct], minlength=k)
                fp = np.bincount(top[passes], minlength=k) - tp
                fn = true_count - tp
                tn = n - tp - fp - fn
                prec, rec, f1 = _rate(tp, tp + fp, zd), _rate(tp, tp + fn, zd), _f1(tp, fp, fn, zd)
                for j, lab in enumerate(b.labels):
                    params = {"label_key": key, "label_value": lab, "score_threshold": t}
                    if "Counts" in want:
                        out.append(
                            Metric(
                                "Counts",
                                {
                                    "tp": int(tp[j]),
                                    "fp": int(fp[j]),
                                    "fn": int(fn[j]),
                                    "tn": int(tn[j]),
                                },
                                params,
                            )
                        )
                    for name, arr, req in (
                        ("Precision", prec, "requires TP + FP > 0"),
                        ("Recall", rec, "requires TP + FN > 0"),
                        (
                            "F1",
                            f1,
                            "requires precision and recall to be defined (TP + FP > 0 and TP + FN > 0)",
                        ),
                    ):
                        if name in want:
                            v = _num(arr[j])
                            out.append(
                                Metric(name, v, params)
                                if v is not None
                                else undefined(name, req, **params)
                            )
                if "Accuracy" in want:
                    out.append(
                        Metric(
                            "Accuracy", int(tp.sum()) / n, {"label_key": key, "score_threshold": t}
                        )
                    )

        need_curves = want & {
            "ROCAUC",
            "mROCAUC",
            "PrecisionRecallCurve",
            "DetailedPrecisionRecallCurve",
        }
        if not need_curves:
            return out
        th = np.asarray(self.pr_curve_thresholds)
        detailed = "DetailedPrecisionRecallCurve" in want
        m_other = _max_other(b) if detailed else None
        aucs: dict[str, float] = {}
        curve: dict[str, dict[float, dict[str, Any]]] = {}
        dcurve: dict[str, dict[float, dict[str, Any]]] = {}
        examples = (
            _collect_examples(b, th, m_other, self.pr_curve_max_examples)
            if detailed and self.pr_curve_max_examples
            else None
        )
        for j, lab in enumerate(b.labels):
            is_pos = b.gt == j
            col = b.scores[j]
            pos, neg = np.sort(col[is_pos]), np.sort(col[~is_pos])
            aucs[lab] = sorted_roc_auc(pos, neg)
            if not (want & {"PrecisionRecallCurve", "DetailedPrecisionRecallCurve"}):
                continue
            c = sorted_threshold_counts(pos, neg, th)
            tp, fp, fn, tn = c.T
            prec, rec, f1 = _rate(tp, tp + fp, zd), _rate(tp, tp + fn, zd), _f1(tp, fp, fn, zd)
            curve[lab] = {
                float(t): {
                    "tp": int(tp[i]),
                    "fp": int(fp[i]),
                    "fn": int(fn[i]),
                    "tn": int(tn[i]),
                    "precision": _num(prec[i]),
                    "recall": _num(rec[i]),
                    "f1_score": _num(f1[i]),
                }
                for i, t in enumerate(th)
            }
            if detailed:
                # FN of a datum whose truth is `lab`: a misclassification when another label
                # passes the threshold (its best other score >= t), else no_predictions.
                assert m_other is not None
                both_below = np.sort(np.maximum(col[is_pos], m_other[is_pos]))
                fn_none = np.searchsorted(both_below, th, side="left")
                fn_mis = fn - fn_none
                ex = examples[j] if examples is not None else None
                dcurve[lab] = {
                    float(t): {
                        "tp": _obs(int(tp[i]), {"all": (int(tp[i]), ex and ex["tp"][i])}),
                        "fp": _obs(
                            int(fp[i]), {"misclassifications": (int(fp[i]), ex and ex["fp"][i])}
                        ),
                        "fn": _obs(
                            int(fn[i]),
                            {
                                "misclassifications": (int(fn_mis[i]), ex and ex["fn_mis"][i]),
                                "no_predictions": (int(fn_none[i]), ex and ex["fn_none"][i]),
                            },
                        ),
                    }
                    for i, t in enumerate(th)
                }

        base = {"label_key": key}
        if "ROCAUC" in want:
            for lab, v in aucs.items():
                p = {**base, "label_value": lab}
                out.append(
                    Metric("ROCAUC", v, p)
                    if not np.isnan(v)
                    else undefined(
                        "ROCAUC",
                        "requires both positive and negative ground truths for this label",
                        **p,
                    )
                )
        if "mROCAUC" in want:
            defined = {lab: v for lab, v in aucs.items() if not np.isnan(v)}
            excluded = sorted(set(aucs) - set(defined))
            if defined:
                p = dict(base)
                if excluded:
                    p["labels_excluded"] = excluded
                out.append(Metric("mROCAUC", float(np.mean(list(defined.values()))), p))
            else:
                out.append(
                    undefined(
                        "mROCAUC",
                        "ROC AUC is undefined for every label (one class present)",
                        **base,
                    )
                )
        if "PrecisionRecallCurve" in want:
            out.append(Metric("PrecisionRecallCurve", curve, dict(base)))
        if detailed:
            out.append(
                Metric(
                    "DetailedPrecisionRecallCurve",
                    dcurve,
                    {**base, "pr_curve_max_examples": self.pr_curve_max_examples},
                )
            )
        return out


def _obs(total: int, observations: dict[str, tuple[int, list[str] | None]]) -> dict[str, Any]:
    return {
        "total": total,
        "observations": {
            name: {"count": cnt, "examples": list(ex or [])}
            for name, (cnt, ex) in observations.items()
        },
    }


def _max_other(b: KeyBlock) -> NDArray[np.float64]:
    """For each datum, the highest score among labels other than its ground truth."""
    k, n = b.scores.shape
    if k < 2:
        return np.full(n, -np.inf)
    part = np.partition(b.scores, k - 2, axis=0)
    top1, top2 = part[k - 1], part[k - 2]
    s_gt = b.scores[b.gt, np.arange(n)]
    return np.where(s_gt >= top1, top2, top1)


def _collect_examples(
    b: KeyBlock, th: NDArray[np.float64], m_other: NDArray[np.float64] | None, n_max: int
) -> list[dict[str, list[list[str]]]]:
    """First ``n_max`` example uids (in datum order) per label, category and threshold.

    A datum belongs to a category at threshold index ``i`` exactly when ``lo <= i < hi`` for
    bounds derived from its scores. Datums are grouped by their ``(lo, hi)`` pair (at most
    (T + 1)^2 groups); the first ``n_max`` datums of each group are found with a vectorised
    ``minimum.at`` pass, and each threshold's examples are the first ``n_max`` of the groups
    that cover it. Memory stays O(n), never O(n^2).
    """
    k, n = b.scores.shape
    n_t = len(th)
    assert m_other is not None
    passed = np.searchsorted(th, b.scores, side="right")  # (k, n): thresholds each score passes
    other_passed = np.searchsorted(th, m_other, side="right")
    full = np.full(n, n_t)
    zero = np.zeros(n, dtype=np.int64)
    n_codes = (n_t + 1) ** 2
    found: list[dict[str, list[list[str]]]] = []
    for j in range(k):
        is_pos = b.gt == j
        hi = passed[j]
        ranges = {
            "tp": (is_pos, zero, hi),
            "fp": (~is_pos, zero, hi),
            "fn_mis": (is_pos, hi, other_passed),
            "fn_none": (is_pos, np.maximum(hi, other_passed), full),
        }
        per_label: dict[str, list[list[str]]] = {}
        for cat, (cond, lo, up) in ranges.items():
            sel = np.flatnonzero(cond & (lo < up))
            code = lo[sel] * (n_t + 1) + up[sel]
            picked: list[NDArray[np.int64]] = []
            alive = np.ones(len(sel), dtype=bool)
            for _ in range(n_max):
                first = np.full(n_codes, n, dtype=np.int64)
                live = np.flatnonzero(alive)
                np.minimum.at(first, code[live], live)
                hit = first[first < n]
                if len(hit) == 0:
                    break
                picked.append(hit)
                alive[hit] = False
            if picked:
                pos = np.concatenate(picked)
                cand, c_lo, c_hi = sel[pos], lo[sel[pos]], up[sel[pos]]
                order = np.argsort(cand, kind="stable")
                cand, c_lo, c_hi = cand[order], c_lo[order], c_hi[order]
            else:
                cand = c_lo = c_hi = np.zeros(0, dtype=np.int64)
            per_label[cat] = [
                [str(u) for u in b.uids[cand[(c_lo <= i) & (c_hi > i)][:n_max]]] for i in range(n_t)
            ]
        found.append(per_label)
    return found


def evaluate_classification(groundtruths: Any, predictions: Any, **options: Any) -> MetricSet:
    """One-call evaluation of long-form ground truths and predictions.

    ``options`` are those of :class:`ClassificationEvaluator`.

    Example:
        >>> ms = evaluate_classification(
        ...     [{"uid": "a", "value": "cat"}, {"uid": "b", "value": "dog"}],
        ...     [{"uid": "a", "value": "cat", "score": 0.9}, {"uid": "b", "value": "dog", "score": 0.8},
        ...      {"uid": "b", "value": "cat", "score": 0.2}])
        >>> ms.get("ROCAUC", label_value="cat").value
        1.0
    """
    return ClassificationEvaluator(**options).add(groundtruths, predictions).compute()
