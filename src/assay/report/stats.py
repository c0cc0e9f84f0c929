"""Score statistics plots: per-group values (means, accuracies) with their intervals.

An interval is the record's own ``ci_low``/``ci_high`` when it has them; otherwise, when the
run has a ``Stderr`` record for the same group (and reducer), the normal 95% interval
value +- 1.96 SE, said so in the title. Groups are in their natural order (numbers as
numbers, else by name); each run and reducer is one series of one colour, named in the
legend, so a group's label is its name alone (never ``6 (mean)``).
"""

from __future__ import annotations

from typing import Any

from assay.report.figures import Figure, bar, figure, records, run_label
from assay.stats.metric_types import METRICS
from assay.store.records import Evaluation

__all__ = ["figures", "group_order"]

Z95 = 1.959963984540054
#: Not plotted by group: the dispersions and standard errors (the table's ``spread`` family).
_SKIP = METRICS.family("spread")


def _key(m: Any) -> tuple[Any, ...]:
    p = m.parameters
    return (p.get("group_column"), str(p.get("group")), p.get("reducer"))


def _interval(m: Any, stderr: dict[tuple[Any, ...], float]) -> tuple[Any, Any, bool]:
    lo, hi = m.parameters.get("ci_low"), m.parameters.get("ci_high")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        return lo, hi, False
    se = stderr.get(_key(m))
    if se is None or m.value is None:
        return None, None, False
    return m.value - Z95 * se, m.value + Z95 * se, True


def group_order(groups: list[str]) -> list[str]:
    """Groups in their natural order: as numbers when all are numbers, else by name.

    The whole set (group ``all``) comes first.

    Example:
        >>> group_order(["10", "9", "1"]), group_order(["b", "all", "a"])
        (['1', '9', '10'], ['all', 'a', 'b'])
    """
    head = [g for g in groups if g == "all"]
    rest = [g for g in groups if g != "all"]
    try:
        return head + sorted(rest, key=float)
    except ValueError:
        return head + sorted(rest)


def figures(runs: list[Evaluation]) -> list[Figure]:
    """One figure per metric type and group column: a bar per group, error bars."""
    groups: dict[tuple[str, str], list[tuple[Evaluation, list[Any]]]] = {}
    for ev in runs:
        by: dict[tuple[str, str], list[Any]] = {}
        for m in ev.metrics or []:
            p = m.parameters
            if "group_column" in p and m.type not in _SKIP and isinstance(m.value, (int, float)):
                by.setdefault((m.type, str(p["group_column"])), []).append(m)
        for k, found in by.items():
            groups.setdefault(k, []).append((ev, found))
    out = []
    for (type_, col), pairs in groups.items():
        traces, from_se = [], False
        order = group_order(list({str(m.parameters["group"]) for _, f in pairs for m in f}))
        for ev, found in pairs:
            stderr = {
                _key(m): m.value
                for m in records(ev, "Stderr", lambda m: isinstance(m.value, (int, float)))
                if m.parameters.get("cluster") is None
            }
            reducers = list(dict.fromkeys(m.parameters.get("reducer") for m in found))
            for reducer in reducers:
                mine = {
                    str(m.parameters["group"]): m
                    for m in found
                    if m.parameters.get("reducer") == reducer
                }
                xs = [g for g in order if g in mine]
                lows, highs = [], []
                for g in xs:
                    lo, hi, se = _interval(mine[g], stderr)
                    lows.append(lo)
                    highs.append(hi)
                    from_se |= se
                has_ci = any(v is not None for v in lows)
                name = run_label(ev) + (f" · {reducer}" if len(reducers) > 1 and reducer else "")
                traces.append(
                    bar(
                        xs,
                        [mine[g].value for g in xs],
                        name,
                        low=lows if has_ci else None,
                        high=highs if has_ci else None,
                    )
                )
        note = " (bars: value +- 1.96 SE)" if from_se else " (bars: confidence interval)"
        title = f"{type_} by {col}" + (note if any("error_y" in t for t in traces) else "")
        out.append(
            figure(
                title,
                traces,
                x_title=col,
                y_title=type_,
                barmode="group",
                caption="stats_by_group",
                wide=len(order) * len(traces) > 24,
                xaxis={"type": "category"},
            )
        )
    return out
