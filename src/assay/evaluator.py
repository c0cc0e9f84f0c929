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

**State is declared, not written.** In ``__init__`` a subclass declares each accumulator
with :meth:`~Evaluator.add_state`: the attribute, its starting value and its merge rule
(:data:`REDUCTIONS`: ``sum``, ``cat``, ``max``, ``first``, ``children``; a dict is merged
key by key under the same rule, the union of both sides' keys). The base class derives
``merge``, ``state()``, ``from_state()`` and ``is_empty`` from the declarations, so a
subclass writes only :meth:`~Evaluator.config`, ``add`` and :meth:`~Evaluator._compute`.
An accumulator that is a richer object (a table of datums, a data frame) declares its own
array codec (``encode``/``decode``); one whose merge is not one of the rules declares a
function ``reduce(mine, theirs) -> merged``.

Example:
    >>> import numpy as np
    >>> from assay.results import Metric, MetricSet
    >>> class Mean(Evaluator):
    ...     '''Mean of the values added (a toy evaluator).'''
    ...     def __init__(self, *, scale: float = 1.0) -> None:
    ...         self.scale = scale
    ...         self.add_state("_sum", 0.0, "sum")
    ...         self.add_state("_n", 0, "sum")
    ...         self.add_state("_top", -np.inf, "max")
    ...     def config(self):
    ...         return {"scale": self.scale}
    ...     def add(self, values):
    ...         a = np.asarray(values, dtype=float)
    ...         self._sum, self._n = self._sum + a.sum(), self._n + a.size
    ...         self._top = max(self._top, a.max(initial=-np.inf))
    ...         return self
    ...     def _compute(self):
    ...         mean = float(self.scale * self._sum / self._n)
    ...         return MetricSet([Metric("Mean", mean), Metric("Max", float(self._top))])
    >>> a, b = Mean().add([1, 2]), Mean().add([3])
    >>> a.merge(b).compute()[0].value
    2.0
    >>> sorted(a.state())
    ['config', 'n', 'sum', 'top']
    >>> Mean.from_state(a.state()).compute()[1].value
    3.0
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

import copy
import functools
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from assay.errors import InvalidInputError
from assay.options import Options
from assay.results import MetricSet, to_jsonable

__all__ = ["Evaluator", "REDUCTIONS"]

#: The merge rules of a declared accumulator (:meth:`Evaluator.add_state`):
#:
#: ``sum``: numbers and arrays added; ``cat``: arrays concatenated on the first axis, lists
#: joined (a list of array chunks travels as their concatenation), an object with
#: ``extend`` extended; ``max``: the larger (elementwise); ``first``: this side's value,
#: the other's where this one has none (``None``); ``children``: a dict of evaluators,
#: merged key by key with their own ``merge`` (slices, clusters).
#:
#: Under every rule a dict is merged key by key on the union of both sides' keys.
REDUCTIONS = ("sum", "cat", "max", "first", "children")

Reduce = str | Callable[[Any, Any], Any]


@dataclass(frozen=True)
class _Declared:
    """One declared accumulator (see :meth:`Evaluator.add_state`)."""

    attr: str
    start: Any
    reduce: Reduce
    encode: Callable[[Any], Mapping[str, np.ndarray]] | None = None
    decode: Callable[[Mapping[str, np.ndarray]], Any] | None = None
    child: type[Evaluator] | None = None

    @property
    def key(self) -> str:
        """The accumulator's name in ``state()``: the attribute without leading ``_``."""
        return self.attr.lstrip("_")


class Evaluator(ABC):
    """Base class of every accumulating evaluator (see the module docstring)."""

    #: The options of ``__init__``, declared once (:mod:`assay.options`). When a class
    #: declares them, its ``__init__`` receives clean values (the keyword arguments checked
    #: against the rules, defaults filled in) and :meth:`config` is derived.
    OPTIONS: ClassVar[Options | None] = None
    #: The clean values of the declared options (set before ``__init__``'s body runs).
    options: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init, options = cls.__dict__.get("__init__"), cls.__dict__.get("OPTIONS")
        if init is not None and options is not None:
            cls.__init__ = _checked_init(init, options)  # type: ignore[method-assign]

    # ------------------------------------------------------------ what a subclass writes

    def config(self) -> dict[str, Any]:
        """The configuration as JSON-serialisable keyword arguments of ``__init__``.

        Two evaluators merge only when their configurations are equal, and
        :meth:`from_state` rebuilds an evaluator with ``cls(**config)``. Derived from
        :attr:`OPTIONS` (the stored options, :meth:`assay.options.Options.config`) where the
        class declares them; otherwise the subclass writes it.
        """
        values = self.__dict__.get("options")
        if self.OPTIONS is None or values is None:
            raise NotImplementedError(f"{type(self).__name__} declares no OPTIONS: write config()")
        return self.OPTIONS.config(values)

    @abstractmethod
    def add(self, *args: Any, **kwargs: Any) -> Self:
        """Validate one batch and fold it into the state; returns ``self``."""

    @abstractmethod
    def _compute(self) -> MetricSet:
        """The records, on a non-empty evaluator."""

    def add_state(
        self,
        attr: str,
        start: Any,
        reduce: Reduce,
        *,
        encode: Callable[[Any], Mapping[str, np.ndarray]] | None = None,
        decode: Callable[[Mapping[str, np.ndarray]], Any] | None = None,
        child: type[Evaluator] | None = None,
    ) -> None:
        """Declare the accumulator ``attr`` (set to ``start``) and how it merges.

        Args:
            attr: the attribute holding it; its name in :meth:`state` drops leading ``_``.
            start: its value before any data (emptiness is every accumulator at its start).
                Numbers, numpy arrays, lists of array chunks, ``None`` (nothing yet), and
                dicts of those travel as arrays by themselves.
            reduce: one of :data:`REDUCTIONS`, or a function ``(mine, theirs) -> merged``
                that changes neither argument (called only when both sides have a value).
            encode, decode: the accumulator's own codec for a value that is not plain (a
                table of datums, a data frame): ``encode(value)`` gives named arrays,
                ``decode(arrays)`` the value back.
            child: the evaluator class of a ``children`` dict (default: this class).
        """
        if isinstance(reduce, str) and reduce not in REDUCTIONS:
            raise TypeError(f"unknown reduction {reduce!r}; choose from {REDUCTIONS}")
        if "_declared" not in self.__dict__:
            self._declared: dict[str, _Declared] = {}
        entry = _Declared(attr, copy.deepcopy(start), reduce, encode, decode, child)
        if any(d.key == entry.key for d in self._declared.values() if d.attr != attr):
            raise TypeError(f"two accumulators named {entry.key!r}")
        self._declared[attr] = entry
        setattr(self, attr, start)

    # ------------------------------------------------------------ derived from the declarations

    def _fields(self) -> list[_Declared]:
        return list(self.__dict__.get("_declared", {}).values())

    @property
    def is_empty(self) -> bool:
        """True while no data has been added (or merged in): every accumulator at its start."""
        return all(_blank(getattr(self, d.attr), d.start, d.reduce) for d in self._fields())

    def _check_merge(self, other: Self) -> None:
        """Refuse ``other`` for a reason its data gives beyond the configuration (none by
        default); raises before anything changes."""
        return None

    def _merge(self, other: Self) -> None:
        """Fold ``other``'s state into ``self`` (configurations already checked equal)."""
        for d in self._fields():
            mine, theirs = getattr(self, d.attr), getattr(other, d.attr)
            setattr(self, d.attr, _combine(d.reduce, mine, theirs, d.child or type(self)))

    def _state(self) -> dict[str, np.ndarray]:
        """The accumulated state as plain numpy arrays (no ``"config"`` key)."""
        out: dict[str, np.ndarray] = {}
        for d in self._fields():
            value = getattr(self, d.attr)
            if d.encode is not None:
                arrays = {} if value is None else d.encode(value)
                out |= {f"{d.key}.{k}": np.asarray(v) for k, v in arrays.items()}
            else:
                out |= _encode(value, d.key, d.reduce)
        return out

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Restore what :meth:`_state` returned into a freshly configured evaluator."""
        for d in self._fields():
            if d.decode is not None:
                mine = _under(state, d.key)
                if mine:
                    setattr(self, d.attr, d.decode(mine))
            else:
                start = getattr(self, d.attr)
                child = d.child or type(self)
                setattr(self, d.attr, _decode(start, d.start, state, d.key, d.reduce, child))

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
        self._check_merge(other)
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
        ms = self._compute()
        ms.source = self  # Store.save keeps the units of the evaluator that computed them
        return ms

    def state(self) -> dict[str, np.ndarray]:
        """Configuration and accumulated state as plain numpy arrays.

        ``"config"`` holds the JSON text of :meth:`config` as a 0-d string array; the
        other keys are the accumulators' arrays.
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


def _checked_init(init: Callable[..., None], options: Options) -> Callable[..., None]:
    """``init`` behind the check of its arguments against ``options`` (the body receives
    the clean values, by keyword)."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def checked(self: Evaluator, *args: Any, **kwargs: Any) -> None:
        if args:  # positional arguments, named by the signature (too many: Python's error)
            named = dict(signature.bind_partial(self, *args).arguments)
            named.pop("self", None)
            twice = sorted(set(named) & set(kwargs))
            if twice:
                raise TypeError(f"{type(self).__name__}() got {twice[0]!r} twice")
            kwargs = named | kwargs
        values = options.validate(kwargs)
        self.options = values
        init(self, **values)

    return checked


def _canonical(config: Mapping[str, Any]) -> dict[str, Any]:
    """Configuration as plain JSON values, so tuples and lists (or numpy scalars) compare equal."""
    return json.loads(json.dumps(to_jsonable(dict(config))))


# ---------------------------------------------------------------- the rules, once


def _combine(rule: Reduce, a: Any, b: Any, child: type[Evaluator]) -> Any:
    """``a`` and ``b`` merged under ``rule`` (neither changed, except ``a`` where it is an
    evaluator or an object extended in place)."""
    if b is None:
        return a
    if a is None:
        return _copy(b)
    if isinstance(a, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _combine(rule, out[k], v, child) if k in out else _copy(v)
        return out
    if callable(rule):
        return rule(a, b)
    if rule == "children":
        return a.merge(b)
    if rule == "first":
        return a
    if rule == "sum":
        return a + b
    if rule == "max":
        return np.maximum(a, b) if isinstance(a, np.ndarray) else max(a, b)
    if isinstance(a, np.ndarray):
        return np.concatenate([a, b])
    if isinstance(a, list):
        return a + b
    a.extend(b)
    return a


def _copy(value: Any) -> Any:
    """A value that shares nothing mutable with ``value`` (array chunks are never written)."""
    if isinstance(value, Evaluator):
        return type(value).from_state(value.state())
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


def _blank(value: Any, start: Any, rule: Reduce) -> bool:
    """Whether ``value`` holds no data (``start``: the accumulator's starting value)."""
    if value is None:
        return True
    if isinstance(value, Evaluator):
        return value.is_empty
    if isinstance(value, dict):
        starts = start if isinstance(start, dict) else {}
        return all(_blank(v, starts.get(k), rule) for k, v in value.items())
    if isinstance(value, list):
        return all(len(v) == 0 if hasattr(v, "__len__") else False for v in value)
    if isinstance(value, np.ndarray):
        if value.size == 0 or rule == "cat":
            return value.size == 0
        if isinstance(start, np.ndarray) and start.shape == value.shape:
            return bool(np.array_equal(value, start))
        return value.dtype.kind in "biuf" and not value.any()
    if isinstance(value, (bool, int, float, np.number)):
        return bool(value == (0 if start is None else start))
    if hasattr(value, "__len__"):
        return len(value) == 0
    return False


def _encode(value: Any, key: str, rule: Reduce) -> dict[str, np.ndarray]:
    """A plain value as named arrays under ``key`` (nothing for ``None``)."""
    if value is None:
        return {}
    if isinstance(value, Evaluator):
        return {f"{key}.{k}": v for k, v in value.state().items()}
    if isinstance(value, dict):
        names = [json.dumps(to_jsonable(k)) for k in value]
        out = {f"{key}.keys": np.array(names, dtype=str)}
        for i, v in enumerate(value.values()):
            out |= _encode(v, f"{key}.{i}", rule)
        return out
    if isinstance(value, list):
        return {key: np.concatenate(value) if value else np.zeros(0)}
    return {key: np.asarray(value)}


def _decode(
    now: Any,
    start: Any,
    state: Mapping[str, np.ndarray],
    key: str,
    rule: Reduce,
    child: type[Evaluator],
) -> Any:
    """The value :func:`_encode` wrote under ``key`` (``now``: the fresh value it replaces)."""
    if rule == "children" and not isinstance(now, dict):
        return child.from_state(_under(state, key))
    if isinstance(now, dict):
        if f"{key}.keys" not in state:
            return now
        names = [_key(json.loads(n)) for n in np.asarray(state[f"{key}.keys"]).tolist()]
        starts = start if isinstance(start, dict) else {}
        fallback: Any = next(iter(starts.values()), [] if rule == "cat" else None)
        out = dict(now)
        for i, k in enumerate(names):
            mine = _copy(now.get(k, fallback))
            out[k] = _decode(mine, starts.get(k, fallback), state, f"{key}.{i}", rule, child)
        return out
    if key not in state:
        return now
    a = np.asarray(state[key])
    if isinstance(now, list):
        return [a.copy()] if a.size else []
    if now is None or isinstance(now, np.ndarray):
        return a.item() if now is None and a.ndim == 0 else a.copy()
    return type(now)(a.item())


def _key(k: Any) -> Any:
    """A dict key back from JSON (lists were tuples)."""
    return tuple(_key(x) for x in k) if isinstance(k, list) else k


def _under(state: Mapping[str, np.ndarray], key: str) -> dict[str, np.ndarray]:
    """The entries of ``state`` under ``key.``, without that prefix."""
    n = len(key) + 1
    return {k[n:]: v for k, v in state.items() if k.startswith(f"{key}.")}
