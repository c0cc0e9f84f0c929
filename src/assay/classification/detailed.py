"""The detailed precision-recall curve: counts split by kind, with example uids.

For label value ``c`` at curve threshold ``t`` (a score ``>= t`` qualifies):

* ``tp.all``: datums of truth ``c`` whose score for ``c`` qualifies;
* ``fp.misclassifications``: datums of another truth whose score for ``c`` qualifies;
* ``fn.misclassifications``: datums of truth ``c`` whose score for ``c`` does not qualify
  while another label's score does;
* ``fn.no_predictions``: datums of truth ``c`` where no label's score qualifies.

Each observation keeps up to ``max_examples`` example uids: the first in uid order, so the
examples do not depend on how the data was split into batches or merged.

How the examples are found without an n x n structure: a datum belongs to a category at
threshold index ``i`` exactly when ``lo <= i < hi`` for two bounds derived from its scores.
Datums are grouped by their ``(lo, hi)`` pair (at most (T + 1)^2 groups); one vectorised
``minimum.at`` pass per example rank finds the first datums of every group, and each
threshold's examples are the first ``max_examples`` of the groups that cover it. Memory
stays O(n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.classification.types import KeyBlock

__all__ = ["detailed_curve"]


def _max_other(scores: NDArray[np.float64], gt: NDArray[Any]) -> NDArray[np.float64]:
    """For each datum, the highest score among labels other than its ground truth."""
    k, n = scores.shape
    if k < 2:
        return np.full(n, -np.inf)
    part = np.partition(scores, k - 2, axis=0)
    top1, top2 = part[k - 1], part[k - 2]
    s_gt = scores[gt, np.arange(n)]
    return np.where(s_gt >= top1, top2, top1)


def _in_uid_order(b: KeyBlock) -> tuple[NDArray[np.float64], NDArray[Any], NDArray[Any]]:
    """Dense scores, truth codes and uids with the datums sorted by uid."""
    scores, gt, uids = b.dense_scores(), b.gt, b.uid_array()
    if len(uids) > 1 and not bool(np.all(uids[1:] >= uids[:-1])):
        order = np.argsort(uids, kind="stable")
        scores, gt, uids = scores[:, order], gt[order], uids[order]
    return scores, gt, uids


def _first_of_groups(code: NDArray[np.int64], n_codes: int, n_max: int) -> NDArray[np.int64]:
    """Positions (into ``code``) of the first ``n_max`` entries of every code value."""
    picked: list[NDArray[np.int64]] = []
    alive = np.ones(len(code), dtype=bool)
    sentinel = len(code)
    for _ in range(n_max):
        first = np.full(n_codes, sentinel, dtype=np.int64)
        live = np.flatnonzero(alive)
        np.minimum.at(first, code[live], live)
        hit = first[first < sentinel]
        if len(hit) == 0:
            break
        picked.append(hit)
        alive[hit] = False
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)


def _examples(
    cond: NDArray[np.bool_],
    lo: NDArray[np.int64],
    hi: NDArray[np.int64],
    uids: NDArray[Any],
    n_t: int,
    n_max: int,
) -> list[list[str]]:
    """Per threshold index ``i``: the first ``n_max`` uids with ``cond`` and ``lo <= i < hi``."""
    sel = np.flatnonzero(cond & (lo < hi))
    pos = _first_of_groups(lo[sel] * (n_t + 1) + hi[sel], (n_t + 1) ** 2, n_max)
    cand, c_lo, c_hi = sel[pos], lo[sel[pos]], hi[sel[pos]]
    return [[str(u) for u in uids[cand[(c_lo <= i) & (c_hi > i)][:n_max]]] for i in range(n_t)]


def _below(
    values: NDArray[np.float64],
    weights: NDArray[np.int64] | None,
    mask: NDArray[np.bool_],
    thresholds: NDArray[np.float64],
) -> NDArray[np.int64]:
    """Per threshold: how many datums (weights counted) have a value below it."""
    order = np.argsort(values, kind="stable")
    at = np.searchsorted(values[order], thresholds, side="left")
    if weights is None:
        return at.astype(np.int64)
    return np.concatenate(([0], np.cumsum(weights[mask][order], dtype=np.int64)))[at]


def _observation(total: int, parts: dict[str, tuple[int, list[str]]]) -> dict[str, Any]:
    return {
        "total": total,
        "observations": {
            name: {"count": count, "examples": list(ex)} for name, (count, ex) in parts.items()
        },
    }


def detailed_curve(
    b: KeyBlock,
    thresholds: NDArray[np.float64],
    counts: Sequence[NDArray[np.int64]],
    max_examples: int,
) -> dict[str, dict[float, dict[str, Any]]]:
    """The detailed curve of every label of ``b``; ``counts[j]`` is label j's (T, 4) counts."""
    scores, gt, uids = _in_uid_order(b)
    n_t = len(thresholds)
    m_other = _max_other(scores, gt)
    passed = np.searchsorted(thresholds, scores, side="right")  # thresholds each score passes
    other_passed = np.searchsorted(thresholds, m_other, side="right")
    none: list[list[str]] = [[] for _ in range(n_t)]
    out: dict[str, dict[float, dict[str, Any]]] = {}
    for j, lab in enumerate(b.labels):
        is_pos = gt == j
        tp, fp, fn, _ = counts[j].T
        # A false negative is a misclassification when another label qualifies.
        best = np.maximum(scores[j][is_pos], m_other[is_pos])
        fn_none = _below(best, b.weights, is_pos, thresholds)
        fn_mis = fn - fn_none
        hi, zero, full = passed[j], np.zeros(len(gt), np.int64), np.full(len(gt), n_t)
        ex = {"tp": none, "fp": none, "fn_mis": none, "fn_none": none}
        if max_examples:
            ex = {
                "tp": _examples(is_pos, zero, hi, uids, n_t, max_examples),
                "fp": _examples(~is_pos, zero, hi, uids, n_t, max_examples),
                "fn_mis": _examples(is_pos, hi, other_passed, uids, n_t, max_examples),
                "fn_none": _examples(
                    is_pos, np.maximum(hi, other_passed), full, uids, n_t, max_examples
                ),
            }
        out[lab] = {
            float(t): {
                "tp": _observation(int(tp[i]), {"all": (int(tp[i]), ex["tp"][i])}),
                "fp": _observation(int(fp[i]), {"misclassifications": (int(fp[i]), ex["fp"][i])}),
                "fn": _observation(
                    int(fn[i]),
                    {
                        "misclassifications": (int(fn_mis[i]), ex["fn_mis"][i]),
                        "no_predictions": (int(fn_none[i]), ex["fn_none"][i]),
                    },
                ),
            }
            for i, t in enumerate(thresholds)
        }
    return out
