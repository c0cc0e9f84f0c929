"""The columns of a :class:`~assay.stats.ScoreFrame`, from arrays or from score objects.

:func:`arrays_columns` checks numeric arrays (finite values; sample ids, epochs and
metadata columns of the same length; default ids ``0..n-1`` and epoch 1).
:func:`scores_columns` converts :class:`~assay.stats.SampleScore` objects: each raw value
(or its ``key`` item) becomes a float through the value mapping, a ``None`` value makes
the score a failed one (its id kept apart, not a row), and a score without a sample id is
a sample of its own.

Example:
    >>> arrays_columns([1, 0], None, None, None)["sample_id"].tolist()
    [0, 1]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import Any, cast

import numpy as np

from assay._validation import as_1d, check_finite, check_same_length
from assay.errors import InvalidInputError
from assay.stats.score import SampleScore, Score, _item, _rec, value_to_float
from assay.stats.value_mapping import as_mapping, convert_values, is_partial

__all__ = ["arrays_columns", "object_array", "score_kind", "scores_columns"]


def object_array(items: Iterable[Any], n: int | None = None) -> np.ndarray:
    """``items`` (``n`` of them, default ``len(items)``) as a 1-d object array; a list or
    tuple item stays one element. Built with ``np.fromiter``, which stores the references
    as they are: slice assignment asks every item for an array interface, which costs a
    microsecond per pydantic object."""
    count = len(items) if n is None else n  # type: ignore[arg-type]
    return np.fromiter(items, dtype=object, count=count)


def arrays_columns(
    values: Any, sample_id: Any, epoch: Any, metadata: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The frame's fields from numeric arrays (see :meth:`ScoreFrame.from_arrays`)."""
    v = check_finite(as_1d(values, source="values", dtype=np.float64), source="values")
    n = v.shape[0]
    sid = np.arange(n) if sample_id is None else as_1d(sample_id, source="sample_id")
    ep = (
        np.ones(n, dtype=np.int64)
        if epoch is None
        else as_1d(epoch, source="epoch", dtype=np.int64)
    )
    cols = {str(k): as_1d(col, source=f"metadata[{k!r}]") for k, col in (metadata or {}).items()}
    check_same_length(
        values=v, sample_id=sid, epoch=ep, **{f"metadata[{k!r}]": c for k, c in cols.items()}
    )
    return dict(
        values=v,
        sample_id=sid,
        epoch=ep,
        partial=np.zeros(n, dtype=bool),
        metadata_columns=cols,
    )


def _samples(items: Sequence[Any]) -> dict[type, Any]:
    """One item of each type among ``items``, so that shapes are checked per type."""
    types = set(map(type, items))
    first = items[0] if items else None
    return {t: first if type(first) is t else next(x for x in items if type(x) is t)
            for t in types}  # fmt: skip


def score_kind(items: Sequence[Any]) -> str | None:
    """``"sample"`` when the items are sample scores (assay's :class:`SampleScore`, or an
    object of its shape such as Inspect AI's pydantic ``SampleScore``: ``score`` with a
    ``value``, ``sample_id``, ``sample_metadata``); ``"bare"`` when they are scores
    (assay's :class:`Score`, or Inspect AI's: ``value`` and ``answer``); else None. The
    first item decides; reading the others refuses one of another shape.

    Example:
        >>> score_kind([SampleScore(Score(1))]), score_kind([Score(1)]), score_kind([1])
        ('sample', 'bare', None)
    """
    if not items:
        return None
    x = items[0]
    if type(x) is SampleScore or (hasattr(x, "score") and hasattr(x, "sample_id")):
        return "sample"
    if type(x) is Score or (hasattr(x, "value") and hasattr(x, "answer")):
        return "bare"
    return None


def _read(getter: Callable[[Any], Any], scores: Sequence[Any], n: int) -> np.ndarray:
    """``getter`` of every item, as an object array; an item without the attribute is
    refused, naming it."""
    try:
        return object_array(map(getter, scores), n)
    except AttributeError:
        bad = next(i for i, x in enumerate(scores) if not _has(getter, x))
        raise InvalidInputError(
            f"expected an object like item 0 (a SampleScore or a Score), got {scores[bad]!r}",
            source="scores",
            record=f"item {bad}",
        ) from None


def _has(getter: Callable[[Any], Any], x: Any) -> bool:
    try:
        getter(x)
    except AttributeError:
        return False
    return True


_SCORE, _VALUE, _SCORE_VALUE = attrgetter("score"), attrgetter("value"), attrgetter("score.value")
_ID, _META, _EPOCH = attrgetter("sample_id"), attrgetter("sample_metadata"), attrgetter("epoch")


def _ids_array(ids: list[Any]) -> np.ndarray | None:
    """Sample ids as an array: int64 when they are all Python ints (the fast case), else
    objects; None when every id is None."""
    types = set(map(type, ids))
    if types == {int}:
        return np.fromiter(ids, dtype=np.int64, count=len(ids))
    if types == {type(None)}:
        return None
    # a score without an id is a sample of its own
    return object_array([x if x is not None else ("row", i) for i, x in enumerate(ids)])


def _epochs(scores: Sequence[Any], n: int) -> np.ndarray:
    """Epoch of each sample score (1 for objects without one, such as Inspect's)."""
    has = [hasattr(x, "epoch") for x in _samples(scores).values()]
    if not any(has):
        return np.ones(n, dtype=np.int64)
    it = map(_EPOCH, scores) if all(has) else (getattr(x, "epoch", 1) for x in scores)
    return np.fromiter(it, dtype=np.int64, count=n)


def scores_columns(
    scores: Sequence[Any],
    key: str | None,
    partial: float,
    to_float: Any,
    kind: str | None = None,
    *,
    lazy: bool = False,
) -> dict[str, Any]:
    """The frame's fields from score objects (see :meth:`ScoreFrame.from_scores`): one pass
    of attribute reads per field, the rest vectorised. ``scores`` are sample scores or bare
    scores (``kind``, see :func:`score_kind`; bare scores get ids ``0..n-1``).

    ``lazy``: the sample ids, epochs, metadata and score objects are read from ``scores``
    only when the frame is asked for them (a metric called on a list of objects, which
    reads ``scores`` at once and then drops the frame): a clustered stderr reads only the
    values and its cluster column."""
    n = len(scores)
    kind = kind or score_kind(scores) or ("sample" if n == 0 else None)
    if kind is None:
        raise InvalidInputError(
            f"expected SampleScore or Score objects, got {scores[0]!r}",
            source="scores",
            record="item 0",
        )
    bare = kind == "bare"
    getter = _VALUE if bare else _SCORE_VALUE
    if lazy and key is None:
        quick = _one_pass(getter, scores, n, partial, to_float)
        if quick is not None:
            return _lazy_columns(quick, scores, n, bare, getter)
    raw_all = _read(getter, scores, n)
    if key is not None:
        raw_all = object_array(_key_items(raw_all, scores, key, bare), n)
    ok = np.not_equal(raw_all, cast(Any, None))  # elementwise: the failed scores
    every = bool(ok.all())

    def rows(arr: np.ndarray) -> np.ndarray:
        return arr if every else arr[ok]

    @functools.cache
    def all_ids() -> np.ndarray:
        ids = None if bare else _ids_array(list(map(_ID, scores)))
        return np.arange(n) if ids is None else ids

    loaders = {
        "sample_id": lambda: rows(all_ids()),
        "epoch": lambda: rows(np.ones(n, dtype=np.int64) if bare else _epochs(scores, n)),
        "metadata_rows": lambda: rows(
            np.full(n, None, dtype=object) if bare else _read(_META, scores, n)
        ),
        "scores": lambda: rows(object_array(scores, n) if bare else _read(_SCORE, scores, n)),
    }
    raw_arr = rows(raw_all)
    floats, part = convert_values(
        raw_arr, _LazyIds(loaders["sample_id"]), partial, as_mapping(to_float)
    )
    out: dict[str, Any] = dict(
        values=floats,
        partial=part,
        raw=raw_arr,
        failed_ids=np.empty(0, dtype=np.int64) if every else all_ids()[~ok],
    )
    if not lazy:
        return {**out, **{k: load() for k, load in loaders.items()}}

    def read_column(key: str) -> np.ndarray:  # one metadata field, straight from the objects
        return rows(object_array(map(itemgetter(key), map(_META, scores)), n))

    reader = None if bare else read_column
    return {**out, **dict.fromkeys(loaders), "_lazy": loaders, "_read_column": reader}


class _TooMany(Exception):
    """More distinct raw values than the one-pass read converts through a table."""


class _Table(dict[Any, float]):
    """Raw value -> float, each distinct value converted once on first sight."""

    def __init__(self, convert: Callable[[Any], float]) -> None:
        super().__init__()
        self.convert = convert

    def __missing__(self, value: Any) -> float:
        if value is None or len(self) >= _FEW_VALUES:
            raise _TooMany  # a failed score, or continuous values: the general path
        out = self[value] = self.convert(value)
        return out


_FEW_VALUES = 256


def _one_pass(
    getter: Callable[[Any], Any], scores: Sequence[Any], n: int, partial: float, to_float: Any
) -> np.ndarray | None:
    """The floats of ``scores`` read and converted in one pass, when every score has a value,
    they take at most ``_FEW_VALUES`` distinct hashable values, none of them the partial
    letter, and every one converts (C/I letters, 0/1, a small scale: the usual case, read
    as fast as a loop over the objects); else None, and the general path (which names a
    failing record) runs instead. Values equal as Python keys (``1``, ``1.0``, ``True``)
    share one conversion, as ``pandas.factorize`` groups them there."""
    mapping = as_mapping(to_float)
    if mapping is not None and mapping.is_default:
        mapping = None
    convert = functools.partial(value_to_float if mapping is None else mapping, partial=partial)
    table = _Table(convert)
    try:
        floats = np.fromiter(map(table.__getitem__, map(getter, scores)), np.float64, n)
    except (_TooMany, TypeError, AttributeError, InvalidInputError):
        return None
    if any(is_partial(v, mapping) for v in table):
        return None
    return floats


def _lazy_columns(
    floats: np.ndarray, scores: Sequence[Any], n: int, bare: bool, getter: Callable[[Any], Any]
) -> dict[str, Any]:
    """A lazy frame's fields when every score converted in :func:`_one_pass`: the raw
    values, ids, epochs, metadata and score objects are read from ``scores`` on demand."""

    @functools.cache
    def all_ids() -> np.ndarray:
        ids = None if bare else _ids_array(list(map(_ID, scores)))
        return np.arange(n) if ids is None else ids

    loaders = {
        "raw": lambda: _read(getter, scores, n),
        "sample_id": all_ids,
        "epoch": lambda: np.ones(n, dtype=np.int64) if bare else _epochs(scores, n),
        "metadata_rows": lambda: (
            np.full(n, None, dtype=object) if bare else _read(_META, scores, n)
        ),
        "scores": lambda: object_array(scores, n) if bare else _read(_SCORE, scores, n),
    }

    def read_column(key: str) -> np.ndarray:  # one metadata field, straight from the objects
        return object_array(map(itemgetter(key), map(_META, scores)), n)

    return {
        "values": floats,
        "partial": np.zeros(n, dtype=bool),
        "failed_ids": np.empty(0, dtype=np.int64),
        **dict.fromkeys(loaders),
        "_lazy": loaders,
        "_read_column": None if bare else read_column,
    }


def _key_items(raws: np.ndarray, scores: Sequence[Any], key: str, bare: bool) -> list[Any]:
    """Item ``key`` of every dict or list value (None where absent)."""
    for i, v in enumerate(raws):
        if not isinstance(v, (Mapping, list, tuple)) and v is not None:
            raise InvalidInputError(
                f"score value {v!r} is not a dict or list, but other scores are",
                record=_rec(i if bare else scores[i].sample_id),
                field="value",
            )
    return [_item(v, key) for v in raws]


class _LazyIds(Sequence[Any]):
    """Sample ids read only for an error message (reading 1e6 ids costs)."""

    def __init__(self, load: Callable[[], np.ndarray]) -> None:
        self.load = load

    def __len__(self) -> int:
        return len(self.load())

    def __getitem__(self, i: Any) -> Any:
        x = self.load()[i]
        return x.item() if isinstance(x, np.generic) else x
