"""Metadata of datums and annotations, kept as columns (classification and detection).

A datum (and in detection an annotation) may carry a mapping of scalars: text, integers,
floats, true/false or null. :class:`Metadata` keeps them as one numpy array per field
(float64, int64, bool or text) with a mask of the rows that have a value, so metadata travels
through ``state()``/``from_state()`` as plain arrays and joins batches by concatenation.
Filters name these fields (:mod:`assay.filtering`).

Example:
    >>> md = metadata_from_records([{"split": "val"}, {"split": "train", "w": 2}, None],
    ...                            source="gts")
    >>> md.names, md.present["w"].tolist(), md.values["w"].tolist()
    (('split', 'w'), [False, True, False], [0, 2, 0])
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError

if TYPE_CHECKING:  # pandas is imported where a frame is read: detection never needs it
    import pandas as pd

__all__ = [
    "RESERVED_FIELDS",
    "Metadata",
    "metadata_from",
    "metadata_from_frame",
    "metadata_from_records",
]

#: Field names the filter tables use themselves (assay's and valor-lite's names); a
#: metadata key may not take one of them.
RESERVED_FIELDS = frozenset(
    {
        "uid", "datum_uid", "datum_id", "label", "score", "key", "label_key",
        "gt_label", "gt_label_id", "gt_uid", "gt_id", "pd_label", "pd_label_id",
        "pd_uid", "pd_id", "pd_score", "pd_winner", "match", "iou",
    }
)  # fmt: skip

_KINDS = {"b": "bool", "i": "int", "f": "float", "U": "text"}
_FILL = {"b": False, "i": 0, "f": np.nan, "U": ""}


@dataclass(frozen=True)
class Metadata:
    """Metadata of ``n`` rows: per field a values array and a mask of rows that have one."""

    n: int
    values: dict[str, NDArray[Any]] = field(default_factory=dict)
    present: dict[str, NDArray[np.bool_]] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.values))

    def take(self, index: NDArray[Any] | slice) -> Metadata:
        """The rows ``index`` (an int or bool array, or a slice)."""
        if isinstance(index, slice):
            n = len(range(*index.indices(self.n)))
            idx: Any = index
        else:
            idx = np.asarray(index)
            n = int(idx.sum()) if idx.dtype == bool else len(idx)
        return Metadata(
            n,
            {k: v[idx] for k, v in self.values.items()},
            {k: p[idx] for k, p in self.present.items()},
        )

    @staticmethod
    def concat(parts: Sequence[Metadata], source: str = "metadata") -> Metadata:
        """Rows of ``parts`` in order; a field missing from a part has no value there."""
        names = sorted({k for p in parts for k in p.values})
        values, present = {}, {}
        for k in names:
            kind = _joint_kind([p.values[k].dtype.kind for p in parts if k in p.values], k, source)
            values[k] = np.concatenate([_col(p, k, kind) for p in parts])
            present[k] = np.concatenate(
                [p.present[k] if k in p.values else np.zeros(p.n, bool) for p in parts]
            )
        return Metadata(sum(p.n for p in parts), values, present)

    def overlay(self, over: Metadata, source: str = "metadata") -> Metadata:
        """These rows with ``over``'s values where ``over`` has one (same number of rows)."""
        values, present = dict(self.values), dict(self.present)
        for k, v in over.values.items():
            if k not in values:
                values[k], present[k] = v, over.present[k]
                continue
            kind = _joint_kind([values[k].dtype.kind, v.dtype.kind], k, source)
            base = values[k].astype(_dtype(kind, values[k], v))
            values[k] = np.where(over.present[k], v.astype(base.dtype), base)
            present[k] = present[k] | over.present[k]
        return Metadata(self.n, values, present)

    def to_arrays(self, prefix: str) -> dict[str, NDArray[Any]]:
        """Plain arrays for ``state()``: the field names as JSON, then values and masks."""
        names = self.names
        out: dict[str, NDArray[Any]] = {f"{prefix}names": np.array(json.dumps(names))}
        for i, k in enumerate(names):
            out[f"{prefix}{i}.values"] = self.values[k]
            out[f"{prefix}{i}.present"] = self.present[k]
        return out

    @staticmethod
    def from_arrays(state: Mapping[str, NDArray[Any]], prefix: str, n: int) -> Metadata:
        """What :meth:`to_arrays` packed (no metadata: ``n`` rows without fields)."""
        if f"{prefix}names" not in state:
            return Metadata(n)
        names = json.loads(str(np.asarray(state[f"{prefix}names"])[()]))
        return Metadata(
            n,
            {k: np.asarray(state[f"{prefix}{i}.values"]) for i, k in enumerate(names)},
            {k: np.asarray(state[f"{prefix}{i}.present"], bool) for i, k in enumerate(names)},
        )


def _dtype(kind: str, *arrays: NDArray[Any]) -> Any:
    if kind == "U":
        return np.result_type(*[a.dtype for a in arrays if a.dtype.kind == "U"] or [np.dtype(str)])
    return {"b": np.bool_, "i": np.int64, "f": np.float64}[kind]


def _col(p: Metadata, k: str, kind: str) -> NDArray[Any]:
    if k not in p.values:
        return np.full(p.n, _FILL[kind], dtype=_dtype(kind) if kind != "U" else "U1")
    return p.values[k] if kind == "U" else p.values[k].astype(_dtype(kind))


def _joint_kind(kinds: Sequence[str], name: str, source: str) -> str:
    ks = set(kinds)
    if len(ks) == 1:
        return ks.pop()
    if ks == {"i", "f"}:
        return "f"
    raise InvalidInputError(
        f"holds values of different types ({', '.join(sorted(_KINDS[k] for k in ks))}) "
        "in different rows or batches",
        source=source,
        field=f"metadata.{name}",
    )


def _scalar_kind(v: Any) -> str | None:
    """'b', 'i', 'f', 'U' for a metadata scalar; None for a missing value; '?' otherwise."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, (bool, np.bool_)):
        return "b"
    if isinstance(v, (int, np.integer)):
        return "i"
    if isinstance(v, (float, np.floating)):
        return "f"
    return "U" if isinstance(v, str) else "?"


def _check_name(name: Any, source: str, record: Any) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidInputError(
            f"metadata keys must be non-empty strings, got {name!r}",
            source=source,
            record=record,
            field="metadata",
        )
    if name in RESERVED_FIELDS:
        raise InvalidInputError(
            f"metadata key {name!r} is reserved (filters use it); rename it",
            source=source,
            record=record,
            field=f"metadata.{name}",
        )
    return name


def _column(name: str, vals: list[Any], rows: list[int], n: int, source: str) -> tuple[Any, Any]:
    kinds = {_scalar_kind(v) for v in vals}
    if "?" in kinds:
        i = next(j for j, v in enumerate(vals) if _scalar_kind(v) == "?")
        raise InvalidInputError(
            f"must be a string, number, true/false or null, got {type(vals[i]).__name__}",
            source=source,
            record=rows[i] + 1,
            field=f"metadata.{name}",
        )
    kind = _joint_kind(sorted(k for k in kinds if k is not None) or ["f"], name, source)
    present = np.zeros(n, bool)
    keep = [j for j, v in enumerate(vals) if _scalar_kind(v) is not None]
    idx = np.asarray([rows[j] for j in keep], dtype=np.intp)
    present[idx] = True
    got = np.asarray([vals[j] for j in keep], dtype=_dtype(kind) if kind != "U" else str)
    out = np.full(n, _FILL[kind], dtype=got.dtype if kind == "U" else _dtype(kind))
    out[idx] = got
    return out, present


def metadata_from_records(items: Sequence[Any], *, source: str) -> Metadata:
    """Columnar metadata from one mapping (or None / NaN: no metadata) per row.

    Raises:
        InvalidInputError: a row that is not a mapping, a reserved or empty key, a value that
            is not a scalar, or a field with text in one row and a number in another.
    """
    cols: dict[str, tuple[list[Any], list[int]]] = {}
    for i, m in enumerate(items):
        if m is None or (isinstance(m, float) and np.isnan(m)):
            continue
        if not isinstance(m, Mapping):
            raise InvalidInputError(
                f"metadata must be an object (a mapping), got {type(m).__name__}",
                source=source,
                record=i + 1,
                field="metadata",
            )
        for k, v in m.items():
            vals, rows = cols.setdefault(_check_name(k, source, i + 1), ([], []))
            vals.append(v)
            rows.append(i)
    n = len(items)
    built = {k: _column(k, v, r, n, source) for k, (v, r) in cols.items()}
    return Metadata(n, {k: v for k, (v, _) in built.items()}, {k: p for k, (_, p) in built.items()})


def metadata_from_frame(df: pd.DataFrame, columns: Sequence[str], *, source: str) -> Metadata:
    """Columnar metadata from flat columns of a table (vectorised: no loop over rows)."""
    import pandas as pd

    values, present = {}, {}
    for c in columns:
        if c not in df.columns:
            raise InvalidInputError(
                f"metadata column {c!r} is not in the table", source=source, field=c
            )
        name = _check_name(c, source, None)
        s = df[c]
        ok = s.notna().to_numpy()
        if pd.api.types.is_bool_dtype(s.dtype):
            v = s.fillna(False).to_numpy(dtype=bool)
        elif pd.api.types.is_integer_dtype(s.dtype):
            v = s.fillna(0).to_numpy(dtype=np.int64)
        elif pd.api.types.is_float_dtype(s.dtype):
            v = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:  # text (or mixed): as written in the file
            v = np.where(ok, s.astype(str).to_numpy(), "").astype(str)
        values[name], present[name] = v, ok
    return Metadata(len(df), values, present)


def metadata_from(data: Any, n: int, *, source: str = "metadata") -> Metadata:
    """Metadata of ``n`` rows from one mapping per row, or a DataFrame (one column per field).

    Raises:
        InvalidInputError: another number of rows, or what the readers above refuse.
    """
    if hasattr(data, "columns"):
        frame = data if hasattr(data, "iloc") else data.to_pandas()
        md = metadata_from_frame(frame, list(frame.columns), source=source)
    else:
        md = metadata_from_records(list(data), source=source)
    if md.n != n:
        raise InvalidInputError(f"has {md.n} rows for {n} datums", source=source)
    return md
