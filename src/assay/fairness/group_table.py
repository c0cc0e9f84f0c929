"""Confusion counts per group, optionally weighted, for one group column or a crossing of
several.

A :class:`GroupTable` holds, per group, the raw confusion counts (TP, FP, FN, TN) and,
when sample weights were given, the sums of the weights in each cell: a group's weighted
TP is the sum of the weights of its true positives, and so on. Without weights every row
weighs 1, so the weighted sums are the counts. Tables of batches add up cell by cell.

*Crossed* (intersectional) groups: with several group columns each combination of values
present in the data is a group (as fairlearn's ``sensitive_features=df[["sex", "race"]]``);
combinations that occur in no row are no group. A crossed group is named by the JSON list
of its values in column order (``'["F", "b"]'``), so names stay one sortable text each.

Example:
    >>> t = GroupTable.tally(np.array([1, 0, 1]) == 1, np.array([1, 1, 1]) == 1,
    ...                      np.array(["a", "a", "b"]), np.array([1.0, 3.0, 2.0]))
    >>> t.names.tolist(), t.counts.tolist(), t.weights.tolist()
    (['a', 'b'], [[1, 1, 0, 0], [1, 0, 0, 0]], [[1.0, 3.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay._validation import as_1d
from assay.errors import InvalidInputError
from assay.fairness.grouping import control_levels, factorize_text

__all__ = [
    "GroupTable",
    "check_weights",
    "confusion_cell",
    "group_label",
    "split_by_control",
    "tables_from_state",
    "tables_state",
]


def confusion_cell(truth: NDArray[np.bool_], pred: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Each datum's confusion cell: 0 TP, 1 FP, 2 FN, 3 TN.

    Example:
        >>> confusion_cell(np.array([1, 0, 1, 0], bool), np.array([1, 1, 0, 0], bool)).tolist()
        [0, 1, 2, 3]
    """
    return (2 * ~np.asarray(pred, dtype=bool) + ~np.asarray(truth, dtype=bool)).astype(np.int64)


@dataclass(frozen=True)
class GroupTable:
    """Per group: ``names`` (sorted text), ``counts`` of shape (k, 4) (TP, FP, FN, TN) and,
    when weighted, ``sums`` of shape (k, 4): the weights summed per cell (None: unweighted).
    Tables add up (groups aligned by name); an unweighted table added to a weighted one
    counts each of its rows with weight 1."""

    names: NDArray[np.str_]
    counts: NDArray[np.int64]
    sums: NDArray[np.float64] | None = None

    @classmethod
    def empty(cls) -> GroupTable:
        return cls(np.empty(0, dtype="<U1"), np.zeros((0, 4), dtype=np.int64))

    @classmethod
    def tally(
        cls,
        truth: NDArray[np.bool_],
        pred: NDArray[np.bool_],
        groups: NDArray[np.str_],
        weights: NDArray[np.float64] | None = None,
    ) -> GroupTable:
        """Count one batch: binarised labels and predictions, each datum's group and
        optionally its weight."""
        names, inv = factorize_text(groups)
        return cls.from_codes(names.astype(str), inv, truth, pred, weights)

    @classmethod
    def from_codes(
        cls,
        names: NDArray[np.str_],
        codes: NDArray[np.int64],
        truth: NDArray[np.bool_],
        pred: NDArray[np.bool_],
        weights: NDArray[np.float64] | None = None,
    ) -> GroupTable:
        """Count one batch whose rows are in group ``names[codes]`` (``names`` sorted)."""
        cell = codes * 4 + confusion_cell(truth, pred)
        size = 4 * len(names)
        counts = np.bincount(cell, minlength=size).reshape(-1, 4).astype(np.int64)
        sums: NDArray[np.float64] | None = None
        if weights is not None:
            summed = np.bincount(cell, weights=weights, minlength=size)
            sums = np.asarray(summed, dtype=np.float64).reshape(-1, 4)
        return cls(names, counts, sums)

    def __len__(self) -> int:
        """The number of groups (0: nothing counted yet)."""
        return len(self.names)

    @property
    def weights(self) -> NDArray[np.float64]:
        """The weighted sums per cell (the counts as floats when unweighted)."""
        return self.counts.astype(np.float64) if self.sums is None else self.sums

    def __add__(self, other: GroupTable) -> GroupTable:
        names = np.union1d(self.names, other.names).astype(str)
        counts = np.zeros((len(names), 4), dtype=np.int64)
        weighted = self.sums is not None or other.sums is not None
        sums = np.zeros((len(names), 4)) if weighted else None
        for t in (self, other):
            at = np.searchsorted(names, t.names)
            counts[at] += t.counts
            if sums is not None:
                sums[at] += t.weights
        return GroupTable(names, counts, sums)

    @property
    def overall(self) -> NDArray[np.float64]:
        """The weighted sums over all groups, shape (1, 4)."""
        return self.weights.sum(axis=0, keepdims=True)


def group_label(name: str, crossed: bool) -> Any:
    """A group's value for a record: its text, or for a crossed group the list of values.

    Example:
        >>> group_label('["F", "b"]', True), group_label("en", False)
        (['F', 'b'], 'en')
    """
    return json.loads(name) if crossed else name


def check_weights(weights: ArrayLike, n: int, *, source: str | None, field: str) -> NDArray[Any]:
    """Sample weights as floats: numbers, as many as rows, finite, >= 0 and not all 0;
    otherwise an error naming the first bad row.

    Example:
        >>> check_weights([1, 0.5], 2, source=None, field="w").tolist()
        [1.0, 0.5]
    """
    w = as_1d(weights, source=source or field, field=field if source else None)
    if len(w) != n:
        raise InvalidInputError(f"has {len(w)} weights for {n} labels", source=source, field=field)
    if w.dtype.kind not in "iuf":
        raw = pd.Series(w, dtype=object)
        numeric = pd.to_numeric(raw, errors="coerce")
        bad = np.flatnonzero(numeric.isna().to_numpy() & raw.notna().to_numpy())
        if len(bad):
            raise InvalidInputError(
                f"a sample weight must be a number, got {raw.iloc[bad[0]]!r}",
                source=source,
                record=int(bad[0]) + 1,
                field=field,
            )
        w = numeric.to_numpy(dtype=np.float64)
    w = w.astype(np.float64)
    for problem, mask in (("missing or not finite", ~np.isfinite(w)), ("negative", w < 0)):
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            raise InvalidInputError(
                f"sample weight is {problem} ({w[i]!r})", source=source, record=i + 1, field=field
            )
    if n and not (w > 0).any():
        raise InvalidInputError("every sample weight is 0", source=source, field=field)
    return w


def tables_state(tables: Sequence[GroupTable]) -> dict[str, NDArray[Any]]:
    """Plain arrays of the tables (names, counts and, when weighted, weight sums)."""
    state: dict[str, NDArray[Any]] = {}
    for j, t in enumerate(tables):
        state[f"group_names_{j}"] = t.names
        state[f"group_counts_{j}"] = t.counts.astype(np.int64)
        if t.sums is not None:
            state[f"group_weights_{j}"] = t.sums.astype(np.float64)
    return state


def tables_from_state(state: Any, k: int) -> list[GroupTable]:
    """The ``k`` tables of :func:`tables_state` (a state without weights: unweighted)."""
    out = []
    for j in range(k):
        names = np.asarray(state[f"group_names_{j}"]).astype(str)
        counts = np.asarray(state[f"group_counts_{j}"], dtype=np.int64).reshape(-1, 4)
        sums = state.get(f"group_weights_{j}")
        if sums is not None:
            sums = np.asarray(sums, dtype=np.float64).reshape(-1, 4)
        out.append(GroupTable(names, counts, sums))
    return out


def split_by_control(
    table: GroupTable, controls: int, crossed: bool
) -> list[tuple[Any, GroupTable]]:
    """Cut a table keyed by ``controls`` control values and then the group values into one
    group table per control level: ``(control value or list of values, table)``, the
    groups named as without controls (their text, or a JSON list when ``crossed``).

    Example:
        >>> t = GroupTable(np.array(['["x", "F"]', '["x", "M"]', '["y", "F"]']),
        ...                np.ones((3, 4), dtype=np.int64))
        >>> [(c, s.names.tolist()) for c, s in split_by_control(t, 1, False)]
        [('x', ['F', 'M']), ('y', ['F'])]
    """
    out = []
    for control, names, rows in control_levels(table.names, controls, crossed):
        sums = None if table.sums is None else table.sums[rows]
        out.append((control, GroupTable(names, table.counts[rows], sums)))
    return out
