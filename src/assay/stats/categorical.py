"""Metrics over raw score values: ``frequency`` of categorical scores and ``aggregate``
(a metric over one field of dict-valued scores), as in Inspect AI.

Records have the types ``Frequency`` and ``Aggregate``; Inspect's names ``frequency`` and
``aggregate`` are aliases in the registry.

Example:
    >>> frequency(["yes", "no", "maybe"])(["yes", "no", "yes", "yes"])
    {'yes': 0.75, 'no': 0.25, 'maybe': 0.0}
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from enum import Enum
from typing import Any

import numpy as np

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.stats.grouped import metric_from_spec
from assay.stats.metric_registry import _ALIASES, MetricFn, metric
from assay.stats.score import SampleScore, Score, _rec
from assay.stats.value_mapping import ValueMapping, as_mapping, convert_values

__all__ = ["aggregate", "categorical", "frequency"]

ON_MISSING = ("error", "skip", "zero")


def _category_names(categories: Any) -> list[str] | None:
    if categories is None:
        return None
    if isinstance(categories, type) and issubclass(categories, Enum):
        return [str(member.value) for member in categories]
    if isinstance(categories, str):
        raise InvalidInputError(
            f"give a list of category labels or an Enum type, not one string {categories!r}",
            source="frequency",
            field="categories",
        )
    return [str(c) for c in categories]


@metric(name="Frequency")
def _frequency(categories: list[str] | None = None, normalize: bool = True) -> MetricFn:
    def compute_(scores: list[SampleScore]) -> dict[str, float]:
        for s in scores:
            if isinstance(s.score.value, (Mapping, list, tuple)):
                raise InvalidInputError(
                    "frequency() counts scalar (categorical) values; for dict-valued scores "
                    "use aggregate(key, frequency())",
                    record=_rec(s.sample_id),
                    field="value",
                )
        counts = Counter(str(s.score.value) for s in scores)
        total = sum(counts.values())
        if normalize and total == 0:
            raise UndefinedMetricError("Frequency", "no scores to take proportions of")
        denom = float(total) if normalize else 1.0
        keys = dict.fromkeys([*(categories or []), *counts])
        return {k: counts.get(k, 0) / denom for k in keys}

    params = {"categories": categories, "normalize": bool(normalize)}
    return MetricFn("Frequency", params, compute_, takes="unreduced")


_ALIASES["frequency"] = "Frequency"


def frequency(categories: Any = None, normalize: bool = True) -> MetricFn:
    """Share (or count) of each distinct score value: ``{label: n_label / n}``.

    Values are labelled by ``str(value)``. Declared ``categories`` come first, in their
    order, and are reported even when never seen (0.0); labels seen but not declared
    follow in order of first appearance. Every epoch of every sample is counted (the
    metric takes the scores before any epoch reducer); failed (``None``) scores are not.

    Parameters
    ----------
    categories
        All possible labels: a sequence of labels or an ``Enum`` type (its values).
    normalize
        True: proportions (undefined on no scores); False: raw counts.

    Returns
    -------
    MetricFn
        Records of type ``Frequency`` with a dict value.

    Examples
    --------
    >>> frequency(normalize=False)(["a", "b", "a"])
    {'a': 2.0, 'b': 1.0}
    """
    return _frequency(categories=_category_names(categories), normalize=normalize)


def categorical(categories: Any = None) -> list[MetricFn]:
    """The default metrics of a categorical scorer: ``[frequency(categories)]``.

    Example:
        >>> [m.name for m in categorical(["yes", "no"])]
        ['Frequency']
    """
    return [frequency(categories)]


def _extract(scores: list[SampleScore], key: str, on_missing: str) -> tuple[list[SampleScore], int]:
    """Scores carrying ``value[key]`` as their value, and how many were skipped."""
    out: list[SampleScore] = []
    skipped = 0
    for s in scores:
        value = s.score.value
        if not isinstance(value, Mapping):
            raise InvalidInputError(
                f"aggregate(key={key!r}) needs dict-valued scores, got {value!r}",
                record=_rec(s.sample_id),
                field="value",
            )
        raw = value.get(key)
        if isinstance(raw, float) and math.isnan(raw):
            skipped += 1
            continue
        if raw is None:
            if on_missing == "error":
                raise InvalidInputError(
                    f"score key {key!r} is {'missing' if key not in value else 'None'} "
                    "(give on_missing='skip' or 'zero' to allow it)",
                    record=_rec(s.sample_id),
                    field=key,
                )
            if on_missing == "skip":
                skipped += 1
                continue
            raw = 0.0
        score = Score(raw, s.score.answer, s.score.explanation, s.score.metadata)
        out.append(SampleScore(score, s.sample_id, s.epoch, s.sample_metadata))
    return out, skipped


def _converted(scores: list[SampleScore], mapping: ValueMapping) -> list[SampleScore]:
    """The scores with their values converted to floats by ``mapping``."""
    raw = np.empty(len(scores), dtype=object)
    raw[:] = [s.score.value for s in scores]
    floats, _ = convert_values(raw, [s.sample_id for s in scores], 0.5, mapping)
    return [
        SampleScore(Score(float(v), s.score.answer, s.score.explanation, s.score.metadata),
                    s.sample_id, s.epoch, s.sample_metadata)
        for s, v in zip(scores, floats)
    ]  # fmt: skip


@metric
def aggregate(key: str, agg: Any, on_missing: str = "error", to_float: Any = None) -> MetricFn:
    """The metric ``agg`` over field ``key`` of dict-valued scores.

    Each score ``{key: v, ...}`` becomes the score ``v``, and ``agg`` runs on those. A
    field that is absent or ``None`` follows ``on_missing``: ``"error"`` (an
    :class:`~assay.errors.InvalidInputError` naming the sample), ``"skip"`` (left out,
    which changes n) or ``"zero"`` (counted as 0.0). A NaN field is always left out.
    Undefined when every score is left out.

    Parameters
    ----------
    key
        The field of the dict values.
    agg
        A metric (``mean()``), its registered name, or its spec.
    on_missing
        ``"error"``, ``"skip"`` or ``"zero"``.
    to_float
        A :class:`~assay.stats.ValueMapping` (or its dict) converting the field's values
        before ``agg`` sees them. Without it the raw values reach ``agg``, whose own
        ``to_float`` (``accuracy(to_float=...)``) then applies, as in Inspect AI: so
        ``aggregate(key, accuracy(to_float=m))`` equals ``accuracy(to_float=m)`` on the field.

    Returns
    -------
    MetricFn
        Records of type ``Aggregate`` with parameters ``key``, ``agg`` (the inner type),
        ``agg_params`` and ``on_missing``; the value is the inner metric's.

    Examples
    --------
    >>> from assay.stats import Score, mean
    >>> aggregate("f1", mean(), on_missing="skip")([Score({"f1": 0.5}), Score({"em": 1})])
    0.5
    """
    if on_missing not in ON_MISSING:
        raise InvalidInputError(
            f"unknown on_missing {on_missing!r} (expected 'error', 'skip' or 'zero')",
            source="aggregate",
            field="on_missing",
        )
    inner = agg if isinstance(agg, MetricFn) else metric_from_spec(agg)
    mapping = as_mapping(to_float)

    def compute_(scores: list[SampleScore]) -> Any:
        extracted, _ = _extract(scores, key, on_missing)
        if not extracted:
            raise UndefinedMetricError("Aggregate", f"no score has a value for {key!r}")
        if mapping is not None:  # the field converted first, then agg's own conversion
            extracted = _converted(extracted, mapping)
        return inner(extracted)  # agg converts with its own to_float, as in Inspect AI

    params = {"key": key, "agg": inner.name, "agg_params": inner.params, "on_missing": on_missing}
    if mapping is not None:
        params["to_float"] = mapping.to_dict()
    fn = MetricFn("Aggregate", params, compute_, takes="scores")
    fn.epoch_to_float = mapping if mapping is not None else inner.to_float
    if inner.spec is not None:
        fn.spec = {
            "metric": "Aggregate",
            "params": {
                "key": key,
                "agg": inner.spec,
                "on_missing": on_missing,
                "to_float": params.get("to_float"),
            },
        }
    return fn
