"""``ScoringTables``: the RSMTool-style tables, a named view derived from the evaluator.

The evaluator's ``compute()`` returns the Metric records; :meth:`ScoringEvaluator.tables`
(or :func:`assay.scoring.scoring_tables`) lays the same numbers out as RSMTool's intermediate
files: ``eval``, ``eval_short``, ``consistency``, ``degradation``,
``disattenuated_correlations``, ``true_score_eval``, and per group column ``eval_by_<col>``,
``consistency_by_<col>``, ``disattenuated_correlations_by_<col>``,
``fairness_metrics_by_<col>``. Undefined cells are NaN here; ``undefined`` lists each with
its reason.

Example:
    >>> import pandas as pd
    >>> from assay.scoring import scoring_tables
    >>> df = pd.DataFrame({"h": [1, 2, 3, 4], "m": [1.2, 2.4, 2.9, 3.6]})
    >>> t = scoring_tables(df, human="h", system="m")
    >>> list(t.tables)
    ['eval', 'eval_short']
    >>> format_value(-1e-17)
    '0.0000'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from assay.errors import InvalidInputError
from assay.io.files import safe_filename, write_files_atomic
from assay.results import MetricSet
from assay.scoring.build import Built
from assay.scoring.columns import INT_COLUMNS, SHORT_CONTINUOUS, SHORT_ROUNDED

__all__ = ["ScoringTables", "format_value", "UNDEFINED_CSV"]

UNDEFINED_CSV = "undefined_metrics.csv"
_UNDEFINED_COLUMNS = ["table", "row", "column", "reason"]


def format_value(v: Any, digits: int = 4, integers: bool = True) -> str:
    """A table cell as text: whole numbers plainly (with ``integers``), other numbers with
    ``digits`` decimals, never a negative zero such as ``-0.0000``.

    Example:
        >>> format_value(3.0), format_value(float("nan")), format_value(-0.00001, 3)
        ('3', 'undefined', '0.000')
        >>> format_value(3.0, 1, integers=False)
        '3.0'
    """
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    x = float(v)
    if x != x:
        return "undefined"
    if integers and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def _frame(rows: dict[Any, dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=list(columns))
    for c in df.columns:
        df[c] = df[c].astype("int64" if c in INT_COLUMNS else "float64")
    return df


def _eval_short(
    eval_rows: dict[Any, dict[str, Any]], system: str, smd_column: str = "SMD"
) -> pd.DataFrame:
    """RSMTool's default selection of ``eval`` columns, in one row (``DSM`` in place of
    ``SMD`` when ``eval`` has DSM, as RSMTool's ``filter_metrics``)."""
    rname = f"{system}_round"
    short = {c: eval_rows[system][c] for c in ("N", "h_mean", "h_sd")}
    for label, columns in ((system, SHORT_CONTINUOUS), (rname, SHORT_ROUNDED)):
        for c in columns:
            c = smd_column if c == "SMD" else c
            short[f"{c}.{label}"] = eval_rows[label][c]
    return pd.DataFrame([short])


@dataclass
class ScoringTables:
    """The tables (RSMTool names), the same numbers as Metric records, and what was dropped.

    ``tables[name]`` (or ``self[name]``) is a DataFrame; ``metrics`` the records
    ``compute()`` returns; ``dropped`` counts the responses left out by reason;
    ``undefined`` lists every empty cell (``table``, ``row``, ``column``, ``reason``);
    ``notes`` says in words what was not computed and why (e.g. no ``true_score_eval`` with
    one rater).
    """

    tables: dict[str, pd.DataFrame]
    metrics: MetricSet
    dropped: dict[str, int] = field(default_factory=dict)
    undefined: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=_UNDEFINED_COLUMNS)
    )
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_built(cls, built: Built, metrics: MetricSet | None = None) -> ScoringTables:
        """The DataFrames of one computation."""
        tables: dict[str, pd.DataFrame] = {}
        for name in built.order:
            if name in built.frames:
                tables[name] = built.frames[name]
            else:
                tables[name] = _frame(built.rows[name], built.columns[name])
            if name == "eval":
                tables["eval_short"] = _eval_short(
                    built.rows["eval"], built.system, built.smd_column
                )
        undef = pd.DataFrame(built.undefined, columns=_UNDEFINED_COLUMNS)
        return cls(
            tables=tables,
            metrics=metrics if metrics is not None else MetricSet(built.records),
            dropped=dict(built.dropped),
            undefined=undef,
            notes=list(built.notes),
        )

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def file_names(self, prefix: str = "") -> dict[str, str]:
        """Table name -> CSV file name: one safe path component each, never two the same.

        Names derived from data (a group column ``x/../y``) are made safe with
        :func:`assay.io.files.safe_filename`; names that would then collide get a short hash
        of the table name.
        """
        plain = {name: safe_filename(f"{prefix}{name}") for name in self.tables}
        seen: dict[str, int] = {}
        for stem in plain.values():
            seen[stem] = seen.get(stem, 0) + 1
        seen[safe_filename(f"{prefix}undefined_metrics")] = 2  # reserved
        out = {}
        for name, stem in plain.items():
            if seen[stem] > 1:
                stem += "-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
            out[name] = stem + ".csv"
        return out

    def csv_files(self, prefix: str = "") -> dict[str, str]:
        """Every table as CSV text keyed by its file name, plus ``undefined_metrics.csv``."""
        names = self.file_names(prefix)
        files = {names[name]: table.to_csv(index=True) for name, table in self.tables.items()}
        files[safe_filename(f"{prefix}undefined_metrics") + ".csv"] = self.undefined.to_csv(
            index=False
        )
        if len(files) != len(self.tables) + 1:  # pragma: no cover - file_names guarantees it
            raise InvalidInputError("two tables map to one file name", source="tables")
        return files

    def write_csv(self, out_dir: str | Path, prefix: str = "") -> list[Path]:
        """Write every table as ``<prefix><name>.csv`` into ``out_dir``, all or nothing.

        Returns the paths written. The files appear together (a failure leaves the folder as
        it was) and always inside ``out_dir``, whatever the group column names.
        """
        return write_files_atomic(out_dir, self.csv_files(prefix))
