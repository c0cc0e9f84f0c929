"""Render a :class:`~assay.results.MetricSet` as a rich table for people.

Flat dict values (counts) are shown as ``k=v`` pairs; larger or nested ones (curves) are
summarised by their size so that the table stays readable; the JSON output carries them
in full. Parameters get twice the room (160 characters), since they tell records apart, and
their column folds rather than cuts: a label or slice is never shown in part. A record's
interval is shown with its value, ``0.8420 [0.8100, 0.8700]`` (and a slice's gap with its
own, ``gap=-0.0500 [-0.0900, -0.0100]``), as the JSON's ``ci_low``/``ci_high`` say.
"""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table
from rich.text import Text

from assay.results import MetricSet
from assay.terminal import printable, value_text

__all__ = ["metrics_table"]


def _fmt(v: Any, *, parameter: bool = False) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:g}" if parameter else f"{v:.4f}"
    if isinstance(v, dict):
        if all(isinstance(x, (int, float, str, type(None))) for x in v.values()):
            # Flat dicts (counts) read as k=v pairs; curves and nested values are summarised.
            text = ", ".join(f"{k}={_fmt(x, parameter=True)}" for k, x in v.items())
        else:
            text = json.dumps(v)
        # A parameter identifies its record (two mappings must read apart): more room.
        return text if len(text) <= (160 if parameter else 80) else f"{{{len(v)} entries}}"
    return str(v)


def metrics_table(metrics: MetricSet, title: str | None = None) -> Table:
    """A rich Table with one row per metric: type, parameters, value.

    Example:
        >>> from assay.results import Metric, MetricSet
        >>> t = metrics_table(MetricSet([Metric("Accuracy", 0.9)]))
        >>> t.row_count
        1
        >>> import io
        >>> from rich.console import Console
        >>> c = Console(width=80, file=io.StringIO(), record=True)
        >>> c.print(metrics_table(MetricSet([Metric("Accuracy", 1.0, {"group": "[bold]x[/]"})])))
        >>> "group=[bold]x[/]" in c.export_text()
        True
        >>> _fmt({"tp": 3, "fp": 1}), _fmt({str(t): [0.5] * 3 for t in range(20)})
        ('tp=3, fp=1', '{20 entries}')
        >>> mapping = {"correct": "C", "incorrect": "I", "partial": "P", "values": {"P": 0.5}}
        >>> _fmt(mapping, parameter=True)
        '{"correct": "C", "incorrect": "I", "partial": "P", "values": {"P": 0.5}}'
    """
    table = Table(title=None if title is None else Text(printable(title)))
    # Cells are Text: labels and parameters from the data are shown verbatim, never as markup.
    table.add_column("metric", style="bold", overflow="fold")
    table.add_column("parameters", overflow="fold", ratio=3)
    table.add_column("value", justify="right", overflow="fold", ratio=1)
    for m in metrics:
        p = m.parameters
        shown = [k for k in p if k not in _WITH_VALUE]
        params = ", ".join(
            f"{k}={value_text(p[k], p, prefix='gap_')}"
            if k == "gap" and p[k] is not None
            else f"{k}={_fmt(p[k], parameter=True)}"
            for k in shown
        )
        value = value_text(m.value, p) if isinstance(m.value, (int, float)) else _fmt(m.value)
        if m.value is None and "undefined" in p:
            value = f"undefined ({p['undefined']})"
        table.add_row(Text(printable(m.type)), Text(printable(params)), Text(printable(value)))
    return table


#: Parameters shown with the value (or the gap) rather than as ``k=v``.
_WITH_VALUE = ("undefined", "ci_low", "ci_high", "gap_ci_low", "gap_ci_high")
