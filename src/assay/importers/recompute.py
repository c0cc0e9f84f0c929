"""A harness's own metrics beside assay's recomputation of them from the per-sample scores.

An imported run keeps the harness's numbers as its records (they are what the harness
reported), typed and parametrised as assay's own stats records are (``Accuracy``,
``Stderr`` with ``reducer``, ``n``, ``n_failed``) so that ``assay compare`` lines them
up with assay's runs, plus ``scorer`` and ``log_metric`` (the metric's name in the log).
Each one that assay knows is recomputed from the samples with :mod:`assay.stats`; where
the two differ by more than :data:`TOLERANCE` (relative) the record also carries
``assay_value`` and a notice says so. A metric assay does not know, or one that is random
(``bootstrap_stderr``), is kept as reported with ``recomputed: false``.

Example:
    >>> from assay.stats.score import SampleScore, Score
    >>> s = [SampleScore(Score(v), i, 1) for i, v in enumerate([1.0, 0.0, 1.0, 1.0])]
    >>> recs, notes = reported_records(s, [("accuracy", 0.75, {})], None, scorer="match")
    >>> recs[0].type, recs[0].value, recs[0].parameters["n"], notes
    ('Accuracy', 0.75, 4, [])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidInputError
from assay.results import Metric, record

__all__ = ["reported_records", "assay_records", "assay_metric", "TOLERANCE", "NOT_RECOMPUTED"]

#: the relative difference above which a reported value and assay's are called different
TOLERANCE = 1e-12
#: metrics that are random draws: never recomputed (a second draw would differ)
NOT_RECOMPUTED = frozenset({"bootstrap_stderr"})


def _short(name: str) -> str:
    """``inspect_ai/accuracy`` -> ``accuracy``."""
    return name.rsplit("/", 1)[-1]


def assay_metric(name: str, params: dict[str, Any]) -> Any:
    """assay's metric of that name and parameters, or ``None`` where it has none."""
    from assay.stats.metric_registry import get_metric

    if _short(name) in NOT_RECOMPUTED:
        return None
    try:
        return get_metric(_short(name), **params)
    except (InvalidInputError, TypeError):
        return None


def _reducer(name: str | None) -> Any:
    from assay.stats.spec_text import reducer_from_text

    try:
        return reducer_from_text(name or "mean")
    except InvalidInputError:
        return None


def assay_records(scores: Sequence[Any], metric: Any, reducer: Any) -> list[Metric]:
    """assay's records of one metric over the scores, after ``reducer``."""
    from assay.stats.evaluator import ScoreEvaluator

    return list(ScoreEvaluator([metric], [reducer]).add(list(scores)).compute())


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _differs(reported: float, mine: float) -> bool:
    if math.isnan(reported) or math.isnan(mine):
        return math.isnan(reported) != math.isnan(mine)
    return abs(reported - mine) > TOLERANCE * max(1.0, abs(reported))


def reported_records(
    scores: Sequence[Any],
    reported: Sequence[tuple[str, Any, dict[str, Any]]],
    reducer: str | None,
    *,
    scorer: str,
    labels: Sequence[str] | None = None,
    **extra: Any,
) -> tuple[list[Metric], list[str]]:
    """The reported metrics ``(name, value, params)`` of one scorer as records, each
    checked against assay's recomputation; returns the records and the notices.

    A metric whose reported value is ``None`` (the log has none) gets assay's value.
    ``labels``: each metric's name in the log when it is not ``name`` (lm-eval's
    ``acc_stderr,none`` reported as assay's ``stderr``); ``extra``: more parameters of
    every record (lm-eval's ``filter``).
    """
    red = _reducer(reducer)
    out: list[Metric] = []
    notes: list[str] = []
    for i, (name, value, params) in enumerate(reported):
        label = labels[i] if labels is not None else name
        metric = None if red is None else assay_metric(name, params)
        mine = [] if metric is None or not scores else assay_records(scores, metric, red)
        if value is None and len(mine) == 1:  # not reported: assay's number is the record
            m = mine[0]
            out.append(Metric(m.type, m.value, {**m.parameters, "scorer": scorer, **extra}))
            continue
        if len(mine) != 1 or _number(value) is None:
            out.append(record(_short(name), value, scorer=scorer, **extra, log_metric=label,
                              recomputed=False))  # fmt: skip
            continue
        ours = mine[0]
        params_out = {**ours.parameters, "scorer": scorer, **extra, "log_metric": label}
        theirs, assays = _number(value), _number(ours.value)
        if assays is None or (theirs is not None and _differs(theirs, assays)):
            params_out["assay_value"] = ours.value
            notes.append(
                f"scorer {scorer!r}, metric {label!r}: the log says {value!r}, "
                f"assay computes {ours.value!r} from the samples"
            )
        out.append(Metric(ours.type, value, params_out))
    return out, notes
