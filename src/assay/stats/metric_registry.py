"""The ``@metric`` registry: configured metrics (:class:`MetricFn`) and their names.

A metric is built by calling its factory (``accuracy()``, ``stderr(cluster="topic")``)
and is then a callable over scores: a list of :class:`~assay.stats.SampleScore`, a
:class:`~assay.stats.ScoreFrame`, or plain numbers. Calling it is strict (an undefined
value raises :class:`~assay.errors.UndefinedMetricError`);
:func:`assay.stats.evaluate_scores` turns metrics into :class:`~assay.results.Metric`
records, undefined ones included.

Names. A record's ``type`` is CamelCase, as in every assay domain: a factory named
``pass_rate`` gives records of type ``"PassRate"`` (``@metric(name=...)`` sets the type
exactly). The registry finds a metric by its type and by the factory's own name, so
Inspect AI's lowercase names (``"accuracy"``, ``"bootstrap_stderr"``) keep working.

Custom metrics (the factory's arguments become the record's parameters)::

    @metric
    def pass_rate(threshold: float = 0.5):
        def compute(scores: ScoreFrame) -> float:
            return float((scores.values >= threshold).mean())
        return compute

The inner function receives a :class:`~assay.stats.ScoreFrame`: use ``scores.values``
(numpy) or iterate it as :class:`~assay.stats.SampleScore` objects, Inspect style.

Example:
    >>> @metric
    ... def share_above(threshold: float = 0.5):
    ...     return lambda scores: float((scores.values > threshold).mean())
    >>> m = get_metric("share_above", threshold=0.2)
    >>> m.name, m.params, m([0.1, 0.3, 0.9, 0.0])
    ('ShareAbove', {'threshold': 0.2}, 0.5)
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.results import Metric
from assay.stats.frame import ScoreFrame
from assay.stats.metric_types import METRICS
from assay.stats.records import record, undefined_record
from assay.stats.score_input import as_frame, as_objects
from assay.stats.value_mapping import ValueMapping, as_mapping

if TYPE_CHECKING:
    from assay.stats.tally import SampleCI

__all__ = [
    "MetricFn",
    "camel_case",
    "check_spec",
    "get_metric",
    "metric",
    "metric_factory",
    "registered_metrics",
]

MetricValue = float | dict[str, float]

_REGISTRY: dict[str, Callable[..., MetricFn]] = {}
_ALIASES: dict[str, str] = {}


def camel_case(name: str) -> str:
    """``"bootstrap_stderr"`` -> ``"BootstrapStderr"``; a name with capitals is kept.

    Example:
        >>> camel_case("bootstrap_stderr"), camel_case("Accuracy"), camel_case("f1")
        ('BootstrapStderr', 'Accuracy', 'F1')
    """
    if any(c.isupper() for c in name):
        return name
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def _to_value(name: str, v: Any) -> MetricValue:
    if isinstance(v, Mapping):
        return {str(k): _to_value(name, x) for k, x in v.items()}  # type: ignore[misc]
    if v is None:
        raise UndefinedMetricError(name, "the metric returned None")
    f = float(v)
    if not np.isfinite(f):
        raise UndefinedMetricError(name, f"the metric returned a non-finite value {f!r}")
    return f


class MetricFn:
    """A configured metric: ``name`` (the record type), ``params`` and a function of a
    :class:`ScoreFrame`.

    Calling it on scores returns the value (a float, or a dict for grouped/dict metrics)
    and raises :class:`UndefinedMetricError` where the value is not defined.
    :meth:`records` gives the :class:`~assay.results.Metric` records. ``spec`` is the
    JSON description that rebuilds it (:func:`~assay.stats.grouped.metric_from_spec`), or
    None when the metric was not built by a registered factory from JSON-able arguments.
    ``to_float`` is the metric's own :class:`~assay.stats.ValueMapping` (None: the
    evaluation's), set by a factory's ``to_float`` argument: the scores' raw values are
    converted with it for this metric alone.

    Example:
        >>> m = MetricFn("Share", {}, lambda frame: float(frame.values.mean()))
        >>> m([1.0, 0.0]), m.spec is None
        (0.5, True)
    """

    def __init__(
        self,
        name: str,
        params: Mapping[str, Any],
        fn: Callable[[Any], Any],
        spec: dict[str, Any] | None = None,
        takes: str = "frame",
    ) -> None:
        self.name = name
        self.params = dict(params)
        self.fn = fn
        self.spec = spec
        # "frame": fn gets a ScoreFrame of floats; "scores": fn gets the scored
        # SampleScore objects with their raw values (lists, dicts, strings) after the
        # reducer; "unreduced": the same, but every epoch, before any reducer
        self.takes = takes
        self.to_float: ValueMapping | None = None
        # a metric over raw values that converts them itself (aggregate): the mapping the
        # evaluator reduces the epochs with, as a frame metric's own to_float does
        self.epoch_to_float: ValueMapping | None = None
        # a metric whose value is the mean of per-sample values: those values (the
        # evaluation's ``ci`` puts an interval on its records, assay.stats.tally)
        self.mean_of: Callable[[ScoreFrame], np.ndarray] | None = None
        # record parameters computed from the value (an interval metric's ci_low, ...)
        self.record_params: Callable[[Any], dict[str, Any]] | None = None
        # factory parameters that its records spell as record_params does (ci's level is
        # a record's confidence_level): in the spec, not in the records
        self.record_renamed: frozenset[str] = frozenset()

    def record_parameters(self, value: Any = None) -> dict[str, Any]:
        """A record's parameters: the metric's own but those it records under other names,
        then :attr:`record_params` of ``value`` (``None``, an undefined value: the
        interval's level and method without its ends).

        Example:
            >>> from assay.stats.metrics import ci
            >>> ci(0.9).record_parameters({"lower": 0.1, "upper": 0.3})
            ... # doctest: +NORMALIZE_WHITESPACE
            {'cluster': None, 'ci_low': 0.1, 'ci_high': 0.3, 'confidence_level': 0.9,
             'ci_method': 't'}
            >>> ci(0.9).record_parameters()
            {'cluster': None, 'confidence_level': 0.9, 'ci_method': 't'}
        """
        params = {k: v for k, v in self.params.items() if k not in self.record_renamed}
        if self.record_params is None:
            return params
        if value is None:
            ends = ("ci_low", "ci_high", "ci_undefined")
            interval = self.record_params({"lower": None, "upper": None})
            return {**params, **{k: v for k, v in interval.items() if k not in ends}}
        return {**params, **self.record_params(value)}

    def with_mapping(self, to_float: Any) -> MetricFn:
        """Give the metric its own value-to-float mapping (a :class:`ValueMapping`, the
        dict of its fields or a ``{text: number}`` table; None leaves it unset); its
        parameters and spec then carry ``to_float`` (the mapping's JSON form)."""
        mapping = as_mapping(to_float)
        self.to_float = mapping
        self.params.pop("to_float", None)
        if mapping is not None:
            self.params["to_float"] = mapping.to_dict()
        if self.spec is not None:
            self.spec = {**self.spec, "params": dict(self.params)}
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.name}({args})"

    def _value(self, frame: Any) -> MetricValue:
        """The value on a frame already converted (or on raw-value objects)."""
        if self.takes != "frame" or not isinstance(frame, ScoreFrame):
            return self(frame)
        return _to_value(self.name, self.fn(frame))

    def __call__(self, scores: Any) -> MetricValue:
        if self.takes != "frame":
            return _to_value(self.name, self.fn(as_objects(scores)))
        return _to_value(self.name, self.fn(as_frame(scores, self.to_float, borrow=True)))

    def records(
        self, frame: Any, context: Mapping[str, Any] | None = None, ci: SampleCI | None = None
    ) -> list[Metric]:
        """Metric records for ``frame`` (a ScoreFrame already converted with the metric's
        mapping, or SampleScore objects for a metric that takes raw scores); ``context``
        (reducer, score key, counts) is added to the parameters. An undefined value becomes
        an ``undefined`` record. With ``ci``, a metric that is a mean of per-sample values
        (``mean_of``) gets its interval (:mod:`assay.stats.tally`)."""
        if self.takes != "frame":
            frame = as_objects(frame)
        ctx, n = context or {}, len(frame)
        try:
            value = self._value(frame)
        except UndefinedMetricError as e:
            params = self.record_parameters()
            return [undefined_record(self.name, e.reason, params=params, context=ctx, n=n)]
        out = record(self.name, value, params=self.record_parameters(value), context=ctx, n=n)
        if ci is not None and self.mean_of is not None and isinstance(frame, ScoreFrame):
            clusters = None if ci.cluster is None else frame.column(ci.cluster)
            ci.attach(out, self.mean_of(frame), clusters, frame.sample_id)
        return [out]


def _jsonable_param(v: Any) -> bool:
    return (
        v is None
        or isinstance(v, (str, bool, int, float))
        or (isinstance(v, (list, tuple)) and all(_jsonable_param(x) for x in v))
    )


TAKES = ("frame", "scores", "unreduced")


def metric(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    takes: str = "frame",
    scores: str | None = None,
) -> Any:
    """Register a metric factory (``@metric`` or ``@metric(name="...")``).

    The decorated factory returns a function ``(scores: ScoreFrame) -> float | dict``;
    calling the decorated factory returns a :class:`MetricFn` whose ``params`` are the
    factory's (JSON-able) arguments, defaults included. A ``to_float`` argument of a
    factory over floats (``takes="frame"``) is the metric's own value mapping
    (:meth:`MetricFn.with_mapping`): the frame the inner function receives is converted
    with it, and ``to_float`` appears in the parameters only when given. The record type
    is ``name``, or the CamelCase form of the factory's name; both that and the factory's
    own name find it in :func:`get_metric` and ``evaluate_scores(metrics=["..."])``.

    Parameters
    ----------
    func
        The factory (when used as ``@metric``).
    name
        The record type, used as given.
    takes
        What the inner function receives: ``"frame"`` (default) a :class:`ScoreFrame` of
        floats after the epoch reducer; ``"scores"`` the reduced :class:`SampleScore`
        objects with their raw values; ``"unreduced"`` the objects of every epoch, before
        any reducer (each epoch an observation of its own).
    scores
        Inspect AI's spelling: ``"unreduced"`` is ``takes="unreduced"``; ``"reduced"``
        and ``"auto"`` leave ``takes`` as it is.

    Returns
    -------
    The decorated factory.

    Examples
    --------
    >>> @metric
    ... def share_below(threshold: float = 0.5):
    ...     return lambda scores: float((scores.values < threshold).mean())
    >>> share_below(0.2).name, get_metric("ShareBelow").params
    ('ShareBelow', {'threshold': 0.5})
    """

    kind = "unreduced" if scores == "unreduced" else takes
    if kind not in TAKES or scores not in (None, "auto", "reduced", "unreduced"):
        raise InvalidInputError(
            f"takes must be one of {TAKES} and scores one of auto/reduced/unreduced, "
            f"got takes={takes!r}, scores={scores!r}",
            source="@metric",
        )

    def wrap(factory: Callable[..., Any]) -> Callable[..., MetricFn]:
        metric_name = name or camel_case(factory.__name__)
        sig = inspect.signature(factory)

        @functools.wraps(factory)
        def build(*args: Any, **kwargs: Any) -> MetricFn:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            inner = factory(*bound.args, **bound.kwargs)
            takes_floats = (inner.takes if isinstance(inner, MetricFn) else kind) == "frame"
            own = takes_floats and "to_float" in bound.arguments
            given = {k: v for k, v in bound.arguments.items() if not (own and k == "to_float")}
            if isinstance(inner, MetricFn):
                fn = inner
            else:
                params = {k: v for k, v in given.items() if _jsonable_param(v)}
                fn = MetricFn(metric_name, params, inner, takes=kind)
                fn.mean_of = getattr(inner, "mean_of", None)
                fn.record_params = getattr(inner, "record_params", None)
                fn.record_renamed = getattr(inner, "record_renamed", frozenset())
            if fn.spec is None and all(_jsonable_param(v) for v in given.values()):
                fn.spec = {"metric": metric_name, "params": dict(fn.params)}
            if own:
                fn.with_mapping(bound.arguments["to_float"])
            return fn

        build.metric_name = metric_name  # type: ignore[attr-defined]
        _REGISTRY[metric_name] = build
        if factory.__name__ != metric_name:
            _ALIASES[factory.__name__] = metric_name
        return build

    if func is not None:
        return wrap(func)
    return wrap


#: The modules that register the built-ins: those of the metric table's builders
#: (:data:`assay.stats.declared.METRICS`, the built-in metric types), then the reducers'.
BUILTIN_MODULES = (
    *dict.fromkeys(e.builder.partition(":")[0] for e in METRICS),
    "assay.stats.reducers",
    "assay.stats.panel",
)


def load_builtins() -> None:
    """Import the modules that register the built-in metrics and reducers (the package
    loads its names lazily, so a lookup by name may come first)."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


def _lookup(name: str) -> Callable[..., MetricFn]:
    load_builtins()
    key = name if name in _REGISTRY else _ALIASES.get(name, name)
    if key not in _REGISTRY:
        raise InvalidInputError(
            f"unknown metric {name!r}; registered: {', '.join(registered_metrics())}",
            source="metrics",
        )
    return _REGISTRY[key]


def metric_factory(name: str) -> Callable[..., MetricFn]:
    """The registered factory of metric ``name`` (its type or its factory's name).

    Example:
        >>> metric_factory("stderr")(cluster="doc").params
        {'cluster': 'doc'}
    """
    return _lookup(name)


def get_metric(name: str, **params: Any) -> MetricFn:
    """Build the registered metric ``name`` (its type or its factory's name) with ``params``.

    Example:
        >>> get_metric("stderr", cluster="topic")
        Stderr(cluster='topic')
    """
    return _lookup(name)(**params)


def check_spec(spec: Any, kind: str) -> Mapping[str, Any]:
    """``spec`` if it is a ``{kind: name, "params": {...}}`` description of a metric or
    reducer; a clear error otherwise (also for one marked ``unregistered``).

    Example:
        >>> check_spec({"unregistered": "Share()"}, "metric")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: metrics: metric Share() was not built by a ...
    """
    if isinstance(spec, Mapping) and "unregistered" in spec:
        raise InvalidInputError(
            f"{kind} {spec['unregistered']} was not built by a registered factory from "
            "JSON arguments, so it cannot be rebuilt from its configuration",
            source=f"{kind}s",
        )
    if not isinstance(spec, Mapping) or kind not in spec:
        raise InvalidInputError(
            f"expected a {kind} name or a spec {{'{kind}': name, 'params': {{...}}}}, got {spec!r}",
            source=f"{kind}s",
        )
    return spec


def registered_metrics() -> list[str]:
    """Record types of all registered metrics (their factory names are aliases).

    Example:
        >>> {"Accuracy", "Stderr"} <= set(registered_metrics())
        True
    """
    load_builtins()
    return sorted(_REGISTRY)
