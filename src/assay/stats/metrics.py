"""Metrics over per-sample scores, the ``@metric`` registry, and ``grouped()``.

A metric is built by calling its factory (``accuracy()``, ``stderr(cluster="topic")``)
and is then a callable over scores: a list of :class:`~assay.stats.SampleScore`, a
:class:`~assay.stats.ScoreFrame`, or plain numbers. Calling it is strict (an undefined
value raises :class:`~assay.errors.UndefinedMetricError`); :func:`assay.stats.evaluate`
turns metrics into :class:`~assay.results.Metric` records, undefined ones included.

Built-ins (formulas in :mod:`assay.stats.compute`):

===================================  =========================================================
``accuracy(partial_credit=True)``    mean of the values; ``"P"`` is 0.5, or 0 when
                                     ``partial_credit=False``
``mean()``                           mean
``var()`` / ``std()``                sample variance / standard deviation (ddof = 1)
``stderr()``                         ``std / √n``
``stderr(cluster=key)``              CR1 cluster-robust stderr, clusters from sample metadata
``bootstrap_stderr(num_samples,      std of ``num_samples`` resampled means; ``seed=None``
seed)``                              draws one and records it in the parameters
===================================  =========================================================

Custom metrics (the factory's arguments become the record's parameters)::

    @metric
    def pass_rate(threshold: float = 0.5):
        def compute(scores: ScoreFrame) -> float:
            return float((scores.values >= threshold).mean())
        return compute

The inner function receives a :class:`~assay.stats.ScoreFrame`: use ``scores.values``
(numpy) or iterate it as :class:`~assay.stats.SampleScore` objects, Inspect style.

Example:
    >>> from assay.stats import Score, SampleScore
    >>> s = [SampleScore(Score(v), i) for i, v in enumerate(["C", "I", "C", "P"])]
    >>> accuracy()(s), accuracy(partial_credit=False)(s), round(stderr()(s), 4)
    (0.625, 0.5, 0.2394)
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.results import Metric, undefined
from assay.stats import compute
from assay.stats.types import SampleScore, Score, ScoreFrame

__all__ = [
    "MetricFn",
    "accuracy",
    "as_frame",
    "bootstrap_stderr",
    "get_metric",
    "grouped",
    "mean",
    "metric",
    "registered_metrics",
    "std",
    "stderr",
    "var",
]

MetricValue = float | dict[str, float]

_REGISTRY: dict[str, Callable[..., MetricFn]] = {}


def as_frame(scores: Any) -> ScoreFrame:
    """Scores in any accepted form as a :class:`ScoreFrame`.

    Accepts a ScoreFrame, a sequence of :class:`SampleScore` or :class:`Score`, or numbers.
    """
    if isinstance(scores, ScoreFrame):
        return scores
    if isinstance(scores, np.ndarray) and scores.dtype != object:
        return ScoreFrame.from_arrays(scores)
    items = list(scores)
    if items and all(isinstance(s, SampleScore) for s in items):
        pass
    elif items and all(isinstance(s, Score) for s in items):
        items = [SampleScore(s, i) for i, s in enumerate(items)]
    elif all(isinstance(s, numbers.Real) and not isinstance(s, bool) for s in items):
        return ScoreFrame.from_arrays(np.asarray(items, dtype=np.float64))
    else:  # raw values: "C", True, "yes", ...
        items = [SampleScore(Score(v), i) for i, v in enumerate(items)]
    if any(isinstance(s.score.value, (Mapping, list, tuple)) for s in items):
        raise InvalidInputError(
            "dict- or list-valued scores: call assay.stats.evaluate() (one metric per key "
            "or index) or ScoreFrame.from_scores(scores, key=...)",
            source="scores",
        )
    return ScoreFrame.from_scores(items)


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
    """A configured metric: ``name``, ``params`` and a function of a :class:`ScoreFrame`.

    Calling it on scores returns the value (a float, or a dict for grouped/dict metrics)
    and raises :class:`UndefinedMetricError` where the value is not defined.
    :meth:`records` gives the :class:`~assay.results.Metric` records.
    """

    def __init__(self, name: str, params: Mapping[str, Any], fn: Callable[[ScoreFrame], Any]):
        self.name = name
        self.params = dict(params)
        self.fn = fn

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.name}({args})"

    def __call__(self, scores: Any) -> MetricValue:
        return _to_value(self.name, self.fn(as_frame(scores)))

    def records(self, frame: ScoreFrame, context: Mapping[str, Any] | None = None) -> list[Metric]:
        """Metric records for ``frame``; ``context`` (reducer, score key, counts) is added
        to the parameters. An undefined value becomes an ``undefined`` record."""
        params = {**self.params, **(context or {}), "n": len(frame)}
        try:
            value = self(frame)
        except UndefinedMetricError as e:
            return [undefined(self.name, e.reason, **params)]
        return [Metric(self.name, value, params)]


def _jsonable_param(v: Any) -> bool:
    return (
        v is None
        or isinstance(v, (str, bool, int, float))
        or (isinstance(v, (list, tuple)) and all(_jsonable_param(x) for x in v))
    )


def metric(func: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Register a metric factory (``@metric`` or ``@metric(name="...")``).

    The decorated factory returns a function ``(scores: ScoreFrame) -> float | dict``;
    calling the decorated factory returns a :class:`MetricFn` whose ``params`` are the
    factory's (JSON-able) arguments, defaults included. The metric is then available by
    name to :func:`get_metric` and to ``evaluate(metrics=["name"])``.

    Example:
        >>> @metric
        ... def share_above(threshold: float = 0.5):
        ...     def compute(scores):
        ...         return float((scores.values > threshold).mean())
        ...     return compute
        >>> m = share_above(0.2)
        >>> m.name, m.params, m([0.1, 0.3, 0.9, 0.0])
        ('share_above', {'threshold': 0.2}, 0.5)
    """

    def wrap(factory: Callable[..., Any]) -> Callable[..., MetricFn]:
        metric_name = name or factory.__name__
        sig = inspect.signature(factory)

        @functools.wraps(factory)
        def build(*args: Any, **kwargs: Any) -> MetricFn:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            inner = factory(*bound.args, **bound.kwargs)
            if isinstance(inner, MetricFn):
                return inner
            params = {k: v for k, v in bound.arguments.items() if _jsonable_param(v)}
            return MetricFn(metric_name, params, inner)

        build.metric_name = metric_name  # type: ignore[attr-defined]
        _REGISTRY[metric_name] = build
        return build

    if func is not None:
        return wrap(func)
    return wrap


def get_metric(name: str, **params: Any) -> MetricFn:
    """Build the registered metric ``name`` with ``params``.

    Example:
        >>> get_metric("stderr", cluster="topic")
        stderr(cluster='topic')
    """
    if name not in _REGISTRY:
        raise InvalidInputError(
            f"unknown metric {name!r}; registered: {', '.join(sorted(_REGISTRY))}", source="metrics"
        )
    return _REGISTRY[name](**params)


def registered_metrics() -> list[str]:
    """Names of all registered metrics."""
    return sorted(_REGISTRY)


# ---------------------------------------------------------------------- built-ins
@metric
def accuracy(partial_credit: bool = True) -> Callable[[ScoreFrame], float]:
    """Proportion correct: the mean of the values (C = 1, I = N = 0, P = 0.5).

    Args:
        partial_credit: give the partial letter ``"P"`` 0.5 (default, as Inspect AI does);
            False counts it as incorrect (0).

    Requires at least one score.

    Example:
        >>> accuracy()(["C", "P", "I", "C"]), accuracy(partial_credit=False)(["C", "P", "I", "C"])
        (0.625, 0.5)
    """

    def compute_(frame: ScoreFrame) -> float:
        return (
            compute.mean(frame.values_for(partial_credit=partial_credit))
            if len(frame)
            else _empty("accuracy")
        )

    return compute_


def _empty(name: str) -> float:
    raise UndefinedMetricError(name, "requires at least 1 score, got 0")


@metric
def mean() -> Callable[[ScoreFrame], float]:
    """Mean of the values (requires n ≥ 1).

    Example:
        >>> mean()([1, 2, 4])
        2.3333333333333335
    """
    return lambda frame: compute.mean(frame.values)


@metric
def var() -> Callable[[ScoreFrame], float]:
    """Sample variance, ddof = 1 (requires n ≥ 2).

    Example:
        >>> var()([1, 2, 3, 4])
        1.6666666666666667
    """
    return lambda frame: compute.var(frame.values)


@metric
def std() -> Callable[[ScoreFrame], float]:
    """Sample standard deviation, ddof = 1 (requires n ≥ 2).

    Example:
        >>> std()([2, 4])
        1.4142135623730951
    """
    return lambda frame: compute.std(frame.values)


@metric
def stderr(cluster: str | None = None) -> Callable[[ScoreFrame], float]:
    """Standard error of the mean, optionally cluster-robust.

    Without ``cluster``: ``std(ddof=1) / √n`` (requires n ≥ 2). With ``cluster=key``: the
    CR1 clustered standard error over the clusters given by each sample's metadata value
    for ``key``: ``√(G/(G−1) · Σ_g (Σ_{i∈g}(y_i − ȳ))²) / n`` (requires G ≥ 2); it equals
    statsmodels' OLS-on-a-constant ``cov_type="cluster"`` standard error. A sample without
    the key raises :class:`InvalidInputError` naming it.

    Example:
        >>> from assay.stats import ScoreFrame
        >>> f = ScoreFrame.from_arrays([1, 1, 0, 0, 1, 0], metadata={"doc": [1, 1, 2, 2, 3, 3]})
        >>> round(stderr(cluster="doc")(f), 6), round(stderr()(f), 6)
        (0.288675, 0.223607)
    """
    if cluster is None:
        return lambda frame: compute.stderr(frame.values)
    return lambda frame: compute.clustered_stderr(frame.values, frame.column(cluster))


@metric
def bootstrap_stderr(num_samples: int = 1000, seed: int | None = None) -> MetricFn:
    """Bootstrap standard error of the mean (std, ddof = 1, of resampled means).

    Args:
        num_samples: number of resamples B (≥ 2).
        seed: random seed; with None a seed is drawn once, when the metric is built, and
            recorded in the parameters so the value can be reproduced.

    Example:
        >>> m = bootstrap_stderr(200, seed=7)
        >>> m([0, 1] * 100) == m([0, 1] * 100)
        True
    """
    if int(num_samples) < 2:
        raise InvalidInputError(f"must be at least 2, got {num_samples}", field="num_samples")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    return MetricFn(
        "bootstrap_stderr",
        {"num_samples": int(num_samples), "seed": seed},
        lambda frame: compute.bootstrap_stderr(frame.values, int(num_samples), seed),
    )


# ---------------------------------------------------------------------- grouped
class GroupedMetricFn(MetricFn):
    """A metric applied per group of a sample-metadata key; see :func:`grouped`."""

    def __init__(
        self,
        inner: MetricFn,
        key: str,
        all: Literal["samples", "groups", False],
        all_label: str,
        name_template: str,
    ) -> None:
        super().__init__(inner.name, inner.params, inner.fn)
        self.inner = inner
        self.key = key
        self.all = all
        self.all_label = all_label
        self.name_template = name_template

    def __repr__(self) -> str:
        return f"grouped({self.inner!r}, {self.key!r}, all={self.all!r})"

    def _groups(self, frame: ScoreFrame) -> list[tuple[str, str, ScoreFrame]]:
        if len(frame) == 0:
            return []
        col = frame.column(self.key)
        labels = np.asarray([str(x) for x in col.tolist()], dtype=object)
        codes, uniques = compute.factorize(labels)
        g = len(uniques)
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(np.bincount(codes, minlength=g))[:-1]
        out = []
        for gi, idx in enumerate(np.split(order, bounds)):
            label = str(uniques[gi])
            out.append((label, self.name_template.format(group_name=label), frame.take(idx)))
        if self.all is not False and any(name == self.all_label for _, name, _ in out):
            raise InvalidInputError(
                f"group name {self.all_label!r} collides with the aggregate's label; pass "
                "another all_label= to grouped()",
                field=self.key,
            )
        return out

    def _evaluate(self, frame: ScoreFrame, context: Mapping[str, Any]) -> list[Metric]:
        records: list[Metric] = []
        for label, name, sub in self._groups(frame):
            ctx = {**context, "group_key": self.key, "group": label, "name": name}
            ctx.pop("n_failed", None)
            records.extend(self.inner.records(sub, ctx))
        if self.all is False:
            return records
        ctx = {
            **context,
            "group_key": self.key,
            "group": None,
            "name": self.all_label,
            "all": self.all,
        }
        if self.all == "samples":
            records.extend(self.inner.records(frame, ctx))
        else:
            params = {**self.inner.params, **ctx, "n": len(frame)}
            bad = [r for r in records if not isinstance(r.value, float)]
            if not records:
                records.append(undefined(self.name, "requires at least 1 group", **params))
            elif bad:
                reason = bad[0].parameters.get("undefined", "value is not a number")
                records.append(
                    undefined(
                        self.name,
                        f"all='groups' needs every group's value; group "
                        f"{bad[0].parameters['group']!r}: {reason}",
                        **params,
                    )
                )
            else:
                records.append(
                    Metric(self.name, float(np.mean([r.value for r in records])), params)
                )
        return records

    def records(self, frame: ScoreFrame, context: Mapping[str, Any] | None = None) -> list[Metric]:
        return self._evaluate(frame, dict(context or {}))

    def __call__(self, scores: Any) -> dict[str, float]:  # type: ignore[override]
        out: dict[str, float] = {}
        for r in self._evaluate(as_frame(scores), {}):
            if r.value is None:
                raise UndefinedMetricError(
                    self.name, f"group {r.parameters['name']!r}: {r.parameters['undefined']}"
                )
            out[r.parameters["name"]] = r.value
        return out


def grouped(
    metric: MetricFn,
    key: str,
    *,
    all: Literal["samples", "groups", False] = "samples",
    all_label: str = "all",
    name_template: str = "{group_name}",
) -> GroupedMetricFn:
    """Apply ``metric`` to each group of samples sharing a sample-metadata value of ``key``.

    Groups are named ``str(value)`` in order of first appearance; each record carries
    ``group_key``, ``group`` and ``name`` (``name_template.format(group_name=...)``). The
    aggregate ("all", named ``all_label``) is the metric over all samples
    (``all="samples"``), the unweighted mean of the group values (``all="groups"``), or
    absent (``all=False``). Every sample must have the key: otherwise
    :class:`InvalidInputError` names the sample.

    Example:
        >>> from assay.stats import ScoreFrame
        >>> f = ScoreFrame.from_arrays([1, 0, 1, 1], metadata={"topic": ["a", "a", "b", "b"]})
        >>> grouped(accuracy(), "topic")(f)
        {'a': 0.5, 'b': 1.0, 'all': 0.75}
        >>> grouped(accuracy(), "topic", all="groups", name_template="topic_{group_name}")(f[:3])
        {'topic_a': 0.5, 'topic_b': 1.0, 'all': 0.75}
    """
    if all not in ("samples", "groups", False):
        raise InvalidInputError(f"must be 'samples', 'groups' or False, got {all!r}", field="all")
    if not isinstance(metric, MetricFn):
        raise InvalidInputError(
            "expected a metric built by a factory, e.g. accuracy() (note the parentheses)",
            field="metric",
        )
    return GroupedMetricFn(metric, key, all, all_label, name_template)
