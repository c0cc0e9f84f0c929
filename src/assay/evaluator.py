"""The evaluator contract: one shape for every domain.

Every accumulating evaluator in assay (classification, fairness, detection, segmentation,
scoring, score statistics, text, and every LLM evaluation) derives from :class:`Evaluator`
and behaves the same way:

``add(batch) -> self``
    Validate a batch and fold it into the running state. A bad batch raises
    :class:`~assay.errors.InvalidInputError` and leaves the state as it was.
``merge(other) -> self``
    Fold another evaluator's state into this one, in place. Refuses (``InvalidInputError``)
    an evaluator of another class or one configured differently (``config()`` differs).
``compute() -> MetricSet``
    The metric records. An evaluator to which nothing was added refuses with
    ``InvalidInputError("no data was added ...")`` instead of returning nothing.
``state() -> dict[str, numpy.ndarray]`` and ``from_state(state)``
    The whole evaluator as plain numpy arrays (the configuration travels as a 0-d string
    array under ``"config"``), so it can be shipped between processes (``numpy.savez``,
    pickle, Dask) and rebuilt exactly: ``type(ev).from_state(ev.state())`` computes the
    same records as ``ev``.

Richer outputs (RSMTool tables, COCO arrays) are named views derived from the records or
the evaluator, never a different return type of ``compute()``. Each domain also offers a
one-call ``evaluate_<domain>(...) -> MetricSet``.

A subclass implements :meth:`config`, :meth:`add`, :meth:`_merge`, :meth:`_compute`,
:meth:`_state`, :meth:`_load_state` and :attr:`is_empty`; the base class does the
checks.

Example:
    >>> import numpy as np
    >>> from assay.results import Metric, MetricSet
    >>> class Mean(Evaluator):
    ...     '''Mean of the values added (a toy evaluator).'''
    ...     def __init__(self, *, scale: float = 1.0) -> None:
    ...         self.scale, self._sum, self._n = scale, 0.0, 0
    ...     def config(self):
    ...         return {"scale": self.scale}
    ...     def add(self, values):
    ...         a = np.asarray(values, dtype=float)
    ...         self._sum, self._n = self._sum + a.sum(), self._n + a.size
    ...         return self
    ...     @property
    ...     def is_empty(self):
    ...         return self._n == 0
    ...     def _merge(self, other):
    ...         self._sum, self._n = self._sum + other._sum, self._n + other._n
    ...     def _compute(self):
    ...         return MetricSet([Metric("Mean", float(self.scale * self._sum / self._n))])
    ...     def _state(self):
    ...         return {"sum": np.array(self._sum), "n": np.array(self._n)}
    ...     def _load_state(self, state):
    ...         self._sum, self._n = float(state["sum"]), int(state["n"])
    >>> a, b = Mean().add([1, 2]), Mean().add([3])
    >>> a.merge(b).compute()[0].value
    2.0
    >>> Mean.from_state(a.state()).compute()[0].value
    2.0
    >>> Mean(scale=2.0).merge(Mean())
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: Mean.merge: cannot merge evaluators configured differently: ...
    >>> Mean().compute()
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: Mean.compute: no data was added; call add() first
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Self

import numpy as np

from assay.errors import InvalidInputError
from assay.results import MetricSet, to_jsonable

__all__ = ["Evaluator"]


class Evaluator(ABC):
    """Base class of every accumulating evaluator (see the module docstring)."""

    # ------------------------------------------------------------ what a subclass writes

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The configuration as JSON-serialisable keyword arguments of ``__init__``.

        Two evaluators merge only when their configurations are equal, and
        :meth:`from_state` rebuilds an evaluator with ``cls(**config)``.
        """

    @abstractmethod
    def add(self, *args: Any, **kwargs: Any) -> Self:
        """Validate one batch and fold it into the state; returns ``self``."""

    @property
    @abstractmethod
    def is_empty(self) -> bool:
        """True while no data has been added (or merged in)."""

    @abstractmethod
    def _merge(self, other: Self) -> None:
        """Fold ``other``'s state into ``self`` (configurations already checked equal)."""

    @abstractmethod
    def _compute(self) -> MetricSet:
        """The records, on a non-empty evaluator."""

    @abstractmethod
    def _state(self) -> dict[str, np.ndarray]:
        """The accumulated state as plain numpy arrays (no ``"config"`` key)."""

    @abstractmethod
    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Restore what :meth:`_state` returned into a freshly configured evaluator."""

    # ------------------------------------------------------------ the contract

    def merge(self, other: Self) -> Self:
        """Fold ``other`` into this evaluator, in place; returns ``self``.

        Raises:
            InvalidInputError: ``other`` is of another class or configured differently.
        """
        name = type(self).__name__
        if type(other) is not type(self):
            raise InvalidInputError(
                f"cannot merge a {type(other).__name__} into a {name}", source=f"{name}.merge"
            )
        mine, theirs = _canonical(self.config()), _canonical(other.config())
        if mine != theirs:
            diff = "; ".join(
                f"{k} {mine.get(k)!r} != {theirs.get(k)!r}"
                for k in sorted(set(mine) | set(theirs))
                if mine.get(k) != theirs.get(k)
            )
            raise InvalidInputError(
                f"cannot merge evaluators configured differently: {diff}", source=f"{name}.merge"
            )
        self._merge(other)
        return self

    def compute(self) -> MetricSet:
        """The metric records of everything added so far.

        Raises:
            InvalidInputError: nothing was added.
        """
        if self.is_empty:
            raise InvalidInputError(
                "no data was added; call add() first", source=f"{type(self).__name__}.compute"
            )
        return self._compute()

    def state(self) -> dict[str, np.ndarray]:
        """Configuration and accumulated state as plain numpy arrays.

        ``"config"`` holds the JSON text of :meth:`config` as a 0-d string array; the
        other keys are the subclass's arrays.
        """
        arrays = self._state()
        if "config" in arrays:
            raise AssertionError("_state() must not use the key 'config'")
        return {"config": np.array(json.dumps(_canonical(self.config()))), **arrays}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Self:
        """Rebuild an evaluator from :meth:`state` (also from ``dict(numpy.load(f))``)."""
        if "config" not in state:
            raise InvalidInputError(
                "missing the 'config' entry", source=f"{cls.__name__}.from_state"
            )
        config = json.loads(str(np.asarray(state["config"])[()]))
        ev = cls(**config)
        ev._load_state({k: np.asarray(v) for k, v in state.items() if k != "config"})
        return ev


def _canonical(config: Mapping[str, Any]) -> dict[str, Any]:
    """Configuration as plain JSON values, so tuples and lists (or numpy scalars) compare equal."""
    return json.loads(json.dumps(to_jsonable(dict(config))))
