"""The classification tallies: what the uncertainty engine resamples (:mod:`assay.uncertainty`).

The unit resampled is the datum; a label key's datums make its tallies, each keyed by the
records' ``(type, label_key, label_value, score_threshold)``:

* ``Precision``, ``Recall``, ``F1``, ``Accuracy`` at score threshold ``t`` (one tally per
  threshold): each datum's contribution to the per-label TP, FP and FN counts. With hardmax
  that is fixed by the cell (truth, counted top label or none), so the datums collapse to at
  most k(k+1) cells; with ``hardmax=False`` by the row of (is truth, scores >= t) bits over
  the labels. A resample's counts are ``w @ indicator`` (TP, FP, FN per label); Accuracy is
  the resampled TP total over ``n``. Closed form: ``wilson`` for Accuracy, Precision and
  Recall (of TP / n, TP / (TP + FP), TP / (TP + FN)), as their entries in
  :data:`assay.classification.declared.METRICS` say.
* ``ROCAUC`` and ``mROCAUC``: each datum's truth and scores (distinct rows collapsed; the
  binary form into classes of interchangeable datums, :mod:`assay.classification.auc_units`).
  Per label, the rows sorted by score, ties grouped: the resampled AUC is ``sum_g P_g (N_<g
  + N_g / 2) / (P N)``; every label of a resample uses the same counts, so ``mROCAUC`` is the
  mean of that resample's defined AUCs. Closed form: ``delong`` for ROCAUC (the table's
  ``intervals`` again).

Every other metric (and every metric under ``t`` or ``bca``) gets the percentile bootstrap.
Tallied with a slice mask, the mask is part of the unit (``inside``), so one resample of all
datums gives the whole set's value and the slice's: the gaps' tallies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay import ratios
from assay.classification.auc_units import AucPlan, as_index, auc, binary_units
from assay.classification.declared import METRICS
from assay.classification.types import KeyBlock
from assay.uncertainty.closed_form import delong_interval, wilson
from assay.uncertainty.clusters import cluster_codes
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.tally import Key, Tally

__all__ = ["COUNT_TYPES", "AUC_TYPES", "WHERE", "gap_tallies", "tallies"]

F64 = NDArray[np.float64]
_WITH_INTERVAL = frozenset(METRICS.with_interval())
#: The types of the counts' tallies and of the ROC AUCs' (those of the ``hardmax`` and
#: ``curves`` families that take an interval, :data:`assay.classification.declared.METRICS`).
COUNT_TYPES = _WITH_INTERVAL.intersection(METRICS.family("hardmax"))
AUC_TYPES = _WITH_INTERVAL.intersection(METRICS.family("curves"))
#: What identifies a record among a key's records (beside its type): its tally key, and
#: in a slice the whole set's record its gap is to.
WHERE = ("label_key", "label_value", "score_threshold")


def tallies(
    b: KeyBlock,
    thresholds: Sequence[float],
    want: frozenset[str],
    *,
    hardmax: bool,
    zero_division: float | None,
) -> list[Tally]:
    """The tallies of block ``b``'s wanted records: one per score threshold (the counts'
    records), one for the ROC AUCs."""
    out = []
    if want & COUNT_TYPES:
        out += [_count_tally(b, t, hardmax, zero_division) for t in thresholds]
    if want & AUC_TYPES:
        out.append(_auc_tally(b, want))
    return out


def gap_tallies(
    b: KeyBlock,
    keep: NDArray[np.bool_],
    thresholds: Sequence[float],
    want: frozenset[str],
    *,
    hardmax: bool,
    zero_division: float | None,
) -> list[Tally]:
    """The tallies of each slice-minus-whole gap of the slice ``keep`` of ``b``."""
    out = []
    if want & COUNT_TYPES:
        out += [_count_tally(b, t, hardmax, zero_division, keep).gap() for t in thresholds]
    if want & AUC_TYPES:
        out.append(_auc_tally(b, AUC_TYPES, keep).gap())
    return out


#: The types each closed-form method applies to (the table's ``intervals``).
_WITH = {m: frozenset(METRICS.with_interval(m)) for m in ("wilson", "delong")}


def _declared(method: str, ends: Callable[[float], dict[Key, Any]]) -> dict[str, Any]:
    """``{method: ends}`` for a tally's ``closed``, keeping the keys of the types the table
    gives ``method`` (the others get the bootstrap)."""
    types = _WITH[method]

    def declared(level: float) -> dict[Key, Any]:
        return {k: v for k, v in ends(level).items() if k[0] in types}

    return {method: declared}


def _codes(b: KeyBlock) -> Any:
    return lambda column: cluster_codes(b.metadata, column, f"datums of label key {b.key!r}")


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


def _count_tally(
    b: KeyBlock,
    t: float,
    hardmax: bool,
    zd: float | None,
    mask: NDArray[np.bool_] | None = None,
) -> Tally:
    """Precision, Recall, F1 of each label, then Accuracy, at threshold ``t``."""
    tp_i, fp_i, fn_i, mult, unit, inside = count_units(b, t, hardmax, mask)
    keys: list[Key] = [
        (name, b.key, lab, t) for name in ("Precision", "Recall", "F1") for lab in b.labels
    ]
    keys.append(("Accuracy", b.key, None, t))

    def values(w: F64) -> F64:
        tp, fp, fn = w @ tp_i, w @ fp_i, w @ fn_i
        p, r, f = ratios.precision_recall_f1(tp, fp, fn, zd)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = tp.sum(axis=1, keepdims=True) / w.sum(axis=1, keepdims=True)
        return np.concatenate([p, r, f, acc], axis=1)

    def wilson_ends(level: float) -> dict[Key, tuple[float, float]]:
        m = mult.astype(np.float64)
        tp, fp, fn = m @ tp_i, m @ fp_i, m @ fn_i
        out: dict[Key, tuple[float, float]] = {}
        for name, den in (("Precision", tp + fp), ("Recall", tp + fn)):
            lo, hi = wilson(tp, den, level)
            out |= {(name, b.key, lab, t): (lo[j], hi[j]) for j, lab in enumerate(b.labels)}
        lo, hi = wilson(tp.sum(), b.n, level)
        out[("Accuracy", b.key, None, t)] = (float(lo), float(hi))
        return out

    return Tally(
        tuple(keys),
        values,
        mult,
        unit=unit,
        unit_weight=b.weights,
        ids=b.uid_array(),
        codes=_codes(b),
        inside=None if mask is None else inside,
        closed=_declared("wilson", wilson_ends),
    )


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


def _auc_tally(b: KeyBlock, want: frozenset[str], mask: NDArray[np.bool_] | None = None) -> Tally:
    """ROC AUC of each label, then their mean (mROCAUC), the wanted ones; the units are
    made only when a resample is drawn (DeLong alone draws none)."""
    keys: list[Key] = [("ROCAUC", b.key, lab, None) for lab in b.labels]
    keys.append(("mROCAUC", b.key, None, None))
    cols = np.array([j for j, key in enumerate(keys) if key[0] in want], dtype=np.intp)

    def delong_ends(level: float) -> dict[Key, tuple[float, float]]:
        splits = b.sorted_splits()
        # the binary form: the other label's scores are 1 - s with the roles swapped, the
        # same AUC and variance (the same structural components), computed once
        one = None if b.binary_row is None else delong_interval(*splits[b.binary_row], level)
        return {
            ("ROCAUC", b.key, lab, None): one or delong_interval(pos, neg, level)
            for lab, (pos, neg) in zip(b.labels, splits)
        }

    wanted = tuple(keys[j] for j in cols)
    closed = _declared("delong", delong_ends) if want & _WITH["delong"] else {}
    return Tally(wanted, closed=closed, prepare=lambda: _auc_units(b, wanted, cols, mask))


def _auc_units(
    b: KeyBlock, keys: tuple[Key, ...], cols: NDArray[np.intp], mask: NDArray[np.bool_] | None
) -> Tally:
    """The ROC AUC tally's rows (:func:`score_units`) and values. With one score column
    for two labels (the binary form) the other label's AUC is the same number and is not
    computed again."""
    plans, mult, unit, inside = score_units(b, mask)
    k = len(b.labels)

    def values(w: F64) -> F64:
        out = np.empty((w.shape[0], k))
        if b.binary_row is not None:
            out[:, 0] = out[:, 1] = auc(w, plans[0])
        else:
            for j, plan in enumerate(plans):
                out[:, j] = auc(w, plan)
        with np.errstate(invalid="ignore"):
            defined = ~np.isnan(out)
            mean = np.where(defined, out, 0.0).sum(axis=1) / defined.sum(axis=1)
        return np.concatenate([out, mean[:, None]], axis=1)[:, cols]

    return Tally(
        keys,
        values,
        mult,
        unit=unit,
        unit_weight=b.weights,
        ids=b.uid_array(),
        codes=_codes(b),
        inside=None if mask is None else inside,
    )
