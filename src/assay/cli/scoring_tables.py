"""The scoring tables on a terminal: the ``--format table`` output of ``assay scoring`` and
``assay rsmeval`` (the main tables transposed, one column per score; NaN as 'undefined').

rich and pandas are imported when a table is printed, so the commands' ``--help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from assay.cli.support import cell

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["frame_table", "print_tables"]

#: the tables printed transposed (a row per score column), in this order
MAIN = ("eval", "consistency", "true_score_eval")


def frame_table(df: pd.DataFrame, title: str) -> Any:
    """A rich table of a small DataFrame (index first; NaN shown as 'undefined')."""
    from rich.table import Table

    from assay.scoring.tables import format_value  # pandas: only when a table is printed

    t = Table(title=cell(title))
    t.add_column("")
    for c in df.columns:
        t.add_column(cell(c), justify="right")
    for idx, row in df.iterrows():
        t.add_row(cell(idx), *(cell(format_value(v)) for v in row))
    return t


def print_tables(tables: Mapping[str, pd.DataFrame], *, by_group: bool = False) -> None:
    """Print the main tables of ``tables`` that exist (and, with ``by_group``, every
    ``fairness_metrics_by_<col>`` table as it is)."""
    from rich.console import Console

    console = Console()
    for name in MAIN:
        if name in tables:
            console.print(frame_table(tables[name].T, title=name))
    if by_group:
        for name, table in tables.items():
            if name.startswith("fairness_metrics_by_"):
                console.print(frame_table(table, title=name))
