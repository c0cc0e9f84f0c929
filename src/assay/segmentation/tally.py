"""The segmentation tally: a bootstrap over images (datums) (:mod:`assay.uncertainty`).

Per label key, each image's sufficient statistics: for background and every label, the
pixels right (``TP``, the confusion diagonal), the true pixels (row sums) and the predicted
pixels (column sums). A resample gives image ``i`` a count ``w_i``; the pooled counts of the
resample are ``w @ rows``, and from them, per label, ``IOU = TP / (GT + PD - TP)``,
``Precision = TP / PD``, ``Recall = TP / GT``, ``F1 = 2 TP / (GT + PD)``; ``mIOU`` the mean of
the defined IoUs of that resample; ``Accuracy = sum TP / sum GT`` (background included).
Images are resampled in uid order, so batches and merge order do not change the interval.
Keys: ``(type, label_key, label_value)`` (:data:`WHERE`).

A slice's gap: every resample draws from all the key's images (the whole set's draw, with
its seed); the slice's value is read from the same draw with the other images' counts set
to 0, over the slice's own labels (:meth:`~assay.uncertainty.tally.Tally.gap`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from assay.io.labels import natural_key
from assay.ratios import divide
from assay.segmentation.datums import DatumCounts
from assay.uncertainty.clusters import cluster_codes
from assay.uncertainty.tally import Key, Tally

__all__ = ["WHERE", "gap_tally", "key_tally"]

F64 = NDArray[np.float64]
#: What identifies a record among a slice's (beside its type): its tally key.
WHERE = ("label_key", "label_value")


def _values(rows: NDArray[np.int64], w: F64, zd: float | None) -> F64:
    """Per resample: IOU, Precision, Recall, F1 of each label, then mIOU and Accuracy."""
    tp, gt, pd = (w @ rows[:, j, :] for j in range(3))  # (b, n) each, column 0 background
    t, g, p = tp[:, 1:], gt[:, 1:], pd[:, 1:]
    iou = divide(t, g + p - t, zd)
    prec, rec, f1 = divide(t, p, zd), divide(t, g, zd), divide(2 * t, g + p, zd)
    ok = ~np.isnan(iou)
    with np.errstate(invalid="ignore", divide="ignore"):
        miou = np.where(ok, iou, 0.0).sum(axis=1) / ok.sum(axis=1)
    acc = divide(tp.sum(axis=1), gt.sum(axis=1), zd)
    return np.concatenate([iou, prec, rec, f1, miou[:, None], acc[:, None]], axis=1)


def key_tally(
    datums: DatumCounts,
    key: str,
    labels: Sequence[str] | None,
    zero_division: float | None,
    keep: NDArray[np.bool_] | None = None,
) -> Tally:
    """The tally of ``key``'s records over its images, for ``labels`` (default the key's,
    in natural order); ``keep`` marks a slice's datums (``inside``, for its gap)."""
    known = datums.labels[key]
    labels = sorted(known, key=natural_key) if labels is None else list(labels)
    images, rows = datums.image_rows(key)
    idx = np.array([0, *[known.index(v) + 1 for v in labels]], dtype=np.int64)
    mine = rows[:, :, idx]
    keys: list[Key] = [
        (name, key, v) for name in ("IOU", "Precision", "Recall", "F1") for v in labels
    ]
    keys += [("mIOU", key, None), ("Accuracy", key, None)]

    def codes(column: str) -> NDArray[np.intp]:
        return cluster_codes(datums.metadata, column, "datums")[images]

    return Tally(
        tuple(keys),
        lambda w: _values(mine, w, zero_division),
        np.ones(len(images), dtype=np.int64),
        ids=np.asarray([datums.uids[i] for i in images], dtype=object),
        codes=codes,
        inside=None if keep is None else keep[images],
    )


def gap_tally(
    datums: DatumCounts, part: DatumCounts, key: str, keep: NDArray[np.bool_], zd: float | None
) -> Tally:
    """The gaps of the slice ``keep`` (``part``: its datums) on ``key``: the slice's labels
    read on the whole set's images."""
    mine = sorted(part.labels[key], key=natural_key)
    return key_tally(datums, key, None, zd, keep).gap(key_tally(datums, key, mine, zd))
