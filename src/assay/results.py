"""Metric records: the one output shape of every assay domain.

A :class:`Metric` is ``(type, value, parameters)``: ``type`` is a stable name such as
``"Precision"`` or ``"AP"``, ``value`` is a number, a small dict, or ``None`` when the
metric is undefined (the reason is then in ``parameters["undefined"]``), and
``parameters`` says what it was computed for (label, thresholds, subgroup, ...).

A :class:`MetricSet` is an ordered collection of records that serialises to JSON (a list
of ``{"type", "value", "parameters"}`` objects) and to a pandas DataFrame (one row per
record, one column per parameter name).

Example:
    >>> from assay.results import Metric, MetricSet
    >>> ms = MetricSet([Metric("Precision", 0.75, {"label_value": "cat"})])
    >>> ms.to_json()
    '[{"type": "Precision", "value": 0.75, "parameters": {"label_value": "cat"}}]'
    >>> ms.get("Precision", label_value="cat").value
    0.75
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from assay.errors import InvalidInputError

__all__ = ["Metric", "MetricSet", "record", "undefined", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and non-string dict keys to plain JSON types.

    Float dict keys (score thresholds) become their shortest decimal string ("0.05").
    NaN and infinities are rejected: assay never reports them as values.
    """
    if isinstance(obj, Mapping):
        return {_key(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if not math.isfinite(f):
            raise InvalidInputError(
                f"non-finite value {f!r} in a metric record (an input too large or not finite?)",
                source="metric record",
            )
        return f
    return obj


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, (float, np.floating)):
        return repr(round(float(k), 10))
    return str(to_jsonable(k))


@dataclass(frozen=True)
class Metric:
    """One metric value and what it was computed for.

    Args:
        type: stable metric name ("Precision", "ROCAUC", "QWK", ...).
        value: a number, a small dict, or ``None`` if undefined.
        parameters: what it was computed for; an undefined metric carries
            ``parameters["undefined"]`` with the reason.

    Example:
        >>> Metric("Accuracy", 0.5).to_dict()
        {'type': 'Accuracy', 'value': 0.5, 'parameters': {}}
    """

    type: str
    value: Any
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def is_undefined(self) -> bool:
        """True when the metric could not be computed (``value is None``)."""
        return self.value is None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON dict ``{"type", "value", "parameters"}``."""
        return {
            "type": self.type,
            "value": to_jsonable(self.value),
            "parameters": to_jsonable(self.parameters),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metric:
        """Inverse of :meth:`to_dict`."""
        return cls(str(d["type"]), d.get("value"), dict(d.get("parameters") or {}))


def undefined(type: str, reason: str, **parameters: Any) -> Metric:
    """An undefined metric record: ``value=None`` with the reason in ``parameters``.

    Example:
        >>> undefined("Precision", "requires TP + FP > 0", label_value="cat").parameters
        {'label_value': 'cat', 'undefined': 'requires TP + FP > 0'}
    """
    return Metric(type, None, {**parameters, "undefined": reason})


def record(type: str, value: Any, /, *, undefined: str | None = None, **parameters: Any) -> Metric:
    """The one door every domain builds its records through.

    ``value`` ``None`` or NaN gives an undefined record: ``value=None`` with ``undefined``
    (the reason; ``"undefined"`` when not given) in ``parameters["undefined"]``. A numpy
    scalar becomes the Python number of the same kind (``numpy.float64`` -> ``float``,
    ``numpy.int64`` -> ``int``); other values (Python numbers, dicts, lists) are kept as
    they are. ``parameters`` are the record's parameters, in the order given; every name
    is one of docs/records.md.

    Example:
        >>> record("Precision", 0.75, label_value="cat")
        Metric(type='Precision', value=0.75, parameters={'label_value': 'cat'})
        >>> record("Precision", float("nan"), undefined="requires TP + FP > 0").parameters
        {'undefined': 'requires TP + FP > 0'}
        >>> type(record("N", np.int64(4)).value)
        <class 'int'>
    """
    if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return Metric(type, None, {**parameters, "undefined": undefined or "undefined"})
    if isinstance(value, np.generic):
        value = value.item()
    return Metric(type, value, parameters)


class MetricSet(Sequence[Metric]):
    """An ordered collection of :class:`Metric` records.

    Example:
        >>> ms = MetricSet(
        ...     [Metric("F1", 0.5, {"label_value": "a"}), Metric("F1", 1.0, {"label_value": "b"})]
        ... )
        >>> len(ms.filter("F1")), ms.get("F1", label_value="b").value
        (2, 1.0)
        >>> list(ms.to_dataframe().columns)
        ['type', 'value', 'label_value']
    """

    #: the evaluator that computed these records (set by ``Evaluator.compute()``), so that
    #: ``Store.save`` keeps its units; ``None`` for records made any other way
    source: Any = None

    def __init__(self, metrics: Iterable[Metric] = ()) -> None:
        self._metrics: list[Metric] = list(metrics)

    @overload
    def __getitem__(self, i: int) -> Metric: ...
    @overload
    def __getitem__(self, i: slice) -> MetricSet: ...
    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return MetricSet(self._metrics[i])
        return self._metrics[i]

    def __len__(self) -> int:
        return len(self._metrics)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._metrics)

    def __add__(self, other: Iterable[Metric]) -> MetricSet:
        return MetricSet([*self._metrics, *other])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MetricSet):
            return self._metrics == other._metrics
        return NotImplemented

    def __repr__(self) -> str:
        return f"MetricSet({len(self)} metrics)"

    def filter(self, type: str | None = None, **parameters: Any) -> MetricSet:
        """Records of the given type whose parameters include all the given values."""
        return MetricSet(
            m
            for m in self._metrics
            if (type is None or m.type == type)
            and all(k in m.parameters and m.parameters[k] == v for k, v in parameters.items())
        )

    def get(self, type: str, **parameters: Any) -> Metric:
        """The single record matching ``type`` and ``parameters``; KeyError if none or several."""
        found = self.filter(type, **parameters)
        if len(found) != 1:
            raise KeyError(f"{len(found)} metrics match type={type!r} {parameters}")
        return found[0]

    def to_list(self) -> list[dict[str, Any]]:
        """A list of plain-JSON dicts."""
        return [m.to_dict() for m in self._metrics]

    def to_json(self, indent: int | None = None) -> str:
        """JSON text: a list of ``{"type", "value", "parameters"}`` objects."""
        return json.dumps(self.to_list(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> MetricSet:
        """Parse the output of :meth:`to_json`."""
        return cls(Metric.from_dict(d) for d in json.loads(text))

    def to_dataframe(self):
        """A pandas DataFrame: columns ``type``, ``value``, then one per parameter name."""
        import pandas as pd

        rows = []
        for m in self.to_list():
            rows.append({"type": m["type"], "value": m["value"], **m["parameters"]})
        df = pd.DataFrame(rows, columns=_columns(rows))
        return df


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    cols: dict[str, None] = {"type": None, "value": None}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    return list(cols)
