"""Confidence intervals of the classification metrics (see :mod:`assay.intervals`).

The unit resampled is the datum. Sufficient statistics per metric:

* ``Precision``, ``Recall``, ``F1``, ``Accuracy`` at score threshold ``t``: each datum's
  contribution to the per-label TP, FP and FN counts. With hardmax that is fixed by the cell
  (truth, counted top label or none), so the datums collapse to at most k(k+1) cells; with
  ``hardmax=False`` by the row of (is truth, scores >= t) bits over the labels. A resample
  is a vector of multinomial counts over the distinct cells, and its counts are ``counts @
  indicator`` (TP, FP, FN per label); Accuracy is the resampled TP total over ``n``.
* ``ROCAUC`` and ``mROCAUC``: each datum's truth and scores (distinct rows collapsed). Per
  label, the rows sorted by score, ties grouped: the resampled AUC is
  ``sum_g P_g (N_<g + N_g / 2) / (P N)`` with ``P_g``, ``N_g`` the resampled positive and
  negative counts of tie group ``g``, one cumulative sum per resample; every label of a
  resample uses the same counts, so ``mROCAUC`` is the mean of that resample's defined AUCs.

``ci_method="wilson"`` gives Accuracy, Precision and Recall Wilson intervals (of TP / n,
TP / (TP + FP), TP / (TP + FN)); ``"delong"`` gives ROCAUC DeLong's interval; every other
metric (and every metric under ``"t"``) gets the bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay import ratios
from assay.classification.auc_units import AucPlan, as_index, auc, binary_units
from assay.classification.types import KeyBlock
from assay.intervals import CIOptions, Clusters, cluster_codes, collapse, delong_interval, wilson
from assay.results import Metric

__all__ = ["attach_intervals", "count_units", "gap_intervals", "score_units"]

Key = tuple[str, str | None, float | None]
F64 = NDArray[np.float64]


def count_units(
    b: KeyBlock, t: float, hardmax: bool, mask: NDArray[np.bool_] | None = None
) -> tuple[F64, F64, F64, NDArray[np.int64], NDArray[np.intp], NDArray[np.bool_]]:
    """Per distinct unit at threshold ``t``: TP, FP, FN indicator rows (units x labels),
    the units' multiplicities, each datum's unit and whether the unit is in ``mask`` (a
    slice; the mask is then part of the unit)."""
    k = len(b.labels)
    gt = b.gt.astype(np.int64)
    inside = np.zeros(b.n, dtype=np.int64) if mask is None else mask.astype(np.int64)
    weight = b.weights
    if hardmax:
        top, top_score = b.top()
        pred = np.where(top_score >= t, top.astype(np.int64), k)
        cells, mult, inverse = collapse((gt * (k + 1) + pred) * 2 + inside, weight)
        c, flag = cells[:, 0] // 2, cells[:, 0] % 2
        g, p = c // (k + 1), c % (k + 1)
        truth = g[:, None] == np.arange(k)
        said = p[:, None] == np.arange(k)
    else:
        truth_all = gt[:, None] == np.arange(k)
        said_all = (b.dense_scores() >= t).T
        rows, mult, inverse = collapse(np.column_stack([truth_all, said_all, inside]), weight)
        truth, said, flag = rows[:, :k].astype(bool), rows[:, k:-1].astype(bool), rows[:, -1]
    tp = (truth & said).astype(np.float64)
    fp, fn = (~truth & said).astype(np.float64), (truth & ~said).astype(np.float64)
    return tp, fp, fn, mult, inverse, flag.astype(bool)


def score_units(
    b: KeyBlock, mask: NDArray[np.bool_] | None = None
) -> tuple[list[AucPlan], NDArray[np.int64], NDArray[np.intp], NDArray[np.bool_]]:
    """The units of the ROC AUC bootstrap: one :class:`AucPlan` per label (the binary
    form: one, for ``labels[binary_row]``), the units' multiplicities, each datum's unit,
    and whether the unit is in ``mask`` (a slice; then part of the unit)."""
    inside = np.zeros(b.n, dtype=bool) if mask is None else mask.astype(bool)
    weight = np.ones(b.n, dtype=np.int64) if b.weights is None else b.weights
    if b.binary_row is not None:
        plan, mult, unit, flag = binary_units(b.scores[0], b.gt == b.binary_row, weight, inside)
        return [plan], mult, unit, flag
    rows, mult, unit = collapse(
        np.column_stack([b.gt.astype(np.float64), b.scores.T, inside]), weight
    )
    truth, flag = rows[:, 0].astype(np.int64), rows[:, -1] > 0
    return [_dense_plan(rows[:, 1 + j], truth == j) for j in range(len(b.labels))], mult, unit, flag


def _dense_plan(score: F64, pos: NDArray[np.bool_]) -> AucPlan:
    """One label's plan over units shared with the other labels (gathers, no collapse)."""
    neg_i, pos_i = np.flatnonzero(~pos), np.flatnonzero(pos)
    neg_i, pos_i = neg_i[np.argsort(score[neg_i])], pos_i[np.argsort(score[pos_i])]
    ns = score[neg_i]
    lo = np.searchsorted(ns, score[pos_i], "left")
    hi = np.searchsorted(ns, score[pos_i], "right")
    return AucPlan(as_index(neg_i), as_index(pos_i), as_index(lo), None if (lo == hi).all() else hi)


def resampled(
    b: KeyBlock, mult: NDArray[np.int64], unit: NDArray[np.intp], opts: CIOptions
) -> NDArray[np.int64] | Clusters:
    """What a resample draws: the units (their multiplicities), or with ``cluster`` the
    clusters of the datum metadata field it names (each datum weighs its cluster's draws)."""
    if opts.cluster is None:
        return mult
    codes = cluster_codes(b.metadata, opts.cluster, f"datums of label key {b.key!r}")
    return Clusters.of(unit, codes, len(mult), b.weights)


def _count_replicates(
    b: KeyBlock, t: float, hardmax: bool, zero_division: float | None, opts: CIOptions
) -> F64:
    """Intervals (2, 3k + 1): Precision, Recall, F1 of each label, then Accuracy."""
    tp_i, fp_i, fn_i, mult, unit, _ = count_units(b, t, hardmax)
    stat = _count_statistic(tp_i, fp_i, fn_i, zero_division)
    return opts.bootstrap_interval(stat, resampled(b, mult, unit, opts))


def _count_statistic(tp_i: F64, fp_i: F64, fn_i: F64, zd: float | None) -> Any:
    """Resample counts -> (b, 3k + 1): Precision, Recall, F1 of each label, Accuracy."""

    def statistic(w: F64) -> F64:
        tp, fp, fn = w @ tp_i, w @ fp_i, w @ fn_i
        p, r, f = ratios.precision_recall_f1(tp, fp, fn, zd)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = tp.sum(axis=1, keepdims=True) / w.sum(axis=1, keepdims=True)
        return np.concatenate([p, r, f, acc], axis=1)

    return statistic


def _auc_statistic(b: KeyBlock, plans: list[AucPlan]) -> Any:
    """Resample counts -> (b, k + 1): ROC AUC of each label, then their mean (mROCAUC).

    With one score column for two labels (the binary form) the other label's AUC is the
    same number and is not computed again.
    """
    k = len(b.labels)

    def statistic(w: F64) -> F64:
        out = np.empty((w.shape[0], k))
        if b.binary_row is not None:
            out[:, 0] = out[:, 1] = auc(w, plans[0])
        else:
            for j, plan in enumerate(plans):
                out[:, j] = auc(w, plan)
        with np.errstate(invalid="ignore"):
            defined = ~np.isnan(out)
            mean = np.where(defined, out, 0.0).sum(axis=1) / defined.sum(axis=1)
        return np.concatenate([out, mean[:, None]], axis=1)

    return statistic


def _auc_replicates(b: KeyBlock, opts: CIOptions) -> F64:
    """Intervals (2, k + 1): ROC AUC of each label, then their mean (mROCAUC)."""
    plans, mult, unit, _ = score_units(b)
    return opts.bootstrap_interval(_auc_statistic(b, plans), resampled(b, mult, unit, opts))


def gap_intervals(
    b: KeyBlock,
    keep: NDArray[np.bool_],
    thresholds: Sequence[float],
    want: frozenset[str],
    *,
    hardmax: bool,
    zero_division: float | None,
    opts: CIOptions,
) -> dict[Key, tuple[float, float]]:
    """The bootstrap interval of each slice-minus-whole gap: one resample of all datums
    gives both the whole set's value and the slice's (its datums' counts alone)."""
    out: dict[Key, tuple[float, float]] = {}
    labels, k = b.labels, len(b.labels)

    def gaps(statistic: Any, inside: NDArray[np.bool_]) -> Any:
        return lambda w: statistic(w * inside) - statistic(w)

    if want & {"Precision", "Recall", "F1", "Accuracy"}:
        for t in thresholds:
            tp_i, fp_i, fn_i, mult, unit, inside = count_units(b, t, hardmax, keep)
            stat = _count_statistic(tp_i, fp_i, fn_i, zero_division)
            ci = opts.bootstrap_interval(gaps(stat, inside), resampled(b, mult, unit, opts))
            for i, name in enumerate(("Precision", "Recall", "F1")):
                for j, lab in enumerate(labels):
                    out[(name, lab, t)] = (float(ci[0, i * k + j]), float(ci[1, i * k + j]))
            out[("Accuracy", None, t)] = (float(ci[0, -1]), float(ci[1, -1]))
    if want & {"ROCAUC", "mROCAUC"}:
        plans, mult, unit, inside = score_units(b, keep)
        stat = gaps(_auc_statistic(b, plans), inside)
        ci = opts.bootstrap_interval(stat, resampled(b, mult, unit, opts))
        for j, lab in enumerate(labels):
            out[("ROCAUC", lab, None)] = (float(ci[0, j]), float(ci[1, j]))
        out[("mROCAUC", None, None)] = (float(ci[0, -1]), float(ci[1, -1]))
    return out


def _boot(opts: CIOptions, bounds: F64) -> dict[str, Any]:
    return opts.parameters(float(bounds[0]), float(bounds[1]), method="bootstrap")


def _intervals(
    b: KeyBlock,
    thresholds: Sequence[float],
    want: frozenset[str],
    *,
    hardmax: bool,
    zero_division: float | None,
    opts: CIOptions,
) -> dict[Key, dict[str, Any]]:
    out: dict[Key, dict[str, Any]] = {}
    labels = b.labels
    if want & {"Precision", "Recall", "F1", "Accuracy"}:
        for t in thresholds:
            ci = _count_replicates(b, t, hardmax, zero_division, opts)
            k = len(labels)
            for i, name in enumerate(("Precision", "Recall", "F1")):
                for j, lab in enumerate(labels):
                    out[(name, lab, t)] = _boot(opts, ci[:, i * k + j])
            out[("Accuracy", None, t)] = _boot(opts, ci[:, -1])
            if opts.uses("wilson"):
                out |= _wilson(b, t, hardmax, opts)
    delong = opts.uses("delong")
    if "mROCAUC" in want or ("ROCAUC" in want and not delong):
        ci = _auc_replicates(b, opts)
        for j, lab in enumerate(labels):
            out[("ROCAUC", lab, None)] = _boot(opts, ci[:, j])
        out[("mROCAUC", None, None)] = _boot(opts, ci[:, -1])
    if "ROCAUC" in want and delong:
        splits = b.sorted_splits()
        # the binary form: the other label's scores are 1 - s with the roles swapped, the
        # same AUC and variance (the same structural components), computed once
        one = None if b.binary_row is None else delong_interval(*splits[b.binary_row], opts.level)
        for lab, (pos, neg) in zip(labels, splits):
            lo, hi = one if one is not None else delong_interval(pos, neg, opts.level)
            out[("ROCAUC", lab, None)] = opts.parameters(lo, hi, method="delong")
    return out


def _wilson(b: KeyBlock, t: float, hardmax: bool, opts: CIOptions) -> dict[Key, dict[str, Any]]:
    tp_i, fp_i, fn_i, mult, _, _ = count_units(b, t, hardmax)
    m = mult.astype(np.float64)
    tp, fp, fn = m @ tp_i, m @ fp_i, m @ fn_i
    out: dict[Key, dict[str, Any]] = {}
    for name, den in (("Precision", tp + fp), ("Recall", tp + fn)):
        lo, hi = wilson(tp, den, opts.level)
        for j, lab in enumerate(b.labels):
            out[(name, lab, t)] = opts.parameters(lo[j], hi[j], method="wilson")
    lo, hi = wilson(tp.sum(), b.n, opts.level)
    out[("Accuracy", None, t)] = opts.parameters(float(lo), float(hi), method="wilson")
    return out


def attach_intervals(
    records: list[Metric],
    b: KeyBlock,
    thresholds: Sequence[float],
    want: frozenset[str],
    *,
    hardmax: bool,
    zero_division: float | None,
    opts: CIOptions,
) -> None:
    """Add the interval parameters to the defined records of ``b``'s key, in place."""
    found = _intervals(b, thresholds, want, hardmax=hardmax, zero_division=zero_division, opts=opts)
    for m in records:
        if m.value is None or m.parameters.get("label_key") != b.key:
            continue
        key = (m.type, m.parameters.get("label_value"), m.parameters.get("score_threshold"))
        if key in found:
            m.parameters.update(found[key])
