"""Render a :class:`~assay.results.MetricSet` as a rich table for people.

Flat dict values (counts) are shown as ``k=v`` pairs; larger or nested ones (curves) are
summarised by their size so that the table stays readable; the JSON output carries them
in full. Parameters get twice the room (160 characters), since they tell records apart.
"""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table
from rich.text import Text

from assay.results import MetricSet
from assay.terminal import printable

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
    table.add_column("metric", style="bold")
    table.add_column("parameters")
    table.add_column("value", justify="right")
    for m in metrics:
        params = ", ".join(
            f"{k}={_fmt(v, parameter=True)}" for k, v in m.parameters.items() if k != "undefined"
        )
        value = _fmt(m.value)
        if m.value is None and "undefined" in m.parameters:
            value = f"undefined ({m.parameters['undefined']})"
        table.add_row(Text(printable(m.type)), Text(printable(params)), Text(printable(value)))
    return table
