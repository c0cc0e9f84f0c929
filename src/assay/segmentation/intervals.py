"""Confidence intervals of the segmentation metrics: a bootstrap over images (datums).

With ``ci`` set the evaluator keeps, beside the pooled confusion counts, each image's
sufficient statistics per label key: for background and every label, the pixels right
(``TP``, the confusion diagonal), the true pixels (row sums) and the predicted pixels (column
sums). A resample gives image ``i`` a multinomial count ``w_i``; the pooled counts of the
resample are ``w @ rows``, and from them, per label, ``IOU = TP / (GT + PD - TP)``,
``Precision = TP / PD``, ``Recall = TP / GT``, ``F1 = 2 TP / (GT + PD)``; ``mIOU`` the mean of
the defined IoUs of that resample; ``Accuracy = sum TP / sum GT`` (background included).
Images are resampled in uid order, so batches and merge order do not change the interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.intervals import CIOptions, Clusters, bootstrap, cluster_codes, percentile
from assay.ratios import divide
from assay.results import Metric

__all__ = [
    "ImageRows",
    "image_row",
    "image_units",
    "attach_intervals",
    "columns",
    "gap_intervals",
]

F64 = NDArray[np.float64]


def image_row(local: np.ndarray) -> np.ndarray:
    """One image's ``(3, labels + 1)`` row: diagonal, row sums, column sums of its confusion."""
    c = np.asarray(local, dtype=np.int64)
    return np.stack([np.diag(c), c.sum(axis=1), c.sum(axis=0)])


class ImageRows:
    """Per label key, each image's uid and row (columns in the evaluator's label order)."""

    def __init__(self) -> None:
        self.uids: dict[str, list[str]] = {}
        self.rows: dict[str, list[np.ndarray]] = {}

    def add(self, key: str, uid: Any, row: np.ndarray, to_global: np.ndarray) -> None:
        """Add an image's row given in some label order; ``to_global`` maps its columns."""
        out = np.zeros((3, int(to_global.max()) + 1), dtype=np.int64)
        out[:, to_global] = row
        self.uids.setdefault(key, []).append(str(uid))
        self.rows.setdefault(key, []).append(out)

    def matrix(self, key: str, n: int) -> tuple[list[str], np.ndarray]:
        """The images of ``key`` in uid order and their rows, ``(images, 3, n)``."""
        uids = self.uids.get(key, [])
        m = np.zeros((len(uids), 3, n), dtype=np.int64)
        for i, r in enumerate(self.rows.get(key, [])):
            m[i, :, : r.shape[1]] = r
        order = np.argsort(np.array(uids, dtype=str), kind="stable")
        return [uids[i] for i in order], m[order]

    def state(self, keys: list[str], widths: Mapping[str, int]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i, k in enumerate(keys):
            uids, m = self.matrix(k, widths[k])
            out[f"ci_uids_{i}"] = np.array(uids, dtype=str)
            out[f"ci_rows_{i}"] = m
        return out


def _replicates(rows: np.ndarray, w: F64, zd: float | None) -> F64:
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


def columns(labels: list[str]) -> dict[tuple[str, str | None], int]:
    """Each record's column of :func:`_replicates`' output, by (type, label_value)."""
    n = len(labels)
    col: dict[tuple[str, str | None], int] = {}
    for i, name in enumerate(("IOU", "Precision", "Recall", "F1")):
        col |= {(name, v): i * n + j for j, v in enumerate(labels)}
    col[("mIOU", None)], col[("Accuracy", None)] = 4 * n, 4 * n + 1
    return col


def image_units(
    metadata: Any, images: NDArray[np.intp], opts: CIOptions
) -> NDArray[np.int64] | Clusters:
    """What a resample of a key's ``images`` (datum indices, in uid order) draws: the
    images, one each, or with ``cluster`` the clusters of that datum metadata field."""
    if opts.cluster is None:
        return np.ones(len(images), dtype=np.int64)
    codes = cluster_codes(metadata, opts.cluster, "datums")
    return Clusters.of(np.arange(len(images)), codes[images], len(images))


def attach_intervals(
    records: list[Metric],
    key: str,
    labels: list[str],
    rows: np.ndarray,
    opts: CIOptions,
    zd: float | None,
    units: NDArray[np.int64] | Clusters | None = None,
) -> None:
    """Add the interval parameters to the defined records of ``key``, in place. ``labels``
    and the columns of ``rows`` (after background) are in the same order; ``units``: what a
    resample draws (default the images, one each; :class:`~assay.clusters.Clusters`)."""
    if units is None:
        units = np.ones(rows.shape[0], dtype=np.int64)
    reps = bootstrap(lambda w: _replicates(rows, w, zd), units, opts.num_bootstrap, opts.seed)
    lo, hi = percentile(reps, opts.level)
    col = columns(labels)
    for m in records:
        c = col.get((m.type, m.parameters.get("label_value")))
        if m.value is None or m.parameters.get("label_key") != key or c is None:
            continue
        m.parameters.update(opts.parameters(float(lo[c]), float(hi[c]), "bootstrap"))


def gap_intervals(
    records: list[Metric],
    whole: tuple[list[str], np.ndarray],
    part: tuple[list[str], np.ndarray],
    inside: np.ndarray,
    opts: CIOptions,
    zd: float | None,
    units: NDArray[np.int64] | Clusters | None = None,
) -> dict[tuple[str, str | None], tuple[float, float]]:
    """The bootstrap interval of each slice-minus-whole gap of a key's defined ``records``
    (the slice's), by (type, label_value). ``whole`` and ``part`` are (labels, rows) of the
    whole set and of the slice, rows over the same images (the key's), and ``inside`` marks
    the slice's images: one resample ``w`` of all images gives the whole set's value and the
    slice's (``w * inside``); ``units`` as :func:`attach_intervals`."""
    (labels, rows), (labels_s, rows_s) = whole, part
    width = 4 * len(labels) + 2

    def statistic(w: F64) -> F64:
        return np.concatenate(
            [_replicates(rows, w, zd), _replicates(rows_s, w * inside, zd)], axis=1
        )

    if units is None:
        units = np.ones(rows.shape[0], dtype=np.int64)
    reps = bootstrap(statistic, units, opts.num_bootstrap, opts.seed)
    col, col_s = columns(labels), columns(labels_s)
    out = {}
    for m in records:
        k = (m.type, m.parameters.get("label_value"))
        if m.value is None or k not in col_s or k not in col:
            continue
        lo, hi = percentile(reps[:, width + col_s[k]] - reps[:, col[k]], opts.level)
        out[k] = (float(lo), float(hi))
    return out
