"""The columnar form of scores that every metric and reducer computes on.

A :class:`ScoreFrame` holds one float per score (``values``), the sample id and epoch of
each score, a flag for the partial letter ``"P"`` (so ``accuracy(partial_credit=False)``
can count it 0), the raw values (for the ``mode`` and ``max`` reducers), the sample
metadata (as columns or as per-row dicts) and the ids of failed scores (value ``None``),
which are not rows but are counted. It is also a sequence of
:class:`~assay.stats.SampleScore`, so a custom metric can be written either way.

Example:
    >>> frame = ScoreFrame.from_arrays([1.0, 0.0, 1.0], metadata={"topic": ["a", "a", "b"]})
    >>> float(frame.values.mean()), frame.column("topic").tolist()
    (0.6666666666666666, ['a', 'a', 'b'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.stats.frame_build import arrays_columns, object_array, scores_columns
from assay.stats.score import SampleScore, Score
from assay.stats.value_mapping import as_mapping, convert_values

__all__ = ["ScoreFrame"]


def _none() -> None:
    return None


@dataclass(frozen=True, eq=False)
class ScoreFrame(Sequence[SampleScore]):
    """Scores as numpy columns: what metrics and reducers compute on.

    Build one with :meth:`from_arrays` (fast; 1e6 scores) or :meth:`from_scores`
    (from :class:`SampleScore` objects). Rows whose value is ``None`` are not rows of the
    frame: their sample ids are kept in ``failed_ids`` so they can be counted.

    Attributes
    ----------
    values
        float64 ``(n,)``, finite.
    sample_id
        ``(n,)`` sample ids (object or integer array).
    epoch
        int64 ``(n,)``.
    partial
        bool ``(n,)``, True where the raw value was the partial letter ``"P"``.
    raw
        ``(n,)`` object array of the raw scalar values (for mode/max), or None when the
        raw values are the floats themselves.
    failed_ids
        Sample ids of the scores whose value was ``None``.
    metadata_rows, metadata_columns
        The sample metadata as per-row dicts (from objects) or as columns (from arrays).
    scores
        The :class:`Score` objects of the rows, when built from them.

    Examples
    --------
    >>> f = ScoreFrame.from_scores([SampleScore(Score("C"), 1), SampleScore(Score(None), 2)])
    >>> len(f), f.n_none, f.n_samples, f.failed_ids.tolist()
    (1, 1, 1, [2])
    >>> g = ScoreFrame.concat([f, ScoreFrame.from_arrays([0.5], sample_id=[3])])
    >>> g.values.tolist(), g.take([1]).sample_id.tolist(), g.to_scores()[2].sample_id
    ([1.0, 0.5], [3], 2)
    """

    values: np.ndarray
    sample_id: np.ndarray
    epoch: np.ndarray
    partial: np.ndarray
    raw: np.ndarray | None = field(default_factory=_none)  # may be read lazily
    failed_ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    # no class-level defaults below (default_factory), so that a lazy field deleted from
    # the instance falls through to __getattr__
    metadata_rows: np.ndarray | None = field(default_factory=_none)  # per-row dicts
    metadata_columns: Mapping[str, np.ndarray] = field(default_factory=dict)
    scores: np.ndarray | None = field(default_factory=_none)  # Score objects, if built from them
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    # fields read from the source objects on first access (frames a metric call builds)
    _lazy: Mapping[str, Callable[[], Any]] = field(default_factory=dict, repr=False)
    _read_column: Callable[[str], np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in self._lazy:
            object.__delattr__(self, name)

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            lazy = self.__dict__.get("_lazy")
            if not lazy or name not in lazy:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            value = lazy[name]()
            object.__setattr__(self, name, value)
            return value

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(
        cls,
        values: Any,
        *,
        sample_id: Any = None,
        epoch: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> ScoreFrame:
        """A frame from numeric arrays (no per-score Python objects).

        Parameters
        ----------
        values
            Numbers, one per score; NaN is rejected (use ``from_scores`` with ``None``
            values to record failed samples).
        sample_id
            One id per score (default: ``0..n-1``, every score its own sample).
        epoch
            One epoch number per score (default 1).
        metadata
            Sample metadata as columns ``{key: array of length n}``.

        Raises
        ------
        InvalidInputError
            A non-finite value or a column of another length, naming it.

        Examples
        --------
        >>> ScoreFrame.from_arrays([1, 0], sample_id=["a", "a"], epoch=[1, 2]).n_samples
        1
        """
        return cls(**arrays_columns(values, sample_id, epoch, metadata))

    @classmethod
    def from_scores(
        cls,
        scores: Sequence[Any],
        *,
        key: str | None = None,
        partial: float = 0.5,
        to_float: Any = None,
    ) -> ScoreFrame:
        """A frame from :class:`SampleScore` objects, for one value key.

        Parameters
        ----------
        scores
            The sample scores: assay's :class:`SampleScore` or :class:`Score` objects, or
            Inspect AI's (read attribute by attribute, one pass each; Inspect's have no
            epoch: 1).
        key
            For dict-valued scores the key to take, for list-valued scores the index (a
            score lacking it, or whose value there is ``None``, counts as failed for that
            key).
        partial
            Credit for the ``"P"`` letter.
        to_float
            A :class:`~assay.stats.ValueMapping` (or the dict of its fields): custom
            sentinels for correct/incorrect/partial/no answer.

        Raises
        ------
        InvalidInputError
            A value that cannot be converted, naming the sample.

        Examples
        --------
        >>> s = [SampleScore(Score({"em": "C"}), "a"), SampleScore(Score({"em": "P"}), "b")]
        >>> ScoreFrame.from_scores(s, key="em").values.tolist()
        [1.0, 0.5]
        """
        return cls(**scores_columns(scores, key, partial, to_float))

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return int(self.values.shape[0])

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return self.take(np.arange(len(self))[i])
        i = int(i)
        score = self.scores[i] if self.scores is not None else Score(self.values[i].item())
        return SampleScore(
            score=score,
            sample_id=_py(self.sample_id[i]),
            epoch=int(self.epoch[i]),
            sample_metadata=self._row_metadata(i),
        )

    def __iter__(self) -> Iterator[SampleScore]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"ScoreFrame({len(self)} scores, {self.n_none} None)"

    def to_scores(self) -> list[SampleScore]:
        """The rows as :class:`SampleScore` objects, plus one ``Score(None)`` per failed score."""
        return [*self, *(SampleScore(Score(None), sample_id=_py(x)) for x in self.failed_ids)]

    @property
    def n_none(self) -> int:
        """How many scores had value ``None`` (failed) and are not rows of the frame."""
        return int(self.failed_ids.shape[0])

    @property
    def n_samples(self) -> int:
        """Distinct sample ids among the rows."""
        return len(pd.unique(self.sample_id)) if len(self) else 0

    def _row_metadata(self, i: int) -> dict[str, Any] | None:
        if self.metadata_rows is not None:
            return self.metadata_rows[i]
        if self.metadata_columns:
            return {k: _py(c[i]) for k, c in self.metadata_columns.items()}
        return None

    def column(self, key: str) -> np.ndarray:
        """The sample-metadata value ``key`` of every row, as an array.

        Raises:
            InvalidInputError: a sample lacks the key (or has ``None`` there), naming it.
        """
        if key not in self._cache:
            self._cache[key] = self._column(key)
        return self._cache[key]

    def _column(self, key: str) -> np.ndarray:
        if key in self.metadata_columns:
            col = self.metadata_columns[key]
        elif "metadata_rows" not in self.__dict__ and self._read_column is not None:
            try:  # the rows are not read yet: read this field alone from the objects
                col = self._read_column(key)
            except (KeyError, TypeError, AttributeError):  # a sample without it: say which
                col = self._column_from_rows(key)
        elif self.metadata_rows is not None:
            col = self._column_from_rows(key)
        elif len(self) == 0:
            col = np.empty(0, dtype=object)
        else:
            raise _missing_key(self.sample_id[0], key)
        missing = _missing(col)
        if missing is not None:
            raise _missing_key(self.sample_id[missing], key)
        return col

    def _column_from_rows(self, key: str) -> np.ndarray:
        rows = self.metadata_rows
        assert rows is not None
        try:
            return object_array(map(itemgetter(key), rows), len(rows))
        except (KeyError, TypeError):
            return object_array([md.get(key) if md is not None else None for md in rows])

    def remap(self, to_float: Any, partial: float = 0.5) -> ScoreFrame:
        """The frame with its raw values converted by ``to_float`` (a
        :class:`~assay.stats.ValueMapping` or its dict); itself when ``to_float`` is None
        or the frame has no raw values (built from numbers).

        Example:
            >>> f = ScoreFrame.from_scores([SampleScore(Score(v), i) for i, v in enumerate("CP")])
            >>> f.remap({"P": 0.0}).values.tolist(), f.values.tolist()
            ([1.0, 0.0], [1.0, 0.5])
        """
        mapping = as_mapping(to_float)
        if mapping is None or self.raw is None:
            return self
        ids = [_py(x) for x in self.sample_id]
        values, part = convert_values(self.raw, ids, partial, mapping)
        return dataclasses.replace(self, values=values, partial=part, _cache={})

    def values_for(self, *, partial_credit: bool = True) -> np.ndarray:
        """The float values, with the ``"P"`` letter worth 0 when ``partial_credit`` is False."""
        if partial_credit or not self.partial.any():
            return self.values
        return np.where(self.partial, 0.0, self.values)

    def take(self, idx: np.ndarray) -> ScoreFrame:
        """The frame restricted to rows ``idx`` (integer indices or a boolean mask)."""
        idx = np.asarray(idx)
        return ScoreFrame(
            values=self.values[idx],
            sample_id=self.sample_id[idx],
            epoch=self.epoch[idx],
            partial=self.partial[idx],
            raw=None if self.raw is None else self.raw[idx],
            failed_ids=self.failed_ids[:0],
            metadata_rows=None if self.metadata_rows is None else self.metadata_rows[idx],
            metadata_columns={k: c[idx] for k, c in self.metadata_columns.items()},
            scores=None if self.scores is None else self.scores[idx],
        )

    @staticmethod
    def concat(frames: Sequence[ScoreFrame]) -> ScoreFrame:
        """Rows of several frames, in order (they must carry the same kind of metadata)."""
        if len(frames) == 1:
            return frames[0]
        if not frames:
            return ScoreFrame.from_arrays([])

        rows, cols = _concat_metadata(frames)
        return ScoreFrame(
            values=np.concatenate([f.values for f in frames]),
            sample_id=_concat_ids([f.sample_id for f in frames]),
            epoch=np.concatenate([f.epoch for f in frames]),
            partial=np.concatenate([f.partial for f in frames]),
            raw=_concat_optional(frames, "raw"),
            failed_ids=_concat_ids([f.failed_ids for f in frames]),
            metadata_rows=rows,
            metadata_columns=cols,
            scores=_concat_optional(frames, "scores"),
        )


def _concat_ids(parts: list[np.ndarray]) -> np.ndarray:
    """Ids of several frames: their own dtype when they share one, else objects (so ints
    and strings are not turned into strings)."""
    if len({p.dtype for p in parts}) == 1:
        return np.concatenate(parts)
    return np.concatenate([p.astype(object) for p in parts])


def _concat_optional(frames: Sequence[ScoreFrame], attr: str) -> np.ndarray | None:
    """An optional column over several frames: None if no frame has it, else every
    frame's (filled in where a frame lacks it)."""
    parts = [getattr(f, attr) for f in frames]
    if all(p is None for p in parts):
        return None
    return np.concatenate([p if p is not None else _fill(f, attr) for f, p in zip(frames, parts)])


def _concat_metadata(
    frames: Sequence[ScoreFrame],
) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """Metadata of several frames: columns when every frame has the same columns and no
    per-row dicts, per-row dicts otherwise."""
    keys = set(frames[0].metadata_columns)
    same_columns = all(set(f.metadata_columns) == keys for f in frames)
    if same_columns and all(f.metadata_rows is None for f in frames):
        return None, {k: np.concatenate([f.metadata_columns[k] for f in frames]) for k in keys}
    return np.concatenate([_metadata_rows(f) for f in frames]), {}


def _fill(frame: ScoreFrame, attr: str) -> np.ndarray:
    if attr == "raw":
        return frame.values.astype(object)
    if attr == "scores":
        return object_array([Score(v) for v in frame.values.tolist()])
    return _metadata_rows(frame)


def _metadata_rows(frame: ScoreFrame) -> np.ndarray:
    if frame.metadata_rows is not None:
        return frame.metadata_rows
    return object_array([frame._row_metadata(i) for i in range(len(frame))])


def _missing(col: np.ndarray) -> int | None:
    """The first row whose value is missing (None or NaN), or None. Columns of Python ints
    or strings (the usual cluster and group keys) are checked by type, not value by value."""
    if col.dtype == object and len(col) and set(map(type, col)) <= {int, str}:
        return None
    missing = pd.isna(col)
    return int(np.flatnonzero(missing)[0]) if missing.any() else None


def _missing_key(sample_id: Any, key: str) -> InvalidInputError:
    return InvalidInputError(
        f"sample metadata has no value for {key!r} (every sample needs one to group or "
        "cluster by it)",
        record=f"sample {_py(sample_id)!r}",
        field=key,
    )


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
