"""Filters of one label key's datums: by uid, expression, ground truth, prediction and label.

Three tables of fields, one per thing a filter can select (:mod:`assay.filtering` evaluates
the expressions):

=================  ==========================================================================
``datums``         one row per datum: ``uid`` (also ``datum_uid``) and the datum's metadata
``groundtruths``   one row per datum: those fields, and its truth ``label`` (``gt_label``)
``predictions``    one row per (datum, predicted label): the datum's fields, the truth
                   ``gt_label``, the predicted ``label`` (``pd_label``) and ``score``
                   (``pd_score``)
=================  ==========================================================================

Semantics, valor-lite's: a datum that fails ``datums`` or ``groundtruths`` is dropped (a
classification needs its ground truth); a prediction that fails ``predictions`` is dropped, and
a datum left with no prediction is dropped too (valor-lite keeps only datums with a
ground-truth/prediction pair). ``labels`` keeps the datums whose truth is listed and drops the
scores of other labels. A label left with neither a ground truth nor a score is dropped. Each
datum's top prediction is chosen again among the predictions kept (valor-lite keeps the flag of
the original top prediction; see ``docs/classification.md``).

Example:
    >>> from assay.classification.types import block_from_arrays
    >>> import numpy as np
    >>> b = block_from_arrays(["a", "b", "b"], [[0.9, 0.1], [0.6, 0.4], [0.3, 0.7]],
    ...                       labels=["a", "b"])
    >>> f = filter_block(b, predictions="score > 0.5")
    >>> f.uids.tolist(), f.dense_scores().tolist()
    ([0, 1, 2], [[0.9, 0.6, -inf], [-inf, -inf, 0.7]])
    >>> filter_block(b, groundtruths='label == "b"').uids.tolist()
    [1, 2]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from assay.classification.types import KeyBlock, code_dtype
from assay.errors import InvalidInputError
from assay.filtering import Column, FieldTable, evaluate, is_expression

__all__ = ["filter_block", "datum_fields", "prediction_fields"]


def datum_fields(b: KeyBlock, *, with_label: bool = False) -> FieldTable:
    """The ``datums`` table (``with_label``: the ``groundtruths`` table)."""
    uids = b.uid_array()

    def uid() -> Column:
        return Column(np.arange(b.n), categories=uids)

    fields = {"uid": uid, "datum_uid": uid}
    if with_label:

        def label() -> Column:
            return Column(b.gt.astype(np.int64), categories=b.labels)

        fields |= {"label": label, "gt_label": label}
    what = "ground truths" if with_label else "datums"
    return FieldTable(b.n, fields, b.metadata, what)


def prediction_fields(
    b: KeyBlock, lab: NDArray[np.intp], idx: NDArray[np.intp], scores: NDArray[np.float64]
) -> FieldTable:
    """The ``predictions`` table of the (label ``lab``, datum ``idx``) pairs."""
    uids = b.uid_array()

    def uid() -> Column:
        return Column(idx, categories=uids)

    def label() -> Column:
        return Column(lab, categories=b.labels)

    def gt_label() -> Column:
        return Column(b.gt[idx].astype(np.int64), categories=b.labels)

    def score() -> Column:
        return Column(scores[lab, idx])

    fields = {
        "uid": uid, "datum_uid": uid, "label": label, "pd_label": label,
        "gt_label": gt_label, "score": score, "pd_score": score,
    }  # fmt: skip
    return FieldTable(len(idx), fields, b.metadata, "predictions", metadata_rows=idx)


def _uid_mask(b: KeyBlock, datums: Iterable[Any]) -> NDArray[np.bool_]:
    wanted = pd.Index([str(d) for d in datums])
    return np.asarray(pd.Index(b.uid_array().astype(str)).isin(wanted), dtype=bool)


def _drop_predictions(
    b: KeyBlock, predictions: Any, keep: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Dense scores with the predictions failing ``predictions`` set to ``-inf``; datums left
    without a prediction are cleared from ``keep`` (in place)."""
    dense = np.array(b.dense_scores(), dtype=np.float64, copy=True)
    lab, idx = np.nonzero(np.isfinite(dense))
    ok = evaluate(predictions, prediction_fields(b, lab, idx, dense), source="predictions")
    dense[lab[~ok], idx[~ok]] = -np.inf
    has = np.zeros(b.n, dtype=bool)
    has[idx[ok]] = True
    keep &= has
    return dense


def filter_block(
    b: KeyBlock,
    *,
    datums: Any = None,
    groundtruths: Any = None,
    predictions: Any = None,
    labels: Iterable[Any] | None = None,
) -> KeyBlock:
    """The part of ``b`` the filters keep (see the module docstring); ``None`` keeps all.

    ``datums`` is a list of uids (datums added without uids are numbered 0, 1, ...) or an
    expression; ``groundtruths`` and ``predictions`` are expressions. Kept datums keep their
    uids, so examples name the same datums before and after filtering.
    """
    uids = b.uid_array()
    keep = np.ones(b.n, dtype=bool)
    if datums is not None:
        keep &= (
            evaluate(datums, datum_fields(b), source="datums")
            if is_expression(datums)
            else _uid_mask(b, datums)
        )
    if groundtruths is not None:
        keep &= evaluate(groundtruths, datum_fields(b, with_label=True), source="groundtruths")
    dense = None if predictions is None else _drop_predictions(b, predictions, keep)
    rows = np.arange(len(b.labels))
    if labels is not None:
        if isinstance(labels, (str, bytes)):
            raise InvalidInputError("must be a list of labels, not one string", source="labels")
        wanted_labels = {str(x) for x in labels}
        rows = np.array([j for j, lab in enumerate(b.labels) if lab in wanted_labels], dtype=int)
        keep &= np.isin(b.gt, rows)
    md = None if b.metadata is None else b.metadata.take(keep)
    if labels is None and dense is None and b.binary_row is not None:
        scores = b.scores[:, keep]
        return KeyBlock(b.key, uids[keep], b.labels, b.gt[keep], scores, b.binary_row, md)
    full = b.dense_scores() if dense is None else dense
    scores = full[np.ix_(rows, np.flatnonzero(keep))]
    # A label left with neither a ground truth nor a score is dropped, as if never seen.
    seen = np.isin(rows, b.gt[keep]) | np.isfinite(scores).any(axis=1)
    rows, scores = rows[seen], np.ascontiguousarray(scores[seen])
    recode = np.zeros(len(b.labels), dtype=code_dtype(len(rows)))
    recode[rows] = np.arange(len(rows))
    labs = tuple(b.labels[j] for j in rows)
    return KeyBlock(b.key, uids[keep], labs, recode[b.gt[keep]], scores, metadata=md)
