"""Slices, one spelling for every domain: the headline records again per subgroup.

``by=["site"]`` computes a domain's headline metrics on every subgroup of a unit-level
column (a datum's metadata field in classification, an image's in detection), from the
evaluator's own state. A slice record carries the metric's parameters, then
``slice_column``, ``slice`` (the value as text), ``slice_n`` (the units in the slice), ``n``
and ``gap`` (its value minus the whole set's; ``None`` when either is undefined), and, where
computed, ``gap_ci_low`` / ``gap_ci_high``. An undefined slice record keeps ``undefined``
last.

Units without a value in the column (missing metadata, an empty cell) are a slice of their
own, ``slice: null``, counted like any other and listed after the values (:func:`slice_order`
puts it last wherever slices are sorted).

``n`` means on a slice record what it means on the whole-set record: a record that has its
own ``n`` (a rate's denominator, the values behind a mean) keeps it, computed on the slice;
a record without one gets the slice's units there, as ``slice_n``.

Example:
    >>> from assay.results import Metric
    >>> whole = [Metric("AP", 0.5, {"label_value": "cat"})]
    >>> part = [Metric("AP", 0.75, {"label_value": "cat"})]
    >>> annotate(part, whole, column="site", value="x", n=3, where=("label_value",))[0].parameters
    {'label_value': 'cat', 'slice_column': 'site', 'slice': 'x', 'slice_n': 3, 'n': 3, 'gap': 0.25}
    >>> rate = [Metric("Recall", 0.5, {"n": 2})]
    >>> annotate(rate, [Metric("Recall", 0.6, {"n": 5})], column="site", value="x", n=3,
    ...          where=())[0].parameters["n"]
    2
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.results import Metric

__all__ = [
    "annotate",
    "text_slices",
    "check_by",
    "record_key",
    "slice_masks",
    "slice_order",
    "slice_records",
    "slice_text",
    "value_masks",
]


def check_by(by: Any) -> tuple[str, ...]:
    """``by`` as a tuple of distinct column names (a string alone is refused: ``["site"]``).

    Example:
        >>> check_by(["site", "cam", "site"])
        ('site', 'cam')
    """
    if isinstance(by, str) or not all(isinstance(c, str) for c in by):
        raise InvalidInputError(f"must be a list of column names, got {by!r}", source="by")
    return tuple(dict.fromkeys(by))


def slice_text(v: Any) -> str:
    """A slice value as text: ``3`` for 3.0, ``"x"`` for "x"."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v.item() if isinstance(v, np.generic) else v)


def slice_order(value: str | None) -> tuple[bool, str]:
    """The sort key of a slice value: the values in text order, the missing one (``None``)
    last.

    Example:
        >>> sorted(["b", None, "a"], key=slice_order)
        ['a', 'b', None]
    """
    return (value is None, "" if value is None else value)


def text_slices(values: np.ndarray) -> list[str]:
    """The slices of a column held as text, ``""`` for a unit without a value: the values
    in text order, then ``""`` when some unit has none (the slice ``null``: annotate it with
    ``value=name or None``).

    Example:
        >>> text_slices(np.array(["b", "", "a", "b"]))
        ['a', 'b', '']
    """
    seen = set(np.asarray(values).tolist())
    return sorted(seen - {""}) + ([""] if "" in seen else [])


def slice_masks(metadata: Any, column: str, what: str) -> Iterator[tuple[str | None, np.ndarray]]:
    """``(value, mask)`` for every value of a :class:`~assay.io.metadata.Metadata` field, in
    sorted order, then ``(None, mask)`` of the units without the field when there are any."""
    if metadata is None or column not in metadata.values:
        raise InvalidInputError(
            f"is not a metadata field of the {what} (give it as metadata)",
            source="by",
            field=column,
        )
    yield from value_masks(metadata.values[column], metadata.present[column])


def value_masks(values: Any, present: Any) -> Iterator[tuple[str | None, np.ndarray]]:
    """``(value, mask)`` for every value (as text, sorted) of a column's ``values`` where
    ``present``, then ``(None, mask)`` of the units not present when there are any: the
    slices of a column.

    Example:
        >>> [(v, m.tolist()) for v, m in value_masks(np.array([1.0, 2.0, 1.0]), [1, 1, 0])]
        [('1', [True, False, False]), ('2', [False, True, False]), (None, [False, False, True])]
    """
    ok = np.asarray(present, dtype=bool)
    text = np.array([slice_text(v) for v in np.asarray(values).tolist()], dtype=object)
    for v in sorted(set(text[ok].tolist())):
        yield v, ok & (text == v)
    if not ok.all():
        yield None, ~ok


def _hashable(v: Any) -> Any:
    return tuple(_hashable(x) for x in v) if isinstance(v, (list, tuple)) else v


def record_key(m: Metric, where: Sequence[str]) -> tuple[Any, ...]:
    """What identifies a record among its slice's: its type and its ``where`` parameters
    (lists as tuples, so crossed groups can be keys)."""
    return (m.type, *(_hashable(m.parameters.get(k)) for k in where))


def annotate(
    records: Sequence[Metric],
    whole: Sequence[Metric],
    *,
    column: str,
    value: str | None,
    n: int,
    where: Sequence[str],
    gap_ci: dict[tuple[Any, ...], tuple[float, float]] | None = None,
) -> list[Metric]:
    """``records`` of one slice with the slice parameters; the gap is taken to the record of
    ``whole`` with the same type and ``where`` parameters (``gap_ci`` keyed the same way)."""
    base = {record_key(m, where): m.value for m in whole}
    out = []
    for m in records:
        ref = base.get(record_key(m, where))
        gap = None if m.value is None or ref is None else float(m.value - ref)
        own = m.parameters.get("n", n)  # the record's own n, or the slice's units
        extra: dict[str, Any] = {"slice_column": column, "slice": value, "slice_n": n}
        extra |= {"n": own, "gap": gap}
        lohi = None if gap_ci is None else gap_ci.get(record_key(m, where))
        if gap is not None and lohi is not None:
            ok = all(np.isfinite(lohi))
            extra["gap_ci_low"], extra["gap_ci_high"] = lohi if ok else (None, None)
        params = {k: x for k, x in m.parameters.items() if k != "undefined"} | extra
        if m.value is None:
            params["undefined"] = m.parameters.get("undefined")
        out.append(Metric(m.type, m.value, params))
    return out


def slice_records(
    whole: Sequence[Metric],
    masks: Iterable[tuple[str | None, np.ndarray]],
    *,
    column: str,
    where: Sequence[str],
    records: Callable[[np.ndarray], Sequence[Metric]],
    gaps: Callable[[np.ndarray], Mapping[tuple[Any, ...], tuple[float, float]]] | None = None,
    size: Callable[[np.ndarray], int] | None = None,
) -> list[Metric]:
    """The records of every slice (``masks``: value and unit mask, from :func:`slice_masks`
    or :func:`value_masks`): ``records(mask)`` is the evaluator on the slice's units alone
    (intervals included), ``gaps(mask)`` the gaps' intervals keyed as :func:`record_key`
    (:func:`assay.uncertainty.intervals.gap_bounds` of the domain's gap tallies), ``size``
    the slice's units (default the mask's count).

    Example:
        >>> whole = [Metric("Accuracy", 0.5, {})]
        >>> part = lambda keep: [Metric("Accuracy", float(keep.mean()), {})]
        >>> masks = value_masks(np.array(["a", "b", "b"]), [1, 1, 1])
        >>> [round(m.parameters["gap"], 4) for m in slice_records(
        ...     whole, masks, column="c", where=(), records=part)]
        [-0.1667, 0.1667]
    """
    out: list[Metric] = []
    for v, keep in masks:
        found = None if gaps is None else dict(gaps(keep))
        n = int(np.count_nonzero(keep)) if size is None else size(keep)
        recs = records(keep)
        out += annotate(recs, whole, column=column, value=v, n=n, where=where, gap_ci=found)
    return out
