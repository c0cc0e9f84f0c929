"""Stored runs side by side: :func:`compare` (``assay compare``).

Records of different runs are matched by ``type`` and their *identifying* parameters:
every parameter except the ones that describe a value's precision or support rather than
what it measures (:data:`NOT_IDENTITY`: ``n`` and the failure counts, ``stderr``, the
interval keys ``ci_low``, ``ci_high``, ``confidence_level``, ``ci_method``,
``num_bootstrap``, ``seed``, ``ci_undefined``, a slice's ``gap`` and its interval, the
reason a value is ``undefined``, per-datum ``details`` and an imported run's
``assay_value``). Only scalar values are compared (counts and curves are dicts; ``assay
runs show`` has them).

The first run is the baseline. For every other run ``r`` the frame has ``diff_r`` =
``value_r - value_base`` and, where both records carry an interval (``ci_low``/``ci_high``),
``overlap_r``: whether the two intervals share a point (``True``/``False``; ``None`` without
intervals). Non-overlapping 95% intervals mean the difference is significant at well below
5%; overlapping ones do not mean it is not (see docs/report.md).

Example:
    >>> from datetime import datetime, UTC
    >>> from assay.results import Metric, MetricSet
    >>> def run(i, acc, lo, hi):
    ...     ms = MetricSet([Metric("Accuracy", acc, {"label_key": "class", "ci_low": lo,
    ...                                              "ci_high": hi})])
    ...     return Evaluation(i, datetime(2026, 1, i, tzinfo=UTC), None, "classification",
    ...                       "iris", f"m{i}", {}, "finished", None, "0", metrics=ms)
    >>> df = compare([run(1, 0.80, 0.75, 0.85), run(2, 0.90, 0.86, 0.94)])
    >>> row = df.iloc[0]
    >>> row["type"], row["parameters"], round(row["diff_2"], 6), row["overlap_2"]
    ('Accuracy', 'label_key=class', 0.1, False)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.results import Metric
from assay.store.records import Evaluation

if TYPE_CHECKING:
    import pandas as pd

    from assay.store.store import Store

__all__ = ["compare", "identity", "NOT_IDENTITY", "intervals_overlap"]

#: Parameters that describe a value's precision or support, not what it measures.
NOT_IDENTITY = frozenset(
    {
        "n",
        "n_errors",
        "n_failed",
        "n_undefined",
        "stderr",
        "ci_low",
        "ci_high",
        "confidence",
        "confidence_level",
        "ci_method",
        "num_bootstrap",
        "seed",
        "undefined",
        "details",
        "labels_excluded",
        "ci_undefined",
        "gap",
        "gap_ci_low",
        "gap_ci_high",
        "assay_value",
    }
)


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True, separators=(",", ":"), allow_nan=False)


def identity(m: Metric) -> tuple[str, str]:
    """``(type, "k=v, ...")``: the key two runs' records are matched by.

    Example:
        >>> identity(Metric("Mean", 0.5, {"n": 10, "group": "a", "stderr": 0.1}))
        ('Mean', 'group=a')
    """
    items = sorted((k, v) for k, v in m.parameters.items() if k not in NOT_IDENTITY)
    return str(m.type), ", ".join(f"{k}={_text(v)}" for k, v in items)


def _scalar(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def intervals_overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool | None:
    """Whether two closed intervals share a point; ``None`` if either is missing.

    Example:
        >>> intervals_overlap((0.1, 0.3), (0.3, 0.5)), intervals_overlap((0.1, 0.2), (0.3, 0.4))
        (True, False)
    """
    if a is None or b is None:
        return None
    return bool(a[0] <= b[1] and b[0] <= a[1])


def _interval(m: Metric) -> tuple[float, float] | None:
    lo, hi = _scalar(m.parameters.get("ci_low")), _scalar(m.parameters.get("ci_high"))
    return None if lo is None or hi is None else (lo, hi)


def _table(ev: Evaluation) -> dict[tuple[str, str, int], Metric]:
    """The run's scalar records by (type, identity, occurrence)."""
    out: dict[tuple[str, str, int], Metric] = {}
    seen: dict[tuple[str, str], int] = {}
    for m in ev.metrics or []:
        if m.value is not None and _scalar(m.value) is None:
            continue  # dicts (counts, curves) and text are not compared
        key = identity(m)
        k = seen[key] = seen.get(key, -1) + 1
        out[(*key, k)] = m
    return out


def _load(runs: Iterable[Evaluation | int], store: Store | None) -> list[Evaluation]:
    evs: list[Evaluation] = []
    for r in runs:
        if isinstance(r, Evaluation) and r.metrics is not None:
            evs.append(r)
            continue
        if store is None:
            raise InvalidInputError(
                "a run given by id (or without metrics) needs store=", source="compare"
            )
        evs.append(store.get(r.id if isinstance(r, Evaluation) else int(r)))
    if len(evs) < 2:
        raise InvalidInputError(f"needs at least two runs, got {len(evs)}", source="compare")
    ids = [e.id for e in evs]
    if len(set(ids)) != len(ids):
        raise InvalidInputError("a run is named twice", source="compare", field="runs")
    if len({e.kind for e in evs}) > 1:  # nothing would match: every row half empty
        kinds = ", ".join(f"{e.id} is {e.kind}" for e in evs)
        raise InvalidInputError(
            f"runs of different kinds have no records in common ({kinds})", source="compare"
        )
    return evs


def compare(runs: Sequence[Evaluation | int], *, store: Store | None = None) -> pd.DataFrame:
    """Scalar metrics of several runs side by side, with differences and interval overlap.

    Args:
        runs: stored evaluations (with metrics) or their ids (then ``store`` is needed);
            the first is the baseline.
        store: where to load runs given by id.

    Returns:
        One row per record matched by type and identifying parameters (first appearance
        order): ``type``, ``parameters``, ``value_<id>`` per run, ``diff_<id>`` and
        ``overlap_<id>`` per non-baseline run, and ``ci_low_<id>``/``ci_high_<id>`` when
        any record of that run has an interval. A record missing from a run is ``None``.
    """
    import pandas as pd

    evs = _load(runs, store)
    tables = [_table(e) for e in evs]
    keys: dict[tuple[str, str, int], None] = {}
    for t in tables:
        keys.update(dict.fromkeys(t))
    has_ci = [any(_interval(m) for m in t.values()) for t in tables]
    base_id, base = evs[0].id, tables[0]
    rows = []
    for key in keys:
        row: dict[str, Any] = {"type": key[0], "parameters": key[1]}
        if key[2]:
            row["parameters"] += f" (#{key[2] + 1})"
        for e, t, ci in zip(evs, tables, has_ci):
            m = t.get(key)
            row[f"value_{e.id}"] = None if m is None else _scalar(m.value)
            if ci:
                iv = None if m is None else _interval(m)
                row[f"ci_low_{e.id}"], row[f"ci_high_{e.id}"] = iv or (None, None)
        b = base.get(key)
        for e, t in zip(evs[1:], tables[1:]):
            m = t.get(key)
            va = None if b is None else _scalar(b.value)
            vb = None if m is None else _scalar(m.value)
            row[f"diff_{e.id}"] = None if va is None or vb is None else vb - va
            row[f"overlap_{e.id}"] = intervals_overlap(
                None if b is None else _interval(b), None if m is None else _interval(m)
            )
        rows.append(row)
    df = pd.DataFrame(rows, dtype=object)
    df.attrs["runs"] = [e.id for e in evs]
    df.attrs["baseline"] = base_id
    return df


def finite_or_none(v: Any) -> Any:
    """``None`` for NaN (JSON-safe cells)."""
    return None if isinstance(v, float) and math.isnan(v) else v
