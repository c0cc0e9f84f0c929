"""Metadata on datums and annotations, and filter expressions over them (both domains).

Classification and detection keep user **metadata** (a mapping of scalars per datum, and in
detection per annotation) as columns: :class:`Metadata` holds one numpy array per field
(float64, int64, bool or text) with a mask of the rows that have a value, so it survives
``state()``/``from_state()`` as plain arrays and merges by concatenation.

A filter is a **boolean expression** evaluated once per row of a table of fields
(:class:`FieldTable`): the datums, the ground truths or the predictions of an evaluator. Two
forms give the same result:

* a ``pyarrow.compute.Expression`` (valor-lite's form), e.g. ``pc.field("split") == "val"``;
  pyarrow is imported only when such an expression is given;
* a string in pandas ``DataFrame.query`` syntax, e.g. ``'split == "val" and score > 0.5'``.

A row whose expression is null (a missing metadata value) does not pass. An unknown field,
a bad expression or one that does not give true/false per row raises
:class:`~assay.errors.InvalidInputError` naming the field and the fields available.

Example:
    >>> md = metadata_from_records([{"split": "val"}, {"split": "train", "w": 2}, None],
    ...                            source="gts")
    >>> md.names, md.present["w"].tolist()
    (('split', 'w'), [False, True, False])
    >>> table = FieldTable(3, {"uid": lambda: Column(np.array(["a", "b", "c"]))}, md, "datums")
    >>> evaluate('split == "val" or w >= 2', table, source="datums").tolist()
    [True, True, False]
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from assay.errors import InvalidInputError

__all__ = [
    "RESERVED_FIELDS",
    "Column",
    "FieldTable",
    "Metadata",
    "evaluate",
    "examples_page",
    "is_expression",
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


@dataclass(frozen=True)
class Column:
    """One field of a :class:`FieldTable`: values, or codes into distinct ``categories``."""

    values: NDArray[Any]
    present: NDArray[np.bool_] | None = None
    categories: Sequence[Any] | NDArray[Any] | None = None

    def to_pandas(self) -> Any:
        if self.categories is not None:
            dtype = pd.CategoricalDtype(pd.Index(np.asarray(self.categories)))
            return pd.Series(pd.Categorical.from_codes(self.values, dtype=dtype))
        v, mask = self.values, None if self.present is None else ~self.present
        if v.dtype.kind == "U":
            s = pd.array(v.astype(object), dtype="string")
            if mask is not None:
                s[mask] = pd.NA
            return pd.Series(s)
        if mask is None:
            return pd.Series(v)
        arr = {"b": pd.arrays.BooleanArray, "i": pd.arrays.IntegerArray}.get(
            v.dtype.kind, pd.arrays.FloatingArray
        )
        return pd.Series(arr(v, mask))

    def to_arrow(self) -> Any:
        import pyarrow as pa

        if self.categories is not None:
            return pa.DictionaryArray.from_arrays(
                pa.array(self.values), pa.array(np.asarray(self.categories))
            )
        mask = None if self.present is None else ~self.present
        return pa.array(self.values, mask=mask)


@dataclass
class FieldTable:
    """The fields a filter can name, built lazily: ``fields`` maps a name to a builder.

    ``metadata`` adds one field per metadata key, row ``i`` of the table reading row
    ``metadata_rows[i]`` of the metadata (default: row ``i``); ``what`` names the rows in
    messages (``"datums"``, ``"ground truths"``, ``"predictions"``).
    """

    n: int
    fields: dict[str, Callable[[], Column]]
    metadata: Metadata | None = None
    what: str = "rows"
    metadata_rows: NDArray[np.intp] | None = None

    def names(self) -> list[str]:
        return sorted(self.fields) + list(self.metadata.names if self.metadata else ())

    def column(self, name: str) -> Column:
        if name in self.fields:
            return self.fields[name]()
        if self.metadata is not None and name in self.metadata.values:
            v, p = self.metadata.values[name], self.metadata.present[name]
            rows = self.metadata_rows
            return Column(v, p) if rows is None else Column(v[rows], p[rows])
        raise KeyError(name)


class _Resolver(dict):  # type: ignore[type-arg]
    """The name lookup of ``pandas.eval``: builds a field the first time it is named."""

    def __init__(self, table: FieldTable) -> None:
        super().__init__()
        self.table, self.known = table, table.names()
        self.cache: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.cache:
            self.cache[name] = self.table.column(name).to_pandas()
        return self.cache[name]

    def __iter__(self) -> Any:
        return iter(self.known)

    def __len__(self) -> int:
        return len(self.known)

    def __contains__(self, name: object) -> bool:
        return name in self.known

    def keys(self) -> Any:
        return list(self.known)


def is_expression(x: Any) -> bool:
    """True for a filter expression (a string or a pyarrow Expression), not a uid list."""
    return isinstance(x, str) or _is_arrow_expression(x)


def _is_arrow_expression(x: Any) -> bool:
    t = type(x)
    return t.__name__ == "Expression" and t.__module__.startswith("pyarrow")


def _fail(reason: str, table: FieldTable, source: str, name: str | None = None) -> NoReturn:
    hint = f"; fields: {', '.join(table.names())}"
    raise InvalidInputError(reason + hint, source=source, field=name) from None


def _as_mask(result: Any, table: FieldTable, source: str) -> NDArray[np.bool_]:
    if np.ndim(result) == 0 and isinstance(result, (bool, np.bool_)):
        return np.full(table.n, bool(result))
    s = pd.Series(result) if not isinstance(result, pd.Series) else result
    if len(s) != table.n or not (pd.api.types.is_bool_dtype(s.dtype) or s.dtype == object):
        _fail(f"the filter must give true or false per {table.what[:-1]}, got {s.dtype}",
              table, source)  # fmt: skip
    try:
        return np.asarray(s.fillna(False), dtype=bool) if s.dtype != bool else s.to_numpy()
    except (TypeError, ValueError):
        _fail(f"the filter must give true or false per {table.what[:-1]}", table, source)


def _evaluate_text(expr: str, table: FieldTable, source: str) -> NDArray[np.bool_]:
    try:
        result = pd.eval(
            expr,
            engine="python",
            parser="pandas",
            resolvers=(_Resolver(table),),
            local_dict={},
            global_dict={},
        )
    except pd.errors.UndefinedVariableError as e:
        m = re.search(r"name '([^']+)'", str(e))
        name = m.group(1) if m else None
        _fail(f"unknown field {name!r} for {table.what}", table, source, name)
    except Exception as e:  # noqa: BLE001 - pandas raises many kinds for a bad expression
        _fail(f"bad filter expression {expr!r}: {str(e).splitlines()[0]}", table, source)
    return _as_mask(result, table, source)


def _evaluate_arrow(expr: Any, table: FieldTable, source: str) -> NDArray[np.bool_]:
    import pyarrow as pa
    import pyarrow.dataset as ds

    names = table.names()
    data = pa.table({k: table.column(k).to_arrow() for k in names})
    try:
        out = ds.dataset(data).to_table(columns={"keep": expr})["keep"]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        m = re.search(r"FieldRef\.Name\(([^)]*)\)", str(e))
        if m:
            _fail(f"unknown field {m.group(1)!r} for {table.what}", table, source, m.group(1))
        _fail(f"bad filter expression {expr}: {str(e).splitlines()[0]}", table, source)
    if not pa.types.is_boolean(out.type):
        _fail(f"the filter must give true or false per row, got {out.type}", table, source)
    return np.asarray(out.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def evaluate(expr: Any, table: FieldTable, *, source: str) -> NDArray[np.bool_]:
    """The rows of ``table`` where ``expr`` (a string or a pyarrow Expression) is true.

    Raises:
        InvalidInputError: not an expression, an unknown field, a bad expression, or one that
            does not give true/false per row.
    """
    if isinstance(expr, str):
        if not expr.strip():
            raise InvalidInputError("the filter expression is empty", source=source)
        return _evaluate_text(expr, table, source)
    if _is_arrow_expression(expr):
        return _evaluate_arrow(expr, table, source)
    raise InvalidInputError(
        f"expected a filter expression (a string or a pyarrow Expression), got "
        f"{type(expr).__name__}",
        source=source,
    )


def examples_page(limit: Any, offset: Any) -> tuple[int, int | None]:
    """``(offset, limit)`` of a page of ``Examples`` records, checked: integers >= 0.

    The page holds the datums ``offset`` to ``offset + limit - 1`` (no ``limit``: all from
    ``offset``). ``limit=0`` gives an empty page (valor-lite reads 0 as "no limit").

    Example:
        >>> examples_page(10, 20)
        (20, 10)
    """
    for name, v, none_ok in (("examples_limit", limit, True), ("examples_offset", offset, False)):
        if v is None and none_ok:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            extra = " or None" if none_ok else ""
            raise InvalidInputError(f"must be an integer >= 0{extra}, got {v!r}", source=name)
    return int(offset), None if limit is None else int(limit)
