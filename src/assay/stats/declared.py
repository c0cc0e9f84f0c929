"""What the stats domain declares once: the options of
:class:`~assay.stats.evaluator.ScoreEvaluator` (:data:`OPTIONS`).

The built-in metric types are one table too, :data:`assay.stats.metric_types.METRICS`: the
``@metric`` registry reads it (it imports its built-ins from the builders named there), and
these options' rules use the registry, so the table sits in a module of its own below both.
The default set (``metrics=None``) is the table's defaults.

Light on purpose: no numpy (the rules import the registry when they run).

Example:
    >>> OPTIONS.names
    ('metrics', 'reducers', 'to_float', 'ci', 'ci_method', 'num_bootstrap', 'seed', 'cluster')
    >>> OPTIONS["cluster"].is_stored({"ci": 0.9, "cluster": None})
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidInputError
from assay.options import Bad, Option, Options, custom
from assay.stats.metric_types import METRICS
from assay.uncertainty.options import CI_METHODS, interval_options

__all__ = ["OPTIONS"]

# ------------------------------------------------------------------ the options' rules


def _each(v: Any) -> list[Any]:
    if v is None:
        return []
    if isinstance(v, (str, Mapping)) or not hasattr(v, "__iter__"):
        return [v]
    return list(v)


def _metrics(v: Any) -> list[Any]:
    """Configured metrics (``MetricFn``), names or specs -> ``MetricFn`` objects; ``None``:
    the table's defaults."""
    from assay.stats.grouped import metric_from_spec
    from assay.stats.metric_registry import MetricFn, get_metric

    if v is None:
        return [get_metric(name) for name in METRICS.defaults]
    if not isinstance(v, (str, Mapping, MetricFn)) and not hasattr(v, "__iter__"):
        raise Bad(f"must be a metric, a metric name or spec, or a list of them, got {v!r}")
    out = []
    for m in _each(v):
        if isinstance(m, MetricFn):
            out.append(m)
        elif isinstance(m, (str, Mapping)):
            out.append(metric_from_spec(m))
        elif hasattr(m, "metric_name"):
            name = getattr(m, "__name__", m.metric_name)
            raise InvalidInputError(
                f"{m.metric_name!r} is a metric factory: call it, e.g. {name}()",
                source="metrics",
            )
        else:
            raise InvalidInputError(
                f"expected a metric (e.g. accuracy()) or a metric name, got {m!r}", source="metrics"
            )
    return out


def _reducers(v: Any) -> list[Any]:
    """Reducers (``Reducer``), names or specs -> ``Reducer`` objects; ``None``: ``mean``."""
    from assay.stats.reducer_registry import Reducer, get_reducer, reducer_from_spec

    if v is None:
        return [get_reducer("mean")]
    if not isinstance(v, (str, Mapping, Reducer)) and not hasattr(v, "__iter__"):
        raise Bad(f"must be a reducer, a reducer name or spec, or a list of them, got {v!r}")
    out = [r if isinstance(r, Reducer) else reducer_from_spec(r) for r in _each(v)]
    if not out:
        raise Bad("needs at least one reducer")
    return out


def _to_float(v: Any) -> Any:
    """A ``ValueMapping``, the dict of its fields or a text -> number table; ``None``."""
    from assay.stats.value_mapping import ValueMapping, as_mapping

    if v is not None and not isinstance(v, (Mapping, ValueMapping)):
        raise Bad(f"must be a ValueMapping or a dict of its fields, got {v!r}")
    try:
        return as_mapping(v)
    except InvalidInputError as e:
        raise InvalidInputError(
            e.reason, source="to_float", record=e.record, field=e.field
        ) from None


def _spec(obj: Any) -> Any:
    """The JSON description of a metric or reducer (a reducer's bare name where enough)."""
    from assay.stats.reducer_registry import Reducer, get_reducer

    spec = obj.spec
    if spec is None:
        return {"unregistered": repr(obj)}
    if isinstance(obj, Reducer):
        try:
            if get_reducer(obj.name).params == spec.get("params"):
                return obj.name
        except InvalidInputError:
            pass
    return spec


def _specs(objs: list[Any]) -> list[Any]:
    return [_spec(o) for o in objs]


def _mapping_fields(mapping: Any) -> Any:
    return mapping.to_dict()


def _with_ci(values: Mapping[str, Any]) -> bool:
    return values["ci"] is not None


#: The options of ``ScoreEvaluator``. ``assay stats`` reads its own flags for metrics,
#: reducers and the value mapping (``--metric`` and ``--reducer`` are texts it parses, an
#: Inspect log gives defaults), so those three have no flag here.
OPTIONS = Options(
    Option(
        "metrics",
        None,
        custom(
            "a metric, a metric name or spec, or a list of them, or None",
            _metrics,
            ("no such metric", ["no such metric"], 3),
        ),
        None,
        "Metrics (accuracy(), grouped(...)), registered names or specs; default: "
        + " and ".join(METRICS.defaults)
        + ".",
        stored_as=_specs,
    ),
    Option(
        "reducers",
        None,
        custom(
            "a reducer, a reducer name or spec, or a list of them, or None",
            _reducers,
            ("no such reducer", [], 3),
        ),
        None,
        "Epoch reducers (names such as mean, pass_at_2, or Reducer objects); default mean.",
        stored_as=_specs,
    ),
    Option(
        "to_float",
        None,
        custom(
            "a ValueMapping, the dict of its fields, a text -> number table, or None",
            _to_float,
            ("x", 3),
        ),
        None,
        "The evaluation's value mapping (metrics and reducers with their own use theirs).",
        stored="if_set",
        stored_as=_mapping_fields,
    ),
    # the stats configuration has always held ``cluster`` (null or not) with ``ci``
    interval_options(CI_METHODS, unit="sample").replace(
        "cluster",
        stored=_with_ci,
        help="With --ci: a sample_metadata key whose clusters are the independent units of "
        "the intervals (clustered standard error; whole clusters resampled).",
    ),
)
