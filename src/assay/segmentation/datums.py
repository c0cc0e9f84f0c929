"""Per-datum pixel counts of semantic segmentation, so that an evaluator can be filtered.

:class:`DatumCounts` keeps, per label key, the non-zero cells of every datum's confusion
matrix (datum, true label, predicted label, pixels) and the labels each datum declares (the
labels of its annotations of that key, or the ``labels`` given with its label maps); label
ids are global to the key, 0 is background. A key's confusion matrix is the sum of its
cells. Never the pixels: a datum costs a few cells.

:meth:`DatumCounts.subset` keeps datums (uids, or an expression over ``uid`` and the datums'
metadata) and labels (values under any key, or ``(key, value)`` pairs) and gives what the
kept input alone would: a dropped label's pixels become background on both sides (its
annotations are gone), a datum left without a declared label of a key no longer counts for
that key (a datum counts for a key only when it has an annotation of it), and a key or label
that nothing declares any more goes.

Example:
    >>> import numpy as np
    >>> from assay.segmentation.compute import pixel_confusion
    >>> c = DatumCounts()
    >>> d = c.add_datum("a")
    >>> c.add_block(d, "class", ["road", "car"],
    ...             pixel_confusion(np.array([[1, 2]]), np.array([[1, 1]]), 2))
    >>> c.matrix("class").tolist()
    [[0, 0, 0], [0, 1, 0], [0, 1, 0]]
    >>> c.subset(labels=["road"]).matrix("class").tolist()  # the car pixel: background
    [[0, 1], [0, 1]]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.filtering import datum_mask, label_mask
from assay.io.metadata import Metadata

__all__ = ["DatumCounts"]

_Cells = tuple[NDArray[np.int64], ...]  # datum, gt, pd, count, declared datum, declared label
_EMPTY = np.zeros(0, np.int64)


class DatumCounts:
    """Uids, metadata and per-key sparse confusion counts of every datum added."""

    def __init__(self) -> None:
        self.uids: list[Any] = []
        self.labels: dict[str, list[str]] = {}  # key -> values, global id - 1 order
        self._meta: list[Metadata] = []
        self._meta_all: Metadata | None = None
        self._parts: dict[str, list[_Cells]] = {}

    @property
    def n_datums(self) -> int:
        return len(self.uids)

    def __len__(self) -> int:
        return self.n_datums

    @property
    def metadata(self) -> Metadata:
        """The datums' metadata (one row per datum)."""
        if self._meta_all is None:
            parts = [*self._meta, Metadata(self.n_datums - sum(m.n for m in self._meta))]
            self._meta_all = Metadata.concat(parts, source="metadata")
            self._meta = [self._meta_all]
        return self._meta_all

    def _add_metadata(self, metadata: Metadata) -> None:
        """Metadata of the last ``metadata.n`` datums added (earlier ones are padded)."""
        if not metadata.names:
            return
        gap = self.n_datums - metadata.n - sum(m.n for m in self._meta)
        if gap:
            self._meta.append(Metadata(gap))
        self._meta.append(metadata)
        self._meta_all = None

    def add_datum(self, uid: Any, metadata: Metadata | None = None) -> int:
        """Register a datum (``metadata``: one row, or None); returns its index."""
        self.uids.append(uid.item() if isinstance(uid, np.generic) else uid)
        if metadata is not None:
            self._add_metadata(metadata)
        return self.n_datums - 1

    def _ids(self, key: str, labels: Sequence[str]) -> NDArray[np.int64]:
        known = self.labels.setdefault(key, [])
        known.extend(v for v in dict.fromkeys(labels) if v not in known)
        index = {v: i + 1 for i, v in enumerate(known)}
        return np.array([0, *[index[v] for v in labels]], dtype=np.int64)

    def add_block(self, datum: int, key: str, labels: Sequence[str], local: np.ndarray) -> None:
        """Datum ``datum``'s counts for ``key``: ``local`` is ``(n + 1, n + 1)`` over
        background and ``labels`` (local order)."""
        to_global = self._ids(key, labels)
        g, p = np.nonzero(local)
        n = len(g)
        cells = (
            np.full(n, datum, np.int64),
            to_global[g],
            to_global[p],
            local[g, p].astype(np.int64),
            np.full(len(to_global), datum, np.int64),
            to_global,  # background (0) marks that the datum has the key
        )
        self._parts.setdefault(key, []).append(cells)

    def cells(self, key: str) -> _Cells:
        """The key's cells as six arrays (see the module docstring), joined once."""
        parts = self._parts.get(key, [])
        if len(parts) != 1:
            joined = tuple(np.concatenate(c) if c else _EMPTY for c in zip(*parts)) or (
                (_EMPTY,) * 6
            )
            self._parts[key] = parts = [joined]
        return parts[0]

    def matrix(self, key: str) -> NDArray[np.int64]:
        """The key's confusion counts, ``(n + 1, n + 1)`` in global label order."""
        n = len(self.labels.get(key, [])) + 1
        _, g, p, count, _, _ = self.cells(key)
        out = np.zeros(n * n, np.int64)
        np.add.at(out, g * n + p, count)
        return out.reshape(n, n)

    def image_rows(self, key: str) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
        """The datums of ``key`` in uid order (indices), and per datum ``(datums, 3, n + 1)``
        of its confusion's diagonal, row sums and column sums (global label order): the
        bootstrap's units."""
        n = len(self.labels.get(key, [])) + 1
        d, g, p, count, declared, _ = self.cells(key)
        datums = np.unique(declared)
        order = np.argsort(np.array([str(self.uids[i]) for i in datums], dtype=str), kind="stable")
        datums = datums[order]
        pos = np.empty(self.n_datums, np.int64)
        pos[datums] = np.arange(len(datums))
        rows = np.zeros((len(datums), 3, n), np.int64)
        diag = g == p
        np.add.at(rows[:, 0, :], (pos[d[diag]], g[diag]), count[diag])
        np.add.at(rows[:, 1, :], (pos[d], g), count)
        np.add.at(rows[:, 2, :], (pos[d], p), count)
        return datums, rows

    def extend(self, other: DatumCounts) -> None:
        """Append ``other``'s datums (labels unified by name)."""
        offset = self.n_datums
        self.uids.extend(other.uids)
        if other._meta:
            self._add_metadata(other.metadata)
        for key, values in other.labels.items():
            to_global = self._ids(key, values)
            d, g, p, count, dd, dl = other.cells(key)
            cells = (d + offset, to_global[g], to_global[p], count, dd + offset, to_global[dl])
            self._parts.setdefault(key, []).append(cells)

    def subset(self, *, datums: Any = None, labels: Sequence[Any] | None = None) -> DatumCounts:
        """The datums and labels kept (see the module docstring)."""
        meta = self.metadata if self._meta else None
        pairs = [(k, v) for k in sorted(self.labels) for v in self.labels[k]]
        kl = label_mask(pairs, labels)
        return self.take(datum_mask(self.uids, meta, datums), kl, labels is not None)

    def take(
        self,
        kd: NDArray[np.bool_],
        kl: NDArray[np.bool_] | None = None,
        by_label: bool = False,
    ) -> DatumCounts:
        """The datums ``kd`` (a mask over the datums) and labels ``kl`` (a mask over every
        key's labels, keys sorted; None keeps all) kept, as :meth:`subset` does."""
        meta = self.metadata if self._meta else None
        if kl is None:
            kl = np.ones(sum(len(v) for v in self.labels.values()), dtype=bool)
        out = DatumCounts()
        new_index = np.cumsum(kd) - 1
        out.uids = [self.uids[i] for i in np.flatnonzero(kd)]
        if meta is not None:
            out._add_metadata(meta.take(kd))
        at = 0
        for key in sorted(self.labels):
            values = self.labels[key]
            keep = np.r_[True, kl[at : at + len(values)]]  # background always stays
            at += len(values)
            self._subset_key(out, key, keep, kd, new_index, by_label)
        return out

    def _subset_key(
        self,
        out: DatumCounts,
        key: str,
        keep: NDArray[np.bool_],
        kd: NDArray[np.bool_],
        new_index: NDArray[np.int64],
        by_label: bool,
    ) -> None:
        d, g, p, count, dd, dl = self.cells(key)
        declared = kd[dd] & keep[dl] & ((dl > 0) | (not by_label))
        has_key = np.zeros(self.n_datums, bool)
        has_key[dd[declared]] = True  # with a label filter: datums with a kept label
        live = np.zeros(len(keep), bool)
        live[dl[declared]] = True  # kept labels some kept datum declares
        live[0] = True
        if not has_key.any():
            return
        values = self.labels[key]
        to_new = np.cumsum(live) - 1
        out.labels[key] = [v for v, alive in zip(values, live[1:]) if alive]
        rows = has_key[d]
        g2 = np.where(live[g], to_new[g], 0)[rows]  # a dropped label's pixels: background
        p2 = np.where(live[p], to_new[p], 0)[rows]
        cells = (new_index[d[rows]], g2, p2, count[rows], new_index[dd[declared]],
                 to_new[dl[declared]])  # fmt: skip
        out._parts[key] = [cells]

    def to_arrays(self) -> dict[str, NDArray[Any]]:
        """Plain arrays for ``state()``."""
        keys = sorted(self.labels)
        out: dict[str, NDArray[Any]] = {
            "labels": np.array(json.dumps({k: self.labels[k] for k in keys})),
            "uids": np.array(json.dumps(self.uids)),
        }
        for i, key in enumerate(keys):
            cells = self.cells(key)
            out[f"cells_{i}"] = np.stack(cells[:4])
            out[f"declared_{i}"] = np.stack(cells[4:])
        if self._meta:
            out.update(self.metadata.to_arrays("metadata."))
        return out

    @classmethod
    def from_arrays(cls, state: Mapping[str, NDArray[Any]]) -> DatumCounts:
        """What :meth:`to_arrays` packed."""
        out = cls()
        out.uids = list(json.loads(str(np.asarray(state["uids"])[()])))
        labels = json.loads(str(np.asarray(state["labels"])[()]))
        for i, key in enumerate(sorted(labels)):
            out.labels[key] = list(labels[key])
            cells = np.asarray(state[f"cells_{i}"], np.int64)
            declared = np.asarray(state[f"declared_{i}"], np.int64)
            out._parts[key] = [(*cells, *declared)]
        if "metadata.names" in state:
            out._meta = [Metadata.from_arrays(state, "metadata.", out.n_datums)]
        return out
