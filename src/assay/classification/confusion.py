"""Confusion matrices (with examples) and per-datum examples, valor-lite's record types.

At score threshold ``t`` a label value *passes* on a datum when its score is ``>= t``. With
``hardmax=True`` only the datum's top prediction can pass (ties: the label that sorts first);
with ``hardmax=False`` every label scoring ``>= t`` passes, so one datum can give several
entries.

* ``ConfusionMatrix``: ``confusion_matrix[g][p]`` counts the datums of truth ``g`` on which
  label ``p`` passes; ``unmatched_ground_truths[g]`` counts the datums of truth ``g`` on
  which no label passes. With ``hardmax=True`` each datum lands in exactly one place, so a
  row plus its unmatched count is the number of datums of that truth.
* ``ConfusionMatrixWithExamples``: the same counts, each cell with its examples
  ``{"datum_uid", "score"}`` (unmatched: ``{"datum_uid"}``) in uid order; at most
  ``number_of_examples`` per cell (``None``: all of them).
* ``Examples``: one record per datum and threshold (``parameters.datum_uid``) listing the
  labels that were ``true_positives`` (the truth passes), ``false_positives`` (other labels
  that pass) and ``false_negatives`` (the truth, when it does not pass). Datums come in uid
  order; ``examples_offset`` and ``examples_limit`` page them (datums ``offset`` to
  ``offset + limit - 1`` of that order; no limit: all from ``offset``).

Memory is O(n k) for n datums and k labels (no datum x datum structure).

Example:
    >>> from assay.classification.types import block_from_arrays
    >>> b = block_from_arrays(["a", "b"], [[0.9, 0.1], [0.6, 0.4]], labels=["a", "b"])
    >>> cm = confusion_records(b, [0.5], hardmax=True, want={"ConfusionMatrix"})[0]
    >>> cm.value["confusion_matrix"], cm.value["unmatched_ground_truths"]
    ({'a': {'a': 1, 'b': 0}, 'b': {'a': 1, 'b': 0}}, {'a': 0, 'b': 0})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.classification.detailed import _in_uid_order
from assay.classification.types import KeyBlock
from assay.results import Metric

__all__ = ["build", "confusion_records"]


def _entries(
    scores: NDArray[np.float64],
    top: tuple[NDArray[np.int64], NDArray[np.float64]] | None,
    t: float,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """The passing (datum, label) pairs as (datum index, label, score), and the unmatched mask.

    ``top``: each datum's top label and score (hardmax), or ``None`` (every label counts).
    """
    if top is not None:
        top_label, top_score = top
        ok = top_score >= t
        idx = np.flatnonzero(ok)
        return idx, top_label[idx], top_score[idx], ~ok
    passing = scores >= t
    lab, idx = np.nonzero(passing)  # label-major
    order = np.argsort(idx, kind="stable")  # datum order, labels ascending within a datum
    idx, lab = idx[order], lab[order]
    unmatched = np.logical_not(passing.any(axis=0))
    return idx.astype(np.int64), lab.astype(np.int64), scores[lab, idx], unmatched


def _cell_examples(
    cell: NDArray[np.int64], idx: NDArray[np.int64], limit: int | None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Entries sorted by (cell, datum), keeping the first ``limit`` of every cell."""
    order = np.lexsort((idx, cell))
    if limit is not None and len(order):
        c = cell[order]
        starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1])))
        rank = np.arange(len(c)) - np.repeat(starts, np.diff(np.append(starts, len(c))))
        order = order[rank < limit]
    return order, cell[order]


def _matrix_value(
    labels: Sequence[str],
    cells: NDArray[np.int64],
    unmatched: NDArray[np.int64],
    examples: tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]] | None,
) -> dict[str, Any]:
    k = len(labels)
    cm: dict[str, Any] = {}
    for g, gl in enumerate(labels):
        row: dict[str, Any] = {}
        for p, pl in enumerate(labels):
            c = int(cells[g * k + p])
            row[pl] = c if examples is None else {"count": c, "examples": examples[0][g * k + p]}
        cm[gl] = row
    um: dict[str, Any] = {
        gl: int(unmatched[g])
        if examples is None
        else {"count": int(unmatched[g]), "examples": examples[1][g]}
        for g, gl in enumerate(labels)
    }
    return {"confusion_matrix": cm, "unmatched_ground_truths": um}


def _grouped(
    n_groups: int, group: NDArray[np.int64], items: list[dict[str, Any]]
) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[] for _ in range(n_groups)]
    for g, item in zip(group.tolist(), items):
        out[g].append(item)
    return out


def _with_examples(
    uids: NDArray[Any],
    gt: NDArray[Any],
    k: int,
    entry: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]],
    limit: int | None,
) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    idx, lab, score, unmatched = entry
    cell = gt[idx].astype(np.int64) * k + lab
    order, c = _cell_examples(cell, idx, limit)
    matched = [
        {"datum_uid": str(u), "score": float(s)}
        for u, s in zip(uids[idx[order]].tolist(), score[order].tolist())
    ]
    um_idx = np.flatnonzero(unmatched)
    um_order, um_g = _cell_examples(gt[um_idx].astype(np.int64), um_idx, limit)
    lonely = [{"datum_uid": str(u)} for u in uids[um_idx[um_order]].tolist()]
    return _grouped(k * k, c, matched), _grouped(k, um_g, lonely)


def _examples(
    b: KeyBlock,
    uids: NDArray[Any],
    gt: NDArray[Any],
    entry: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]],
    params: dict[str, Any],
    page: tuple[int, int | None],
) -> list[Metric]:
    idx, lab, _, _ = entry
    n = len(gt)
    offset, limit = page
    start, stop = min(offset, n), n if limit is None else min(n, offset + limit)
    hit = lab == gt[idx]
    tp = np.zeros(n, dtype=bool)
    tp[idx[hit]] = True
    fp_at = np.searchsorted(idx[~hit], np.arange(n + 1))  # entries sorted by datum
    fp_lab = lab[~hit]
    labels = b.labels
    out = []
    for i in range(start, stop):
        g = labels[int(gt[i])]
        value = {
            "true_positives": [g] if tp[i] else [],
            "false_positives": [labels[j] for j in fp_lab[fp_at[i] : fp_at[i + 1]].tolist()],
            "false_negatives": [] if tp[i] else [g],
        }
        out.append(Metric("Examples", value, {**params, "datum_uid": str(uids[i])}))
    return out


def _count(codes: Any, weights: Any, size: int) -> Any:
    if weights is None:
        return np.bincount(codes, minlength=size)
    return np.bincount(codes, weights=weights, minlength=size).astype(np.int64)


def confusion_records(
    b: KeyBlock,
    score_thresholds: Sequence[float],
    *,
    hardmax: bool,
    want: AbstractSet[str],
    number_of_examples: int | None = None,
    examples_page: tuple[int, int | None] = (0, None),
) -> list[Metric]:
    """``ConfusionMatrix``, ``ConfusionMatrixWithExamples`` and ``Examples`` of one key.

    ``examples_page``: ``(offset, limit)`` of the datums given ``Examples`` records.
    """
    scores, gt, uids = _in_uid_order(b)
    k, w = len(b.labels), b.weights  # the compact form has no uids: its order is kept
    g64 = gt.astype(np.int64)
    top = None
    if hardmax:  # ties: the label that sorts first (argmax keeps the first maximum)
        top_label = np.argmax(scores, axis=0).astype(np.int64)
        top = (top_label, scores[top_label, np.arange(len(gt))])
    out: list[Metric] = []
    for t in score_thresholds:
        params = {"label_key": b.key, "score_threshold": float(t), "hardmax": hardmax}
        entry = _entries(scores, top, float(t))
        idx, lab, _, unmatched = entry
        cells = _count(g64[idx] * k + lab, None if w is None else w[idx], k * k)
        um = _count(g64[unmatched], None if w is None else w[unmatched], k)
        if "ConfusionMatrix" in want:
            value = _matrix_value(b.labels, cells, um, None)
            out.append(Metric("ConfusionMatrix", value, dict(params)))
        if "ConfusionMatrixWithExamples" in want:
            ex = _with_examples(uids, gt, k, entry, number_of_examples)
            value = _matrix_value(b.labels, cells, um, ex)
            p = {**params, "number_of_examples": number_of_examples}
            out.append(Metric("ConfusionMatrixWithExamples", value, p))
        if "Examples" in want:
            out += _examples(b, uids, gt, entry, params, examples_page)
    return out


def build(b: KeyBlock, want: AbstractSet[str], options: Mapping[str, Any]) -> list[Metric]:
    """The ``confusion`` family's builder (:data:`assay.classification.declared.METRICS`):
    :func:`confusion_records` at the evaluator's score thresholds, its examples paged."""
    return confusion_records(
        b,
        options["score_thresholds"],
        hardmax=options["hardmax"],
        want=want,
        number_of_examples=options["number_of_examples"],
        examples_page=(options["examples_offset"], options["examples_limit"]),
    )
