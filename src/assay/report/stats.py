"""Score statistics plots: per-group values (means, accuracies) with their intervals.

An interval is the record's own ``ci_low``/``ci_high`` when it has them; otherwise, when the
run has a ``Stderr`` record for the same group (and reducer), the normal 95% interval
value +- 1.96 SE, said so in the title.
"""

from __future__ import annotations

from typing import Any

from assay.report.figures import Figure, bar, figure, records, run_label
from assay.store.records import Evaluation

__all__ = ["figures"]

Z95 = 1.959963984540054
_SKIP = ("Stderr", "BootstrapStderr", "Var", "Std")


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
        for ev, found in pairs:
            stderr = {
                _key(m): m.value
                for m in records(ev, "Stderr", lambda m: isinstance(m.value, (int, float)))
                if m.parameters.get("cluster") is None
            }
            lows, highs = [], []
            for m in found:
                lo, hi, se = _interval(m, stderr)
                lows.append(lo)
                highs.append(hi)
                from_se |= se
            reducers = {m.parameters.get("reducer") for m in found}
            xs = [
                str(m.parameters["group"])
                + (f" ({m.parameters['reducer']})" if len(reducers) > 1 else "")
                for m in found
            ]
            has_ci = any(v is not None for v in lows)
            ys = [m.value for m in found]
            traces.append(
                bar(
                    xs,
                    ys,
                    run_label(ev),
                    low=lows if has_ci else None,
                    high=highs if has_ci else None,
                )
            )
        note = " (bars: value +- 1.96 SE)" if from_se else " (bars: confidence interval)"
        title = f"{type_} by {col}" + (note if any("error_y" in t for t in traces) else "")
        out.append(figure(title, traces, x_title=col, y_title=type_, barmode="group"))
    return out
