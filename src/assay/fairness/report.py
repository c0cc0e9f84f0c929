"""A readable view of fairness records (``assay fairness --format table``).

It reads the records an evaluator computed and recomputes nothing:

* one grid per group column (and per control level), laid out like fairlearn's
  ``MetricFrame.by_group``: a row per group with its size ``n`` and ``SelectionRate``,
  ``TruePositiveRate``, ``FalsePositiveRate``, ``Accuracy``; the aggregates over the grid
  (demographic parity and equalized odds, difference and ratio) below it;
* one grid of the privileged-group definitions (``--sensitive``): a row per definition and
  one for their mean, a column per metric;
* the overall accuracy, precision and recall;
* with slices (``by``), one grid per slice column: a row per slice and metric with the
  slice's size, value and gap to the whole set.

An undefined value shows as ``-``; its reason is in the JSON records.

Example:
    >>> from assay.fairness import FairnessEvaluator
    >>> ev = FairnessEvaluator(group_columns=["g"]).add_arrays(
    ...     [1, 0, 1, 0], [1, 0, 0, 0], group_values={"g": ["a", "a", "b", "b"]})
    >>> grids = fairness_tables(ev.compute())
    >>> [str(t.title) for t in grids]
    ['by group: g', 'overall']
    >>> grids[0].row_count, [c.header for c in grids[0].columns]
    (2, ['group', 'n', 'SelectionRate', 'TPR', 'FPR', 'Accuracy'])
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from assay.fairness.declared import METRICS
from assay.results import Metric, MetricSet
from assay.terminal import printable, value_text

if TYPE_CHECKING:  # rich loads when a table is printed (not for --format json)
    from rich.table import Table
    from rich.text import Text

__all__ = ["fairness_tables"]

#: record type -> column header (short enough for 80 columns; the legend spells them out)
RATES = {t: METRICS[t].label for t in METRICS.family("rates")}
#: the definitions' types -> their short names
DEFINITION_METRICS = {t: METRICS[t].label for t in METRICS.family("definition")}
OVERALL = METRICS.family("overall")


def _aggregate_words(t: str) -> tuple[str, str]:
    """``DemographicParityRatio`` -> ``("demographic parity", "ratio")``."""
    words = re.findall(r"[A-Z][a-z]*", t)
    return " ".join(w.lower() for w in words[:-1]), words[-1].lower()


AGGREGATES = {t: _aggregate_words(t) for t in METRICS.family("aggregate")}


def _num(v: Any) -> str:
    """A value, or a record's value with its interval (``0.8420 [0.8100, 0.8700]``)."""
    return value_text(v.value, v.parameters) if isinstance(v, Metric) else value_text(v)


def _text(v: Any) -> str:
    return ", ".join(map(str, v)) if isinstance(v, list) else str(v)


def _shown(v: str) -> Text:
    """Data (a group name, a column) as a cell or title: verbatim, control codes escaped."""
    from rich.text import Text

    return Text(printable(v))


def _grid_key(m: Metric) -> str:
    """What one by-group grid shares: the group column and the control level."""
    p = m.parameters
    keep = {k: p[k] for k in ("group_column", "control_column", "control") if k in p}
    return json.dumps(keep, default=str)


def _grid_title(m: Metric) -> str:
    p = m.parameters
    column = p["group_column"]
    title = "by group: " + (" × ".join(column) if isinstance(column, list) else str(column))
    if "control_column" in p:
        title += f" | {_text(p['control_column'])} = {_text(p['control'])}"
    return title + (" (weighted)" if p.get("weighted") else "")


def _caption(aggregates: list[Metric]) -> str | None:
    """``demographic parity: difference 0.07, ratio 0.86; equalized odds (worst_case): ...``"""
    parts: dict[str, list[str]] = {}
    for m in aggregates:
        family, kind = AGGREGATES[m.type]
        agg = m.parameters.get("agg")
        parts.setdefault(family + (f" ({agg})" if agg else ""), []).append(f"{kind} {_num(m)}")
    lines = [f"{family}: {', '.join(values)}" for family, values in parts.items()]
    if aggregates:
        lines.append(
            f"method {aggregates[0].parameters['method']}; TPR/FPR: true/false positive rate"
        )
    return "\n".join(lines) or None


def _by_group_grid(records: list[Metric]) -> Table:
    from rich.table import Table

    rows: dict[str, dict[str, Any]] = {}
    for m in records:
        if m.type in AGGREGATES:
            continue
        row = rows.setdefault(_text(m.parameters["group"]), {})
        if m.type == "GroupCounts":
            row["n"] = sum(m.value[k] for k in ("tp", "fp", "fn", "tn"))
        else:
            row[m.type] = m
    caption = _caption([m for m in records if m.type in AGGREGATES])
    table = Table(title=_shown(_grid_title(records[0])), caption=caption)
    table.add_column("group", style="bold")
    for header in ("n", *RATES.values()):
        table.add_column(header, justify="right")
    for group, row in rows.items():
        n = row.get("n")
        table.add_row(
            _shown(group), "-" if n is None else str(n), *(_num(row.get(r)) for r in RATES)
        )
    return table


def _definitions_grid(records: list[Metric]) -> Table:
    from rich.table import Table

    rows: dict[str, dict[str, Any]] = {}
    for m in records:
        p = m.parameters
        k = len(p.get("average_over", []))
        if k == 1:
            continue  # the mean of one definition is that definition's row
        name = p.get("privileged") or f"mean over {k} definition{'s' * (k != 1)}"
        rows.setdefault(name, {})[m.type] = m
    legend = ", ".join(f"{short} = {name}" for name, short in DEFINITION_METRICS.items())
    weighted = " (weighted)" if records[0].parameters.get("weighted") else ""
    table = Table(title="privileged groups (--sensitive)" + weighted, caption=legend)
    table.add_column("privileged", style="bold")
    for header in DEFINITION_METRICS.values():
        table.add_column(header, justify="right")
    for name, row in rows.items():
        table.add_row(_shown(name), *(_num(row.get(t)) for t in DEFINITION_METRICS))
    return table


def _slice_grid(column: str, records: list[Metric]) -> Table:
    """A row per slice and metric: the slice, its size, the metric, its value and gap."""
    from rich.table import Table

    table = Table(title=_shown(f"slices: {column}"), caption="gap: the slice's value minus the "
                  "whole set's")  # fmt: skip
    for header in ("slice", "n", "metric", "value", "gap"):
        table.add_column(header, justify="left" if header in ("slice", "metric") else "right")
    for m in records:
        p = m.parameters
        short = DEFINITION_METRICS.get(m.type, m.type)
        where = p.get("privileged") or _text(p.get("group_column", ""))
        if "control_column" in p:
            where += f" | {_text(p['control_column'])} = {_text(p['control'])}"
        metric = f"{short} ({where})"
        gap = value_text(p.get("gap"), p, prefix="gap_")
        table.add_row(
            _shown("null" if p["slice"] is None else str(p["slice"])),
            str(p["n"]),
            _shown(metric),
            _num(m),
            gap,
        )
    return table


def fairness_tables(metrics: MetricSet) -> list[Table]:
    """The by-group grids, the definitions grid, the overall numbers and the slices, as rich
    tables."""
    from rich.table import Table

    grids: dict[str, list[Metric]] = {}
    definitions: list[Metric] = []
    overall: list[Metric] = []
    slices: dict[str, list[Metric]] = {}
    for m in metrics:
        p = m.parameters
        if "slice_column" in p:
            slices.setdefault(str(p["slice_column"]), []).append(m)
        elif "group_column" in p and ("group" in p or "method" in p) and "privileged" not in p:
            grids.setdefault(_grid_key(m), []).append(m)
        elif m.type in DEFINITION_METRICS:
            definitions.append(m)
        elif m.type in OVERALL and "group_column" not in p:
            overall.append(m)
    tables = [_by_group_grid(records) for records in grids.values()]
    if definitions:
        tables.append(_definitions_grid(definitions))
    if overall:
        weighted = " (weighted)" if overall[0].parameters.get("weighted") else ""
        table = Table(title="overall" + weighted)
        for m in overall:
            table.add_column(m.type, justify="right")
        table.add_row(*(_num(m) for m in overall))
        tables.append(table)
    return tables + [_slice_grid(c, records) for c, records in slices.items()]
