"""The pre-0.2 result shape of ``evaluate_scoring`` (``ScoringResult``), kept for one release.

``evaluate_scoring`` and ``ScoringEvaluator.compute`` now return a :class:`MetricSet`; the
tables are the named view :class:`~assay.scoring.tables.ScoringTables`
(``ScoringEvaluator.tables()`` / ``scoring_tables(...)``). The set they return still answers
the old ``ScoringResult`` calls (``res["eval"]``, ``res.tables``, ``res.metrics``,
``res.dropped``, ``res.undefined``, ``res.write_csv``), each with a ``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from assay.results import MetricSet
from assay.scoring.build import Built
from assay.scoring.tables import ScoringTables

__all__ = ["ScoringMetricSet"]


def _warn(what: str) -> None:
    warnings.warn(
        f"{what} on the result of evaluate_scoring/compute is deprecated: it is a MetricSet "
        "now; use ScoringEvaluator.tables() or scoring_tables(...) for the tables",
        DeprecationWarning,
        stacklevel=3,
    )


class ScoringMetricSet(MetricSet):
    """A :class:`MetricSet` that still answers the old ``ScoringResult`` calls (deprecated)."""

    def __init__(self, built: Built) -> None:
        super().__init__(built.records)
        self._built = built
        self._view: ScoringTables | None = None

    def _tables_view(self) -> ScoringTables:
        if self._view is None:
            self._view = ScoringTables.from_built(self._built, MetricSet(self))
        return self._view

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, str):
            _warn("res[name]")
            return self._tables_view().tables[i]
        return super().__getitem__(i)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        _warn("res.tables")
        return self._tables_view().tables

    @property
    def metrics(self) -> MetricSet:
        _warn("res.metrics")
        return MetricSet(self)

    @property
    def dropped(self) -> dict[str, int]:
        _warn("res.dropped")
        return dict(self._built.dropped)

    @property
    def undefined(self) -> pd.DataFrame:
        _warn("res.undefined")
        return self._tables_view().undefined

    def write_csv(self, out_dir: str | Path, prefix: str = "") -> list[Path]:
        _warn("res.write_csv()")
        return self._tables_view().write_csv(out_dir, prefix)
