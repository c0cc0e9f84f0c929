"""Filter expressions over datums and annotations, and pages of examples (both domains).

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
    >>> from assay.io.metadata import metadata_from_records
    >>> md = metadata_from_records([{"split": "val"}, {"split": "train", "w": 2}, None],
    ...                            source="gts")
    >>> table = FieldTable(3, {"uid": lambda: Column(np.array(["a", "b", "c"]))}, md, "datums")
    >>> evaluate('split == "val" or w >= 2', table, source="datums").tolist()
    [True, True, False]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.io.metadata import Metadata

__all__ = [
    "Column",
    "FieldTable",
    "datum_mask",
    "evaluate",
    "examples_page",
    "is_expression",
    "label_mask",
    "uid_column",
]


@dataclass(frozen=True)
class Column:
    """One field of a :class:`FieldTable`: values, or codes into distinct ``categories``."""

    values: NDArray[Any]
    present: NDArray[np.bool_] | None = None
    categories: Sequence[Any] | NDArray[Any] | None = None

    def to_pandas(self) -> Any:
        import pandas as pd

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
        # a name that is not an identifier is written in backticks: `my field`
        self.alias = {_clean(k): k for k in self.known}
        self.cache: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        name = self.alias.get(name, name)
        if name not in self.cache:
            self.cache[name] = self.table.column(name).to_pandas()
        return self.cache[name]

    def __iter__(self) -> Any:
        return iter(self.alias)

    def __len__(self) -> int:
        return len(self.alias)

    def __contains__(self, name: object) -> bool:
        return name in self.alias or name in self.known

    def keys(self) -> Any:
        return list(self.alias)


def _clean(name: str) -> str:
    """The name pandas gives a backtick-quoted field inside an expression."""
    try:
        from pandas.core.computation.parsing import clean_column_name
    except ImportError:  # pragma: no cover - an older or newer pandas: plain names only
        return name
    return str(clean_column_name(name))


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
    import pandas as pd

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
    import pandas as pd  # only for the string form: detection reads and computes without it

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


def uid_column(uids: Sequence[Any]) -> NDArray[Any]:
    """Datum uids as a filter column: integers and text as they are, anything else as text."""
    u = np.asarray(uids)
    return u if u.dtype.kind in "iuU" else np.asarray([str(x) for x in uids])


def datum_mask(uids: Sequence[Any], metadata: Metadata | None, datums: Any) -> NDArray[np.bool_]:
    """The datums kept by ``datums``: None (all), a list of uids, or an expression over
    ``uid`` (``datum_uid``) and the datums' metadata.

    Example:
        >>> datum_mask(["a", "b", "c"], None, ["c", "a"]).tolist()
        [True, False, True]
        >>> datum_mask(["a", "b"], None, 'uid != "a"').tolist()
        [False, True]
    """
    n = len(uids)
    if datums is None:
        return np.ones(n, dtype=bool)
    if is_expression(datums):
        uid = Column(uid_column(uids))
        table = FieldTable(n, {"uid": lambda: uid, "datum_uid": lambda: uid}, metadata, "datums")
        return evaluate(datums, table, source="datums")
    if isinstance(datums, (str, bytes)) or not hasattr(datums, "__iter__"):
        raise InvalidInputError("must be a list of uids or an expression", source="datums")
    datums = list(datums)
    known = set(uids)
    missing = [u for u in datums if u not in known]
    if missing:
        raise InvalidInputError(f"unknown datum uid {missing[0]!r}", source="datums")
    wanted = set(datums)
    return np.array([u in wanted for u in uids], dtype=bool)


def label_mask(
    labels: Sequence[tuple[str, str]], wanted: Sequence[Any] | None
) -> NDArray[np.bool_]:
    """The ``(key, value)`` labels kept by ``wanted``: None (all), or a list of values (under
    any key) and ``(key, value)`` pairs.

    Example:
        >>> label_mask([("class", "cat"), ("class", "dog"), ("size", "cat")], ["cat"]).tolist()
        [True, False, True]
        >>> label_mask([("class", "cat"), ("size", "cat")], [("size", "cat")]).tolist()
        [False, True]
    """
    if wanted is None:
        return np.ones(len(labels), dtype=bool)
    if isinstance(wanted, (str, bytes)):
        raise InvalidInputError("must be a list of labels, not one string", source="labels")
    keep = np.zeros(len(labels), dtype=bool)
    for want in wanted:
        hit = [
            i
            for i, (k, v) in enumerate(labels)
            if (tuple(want) == (k, v) if isinstance(want, (tuple, list)) else str(want) == v)
        ]
        if not hit:
            raise InvalidInputError(f"unknown label {want!r}", source="labels")
        keep[hit] = True
    return keep


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
