"""The scoring evaluator: accumulate batches, merge, and build RSMTool's tables.

:class:`ScoringEvaluator` keeps only mergeable sufficient statistics (``stats.py``), so a
100-million-row stream or a Dask cluster computes exactly what one batch would.
:func:`evaluate_scoring` is the one-call form. Tables are named and laid out like RSMTool's
intermediate files (see ``docs/scoring.md``):

``eval``, ``eval_short``, ``consistency``, ``degradation``, ``disattenuated_correlations``,
``true_score_eval``, ``eval_by_<subgroup>``, ``consistency_by_<subgroup>``,
``disattenuated_correlations_by_<subgroup>`` and ``fairness_metrics_by_<subgroup>`` (tables that
need a second human score appear only when one is given).

The system score appears twice, as in RSMTool (``raw_trim`` / ``raw_trim_round``): as given
(row ``<system>``) and rounded half to even (row ``<system>_round``). Cohen's kappa rounds both
scores in either row (SKLL semantics), and exact agreement compares the scores as given.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"h": [1, 2, 3, 4, 2, 3], "m": [1.2, 2.4, 2.9, 3.6, 2.2, 3.4], "g": list("aabbab")})
    >>> res = evaluate_scoring(df, human="h", system="m", subgroups=["g"])
    >>> sorted(res.tables)
    ['eval', 'eval_by_g', 'eval_short', 'fairness_metrics_by_g']
    >>> round(float(res.tables["eval"].loc["m", "wtkappa"]), 4)
    0.9398
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.results import Metric, MetricSet, undefined
from assay.scoring.compute import DSM_SD_ATOL
from assay.scoring.fairness import FAIRNESS_METRICS, fairness_from_cells
from assay.scoring.fast import LevelCoded, grouped_pair_stats, level_code
from assay.scoring.stats import CellStats, PairStats, TrueScoreStats
from assay.scoring.types import ScoringData

__all__ = ["ScoringEvaluator", "ScoringResult", "evaluate_scoring", "EVAL_COLUMNS", "METRIC_TYPES"]

EVAL_COLUMNS = (
    "N",
    "h_mean",
    "h_sd",
    "h_min",
    "h_max",
    "sys_mean",
    "sys_sd",
    "sys_min",
    "sys_max",
    "corr",
    "wtkappa",
    "R2",
    "kappa",
    "exact_agr",
    "adj_agr",
    "SMD",
    "RMSE",
    "MSE",
)
CONSISTENCY_COLUMNS = (
    "N",
    "h1_mean",
    "h1_sd",
    "h1_min",
    "h1_max",
    "h2_mean",
    "h2_sd",
    "h2_min",
    "h2_max",
    "corr",
    "wtkappa",
    "kappa",
    "exact_agr",
    "adj_agr",
    "SMD",
)
SHORT_CONTINUOUS = ("sys_mean", "sys_sd", "wtkappa", "corr", "SMD", "RMSE", "R2")
SHORT_ROUNDED = ("sys_mean", "sys_sd", "kappa", "exact_agr", "adj_agr", "SMD")
DEGRADATION_COLUMNS = ("corr", "kappa", "wtkappa", "exact_agr", "adj_agr", "SMD")
DISATTENUATED_COLUMNS = ("corr_HM", "corr_HH", "sqrt_HH", "corr_disattenuated")
TRUE_SCORE_COLUMNS = (
    "N",
    "N raters",
    "N single",
    "N multiple",
    "Variance of errors",
    "True score var",
    "MSE true",
    "PRMSE true",
)

# table column -> stable Metric type
METRIC_TYPES = {
    "N": "N",
    "h_mean": "HumanMean",
    "h_sd": "HumanSD",
    "h_min": "HumanMin",
    "h_max": "HumanMax",
    "sys_mean": "SystemMean",
    "sys_sd": "SystemSD",
    "sys_min": "SystemMin",
    "sys_max": "SystemMax",
    "h1_mean": "Human1Mean",
    "h1_sd": "Human1SD",
    "h1_min": "Human1Min",
    "h1_max": "Human1Max",
    "h2_mean": "Human2Mean",
    "h2_sd": "Human2SD",
    "h2_min": "Human2Min",
    "h2_max": "Human2Max",
    "corr": "PearsonR",
    "wtkappa": "QWK",
    "R2": "R2",
    "kappa": "CohenKappa",
    "exact_agr": "ExactAgreement",
    "adj_agr": "AdjacentAgreement",
    "SMD": "SMD",
    "DSM": "DSM",
    "RMSE": "RMSE",
    "MSE": "MSE",
    "N raters": "NRaters",
    "N single": "NSingle",
    "N multiple": "NMultiple",
    "Variance of errors": "RaterErrorVariance",
    "True score var": "TrueScoreVariance",
    "MSE true": "MSETrue",
    "PRMSE true": "PRMSE",
    "Overall score accuracy": "OverallScoreAccuracy",
    "Overall score difference": "OverallScoreDifference",
    "Conditional score difference": "ConditionalScoreDifference",
    "corr_HM": "PearsonR",
    "corr_HH": "HumanHumanPearsonR",
    "sqrt_HH": "SqrtHumanHumanPearsonR",
    "corr_disattenuated": "DisattenuatedCorrelation",
}

Values = dict[str, Any]
Reasons = dict[str, str]


# ------------------------------------------------------------------ metric values from stats


def _pair_values(
    s: PairStats,
    i: int,
    smd: str = "unpooled",
    pop: tuple[float, float, float, float] | None = None,
    names: tuple[str, str] = ("h", "sys"),
) -> tuple[Values, Reasons]:
    """Every eval column for group ``i``; ``pop`` = whole-set (mean H, sd H, mean Y, sd Y) gives DSM."""
    hx, hy = names
    v: Values = {}
    r: Reasons = {}
    n = float(s.n[i])
    v["N"] = int(n)
    if n == 0:
        cols = [c.replace("h_", f"{hx}_").replace("sys_", f"{hy}_") for c in EVAL_COLUMNS[1:]] + [
            "DSM"
        ]
        for c in cols:
            v[c] = None
            r[c] = "requires at least one response" + (
                " with two human scores" if hy == "h2" else ""
            )
        return v, r
    mx = s.shift + s.sx[i] / n
    my = s.shift + s.sy[i] / n
    cx = s.xmin[i] == s.xmax[i]
    cy = s.ymin[i] == s.ymax[i]
    ssx = 0.0 if cx else max(float(s.sxx[i] - s.sx[i] ** 2 / n), 0.0)
    ssy = 0.0 if cy else max(float(s.syy[i] - s.sy[i] ** 2 / n), 0.0)
    sxy = 0.0 if (cx or cy) else float(s.sxy[i] - s.sx[i] * s.sy[i] / n)
    v[f"{hx}_mean"], v[f"{hy}_mean"] = float(mx), float(my)
    v[f"{hx}_min"], v[f"{hx}_max"] = float(s.xmin[i]), float(s.xmax[i])
    v[f"{hy}_min"], v[f"{hy}_max"] = float(s.ymin[i]), float(s.ymax[i])
    if n < 2:
        for c in (f"{hx}_sd", f"{hy}_sd", "corr", "R2"):
            v[c] = None
            r[c] = "requires N >= 2 responses"
        vx = vy = None
    else:
        vx, vy = ssx / (n - 1), ssy / (n - 1)
        v[f"{hx}_sd"], v[f"{hy}_sd"] = math.sqrt(vx), math.sqrt(vy)
        if cx or cy:
            v["corr"] = None
            r["corr"] = (
                f"requires non-constant {'human' if cx else ('second human' if hy == 'h2' else 'system')} scores (variance > 0)"
            )
        else:
            v["corr"] = max(-1.0, min(1.0, sxy / math.sqrt(ssx * ssy)))
        if cx:
            v["R2"] = None
            r["R2"] = "requires non-constant human scores (variance > 0)"
        else:
            v["R2"] = 1.0 - float(s.sdd[i]) / ssx
    den = ssx / n + ssy / n + (my - mx) ** 2
    if den == 0:
        v["wtkappa"] = None
        r["wtkappa"] = "requires Var(H) + Var(M) + (mean(M) - mean(H))^2 > 0"
    else:
        v["wtkappa"] = 2.0 * sxy / n / den
    if s.hist_x is None:
        v["kappa"] = None
        r["kappa"] = "too many rounded score categories for kappa"
    else:
        hx_i = s.hist_x[i].astype(np.int64)
        hy_i = s.hist_y[i].astype(np.int64)
        n_int = int(round(n))
        pe_num = int(np.dot(hx_i, hy_i))
        if pe_num == n_int * n_int:  # one category only: SKLL returns 1
            v["kappa"] = 1.0
        else:
            po = float(s.rexact[i]) / n
            pe = pe_num / (n * n)
            v["kappa"] = 1.0 - (1.0 - po) / (1.0 - pe)
    v["exact_agr"] = float(s.exact[i]) * 100.0 / n
    v["adj_agr"] = float(s.adj[i]) * 100.0 / n
    mse = float(s.sdd[i]) / n
    v["MSE"] = mse
    v["RMSE"] = math.sqrt(mse)
    if pop is not None:
        pmx, psx, pmy, psy = pop
        if (
            psx is None
            or psy is None
            or math.isclose(psx, 0.0, abs_tol=DSM_SD_ATOL)
            or math.isclose(psy, 0.0, abs_tol=DSM_SD_ATOL)
        ):
            v["DSM"] = None
            r["DSM"] = "requires non-zero whole-set standard deviations of both scores"
        else:
            v["DSM"] = (my - pmy) / psy - (mx - pmx) / psx
    elif vx is None:
        v["SMD"] = None
        r["SMD"] = "requires N >= 2 responses (sample standard deviation)"
    else:
        d = math.sqrt(vx) if smd == "unpooled" else math.sqrt((vx + vy) / 2.0)
        if d == 0:
            v["SMD"] = None
            r["SMD"] = f"requires a non-zero {smd} standard deviation"
        else:
            v["SMD"] = (my - mx) / d
    return v, r


def _true_values(t: TrueScoreStats, given: float | None) -> tuple[Values, Reasons]:
    v: Values = {
        "N": int(t.n),
        "N raters": int(t.max_raters),
        "N single": t.n_single,
        "N multiple": t.n_multiple,
    }
    r: Reasons = {}
    if given is not None:
        se2: float | None = float(given)
    elif t.dof > 0:
        se2 = t.within / t.dof
    else:
        se2 = None
    rest = ("Variance of errors", "True score var", "MSE true", "PRMSE true")
    if se2 is None:
        for c in rest:
            v[c] = None
            r[c] = (
                "requires a response with two or more human scores, or a given rater_error_variance"
            )
        return v, r
    v["Variance of errors"] = se2
    v["MSE true"] = (t.sse - t.n * se2) / t.c
    den = t.c - t.c2 / t.c
    if den <= 0:
        v["True score var"] = v["PRMSE true"] = None
        r["True score var"] = r["PRMSE true"] = "requires at least two responses"
        return v, r
    vt = (t.s2 - t.s1 * t.s1 / t.c - (t.n - 1) * se2) / den
    v["True score var"] = vt
    if vt <= 0:
        v["PRMSE true"] = None
        r["PRMSE true"] = f"requires a positive estimated true-score variance, got {vt:.6g}"
    else:
        v["PRMSE true"] = 1.0 - v["MSE true"] / vt
    return v, r


# ------------------------------------------------------------------ result


@dataclass
class ScoringResult:
    """Tables (RSMTool names) plus the same numbers as Metric records, and what was dropped.

    ``undefined`` lists every table cell that is empty, with the reason.
    """

    tables: dict[str, pd.DataFrame]
    metrics: MetricSet
    dropped: dict[str, int] = field(default_factory=dict)
    undefined: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def write_csv(self, out_dir: str | Path, prefix: str = "") -> list[Path]:
        """Write every table as ``<prefix><name>.csv`` (plus ``undefined_metrics.csv``); return paths."""
        from assay.io.files import write_atomic

        out = Path(out_dir)
        paths = []
        for name, table in self.tables.items():
            p = out / f"{prefix}{name}.csv"
            write_atomic(p, table.to_csv(index=True))
            paths.append(p)
        p = out / f"{prefix}undefined_metrics.csv"
        write_atomic(p, self.undefined.to_csv(index=False))
        paths.append(p)
        return paths


# ------------------------------------------------------------------ evaluator


class ScoringEvaluator:
    """Accumulate scoring data in batches; ``compute()`` builds the tables.

    Args:
        human, system: column names of the human and system scores.
        human2: column name (or names, for more raters) of additional human scores.
        subgroups: subgroup columns for ``eval_by_<col>`` and ``fairness_metrics_by_<col>``.
        exclude_zero_scores: drop responses with human score 0 (RSMTool default: True).
        rater_error_variance: a rater error variance estimated elsewhere, used for PRMSE
            instead of the one from the double-scored responses.
        base_groups: reference group per subgroup column for the fairness fits (default: the
            largest group, ties alphabetical).

    Example:
        >>> import pandas as pd
        >>> ev = ScoringEvaluator(human="h", system="m")
        >>> ev.add(pd.DataFrame({"h": [1, 2, 3], "m": [1, 2, 2]}))
        >>> ev.add(pd.DataFrame({"h": [4, 3], "m": [4, 3]}))
        >>> float(ev.compute().tables["eval"].loc["m", "exact_agr"])
        80.0
    """

    def __init__(
        self,
        *,
        human: str,
        system: str,
        human2: str | Sequence[str] | None = None,
        subgroups: Sequence[str] = (),
        exclude_zero_scores: bool = True,
        rater_error_variance: float | None = None,
        base_groups: dict[str, str] | None = None,
    ) -> None:
        self.human, self.system = human, system
        self.human2 = [human2] if isinstance(human2, str) else list(human2 or [])
        self.subgroups = list(subgroups)
        self.exclude_zero_scores = exclude_zero_scores
        if rater_error_variance is not None and (
            not math.isfinite(float(rater_error_variance)) or rater_error_variance < 0
        ):
            raise InvalidInputError(
                f"must be a finite number >= 0, got {rater_error_variance!r}",
                source="rater_error_variance",
            )
        self.rater_error_variance = rater_error_variance
        self.base_groups = dict(base_groups or {})
        self.dropped: dict[str, int] = {}
        self._shift: float | None = None
        self._hm: PairStats | None = None
        self._hr: PairStats | None = None
        self._hh: PairStats | None = None
        self._h2all: PairStats | None = None
        self._true: TrueScoreStats | None = None
        self._true_r: TrueScoreStats | None = None
        self._by: dict[str, dict[str, Any]] = {}
        self._batches = 0
        self.fast = True  # cell-based statistics when human scores have few distinct values

    # -- accumulation
    def add(self, data: Any, *, source: str = "data") -> None:
        """Add a batch: a table with the configured columns (DataFrame, path, list of dicts)."""
        d = ScoringData.from_frame(
            data,
            human=self.human,
            system=self.system,
            human2=self.human2 or None,
            subgroups=self.subgroups,
            exclude_zero_scores=self.exclude_zero_scores,
            source=source,
        )
        self.add_data(d)

    def add_data(self, d: ScoringData) -> None:
        """Add an already-cleaned batch (:class:`ScoringData`)."""
        for k, c in d.dropped.items():
            self.dropped[k] = self.dropped.get(k, 0) + c
        if self._shift is None:
            self._shift = float(np.rint(np.median(d.h[:1000])))
        shift = self._shift
        mr = np.rint(d.m)
        part = _Partial()
        xl = level_code(d.h) if self.fast else None
        dbl = h2 = None
        if d.h2 is not None:
            h2 = d.h2[:, 0]
            dbl = ~np.isnan(h2)
        for col in self.subgroups:
            codes, labels = d.groups[col]
            if xl is not None:
                (hm, hr), cells = grouped_pair_stats(
                    xl,
                    [d.m, mr],
                    codes,
                    labels,
                    shift,
                    with_cells=True,
                    x=d.h,
                    second_is_rounded=True,
                )
            else:
                hm = PairStats.from_arrays(d.h, d.m, codes, labels, shift=shift)
                hr = PairStats.from_arrays(d.h, mr, codes, labels, shift=shift)
                cells = CellStats.from_arrays(d.h, d.m, codes, labels)
            by = {"hm": hm, "hr": hr, "cells": cells}
            if dbl is not None:
                if xl is not None:
                    sub = LevelCoded(xl.codes[dbl], xl.levels)
                    by["hh"] = grouped_pair_stats(
                        sub, [h2[dbl]], codes[dbl], labels, shift, x=d.h[dbl]
                    )[0][0]
                else:
                    by["hh"] = PairStats.from_arrays(
                        d.h[dbl], h2[dbl], codes[dbl], labels, shift=shift
                    )
            part.by[col] = by
        if self.subgroups:  # the whole set is the sum of any grouping
            first = part.by[self.subgroups[0]]
            part.hm, part.hr = first["hm"].total(), first["hr"].total()
            if dbl is not None:
                part.hh = first["hh"].total()
        else:
            if xl is not None:
                part.hm, part.hr = grouped_pair_stats(
                    xl, [d.m, mr], None, ("All data",), shift, x=d.h, second_is_rounded=True
                )[0]
            else:
                part.hm = PairStats.from_arrays(d.h, d.m, shift=shift)
                part.hr = PairStats.from_arrays(d.h, mr, shift=shift)
            if dbl is not None:
                if xl is not None:
                    sub = LevelCoded(xl.codes[dbl], xl.levels)
                    part.hh = grouped_pair_stats(
                        sub, [h2[dbl]], None, ("All data",), shift, x=d.h[dbl]
                    )[0][0]
                else:
                    part.hh = PairStats.from_arrays(d.h[dbl], h2[dbl], shift=shift)
        part.h2all = part.hh
        if d.h2 is not None or self.rater_error_variance is not None:
            ratings = np.column_stack([d.h, d.h2]) if d.h2 is not None else d.h[:, None]
            part.true, part.true_r = TrueScoreStats.from_arrays_multi(
                ratings, [d.m, mr], shift=shift
            )
        self._absorb(part)

    def _absorb(self, p: _Partial) -> None:
        def m(a, b):
            return b if a is None else (a if b is None else a.merge(b))

        self._hm, self._hr = m(self._hm, p.hm), m(self._hr, p.hr)
        self._hh, self._h2all = m(self._hh, p.hh), m(self._h2all, p.h2all)
        self._true, self._true_r = m(self._true, p.true), m(self._true_r, p.true_r)
        for col, by in p.by.items():
            mine = self._by.setdefault(col, {})
            for k, s in by.items():
                mine[k] = m(mine.get(k), s)
        self._batches += 1

    def merge(self, other: ScoringEvaluator) -> ScoringEvaluator:
        """Fold another evaluator's batches (same configuration) into this one; returns self."""
        if (other.human, other.system, other.human2, other.subgroups) != (
            self.human,
            self.system,
            self.human2,
            self.subgroups,
        ):
            raise InvalidInputError(
                "cannot merge evaluators with different columns", source="merge"
            )
        if self._shift is None:
            self._shift = other._shift
        p = _Partial()
        p.hm, p.hr, p.hh, p.h2all, p.true, p.true_r = (
            other._hm,
            other._hr,
            other._hh,
            other._h2all,
            other._true,
            other._true_r,
        )
        p.by = other._by
        for k, c in other.dropped.items():
            self.dropped[k] = self.dropped.get(k, 0) + c
        self._absorb(p)
        return self

    # -- results
    def compute(self) -> ScoringResult:
        """All tables and Metric records."""
        if self._hm is None:
            raise InvalidInputError("no data was added", source="evaluator")
        sysname = self.system
        rname = f"{self.system}_round"
        tables: dict[str, pd.DataFrame] = {}
        records: list[Metric] = []
        undef_rows: list[dict[str, Any]] = []

        def emit(
            table: str,
            row: str,
            vals: Values,
            reasons: Reasons,
            columns: Sequence[str],
            suffix: str = "",
            **params: Any,
        ) -> dict:
            out = {}
            for c in columns:
                val = vals.get(c)
                p = {"table": table, **params}
                if val is None:
                    reason = reasons.get(c, "undefined")
                    records.append(undefined(METRIC_TYPES.get(c, c) + suffix, reason, **p))
                    undef_rows.append({"table": table, "row": row, "column": c, "reason": reason})
                    out[c] = np.nan
                else:
                    records.append(Metric(METRIC_TYPES.get(c, c) + suffix, val, p))
                    out[c] = val
            return out

        # eval
        rows = {}
        for label, s in ((sysname, self._hm), (rname, self._hr)):
            v, r = _pair_values(s, 0)
            rows[label] = emit("eval", label, v, r, EVAL_COLUMNS, score=label)
        tables["eval"] = _frame(rows, EVAL_COLUMNS)
        ev = tables["eval"]
        short = {c: ev.loc[sysname, c] for c in ("N", "h_mean", "h_sd")}
        for c in SHORT_CONTINUOUS:
            short[f"{c}.{sysname}"] = ev.loc[sysname, c]
        for c in SHORT_ROUNDED:
            short[f"{c}.{rname}"] = ev.loc[rname, c]
        tables["eval_short"] = pd.DataFrame([short])

        # consistency
        if self._hh is not None:
            v, r = _pair_values(self._hh, 0, smd="pooled", names=("h1", "h2"))
            if v["N"] == 0:
                r = {
                    c: "requires at least one double-scored response (N_2 >= 1)"
                    for c in CONSISTENCY_COLUMNS[1:]
                }
                v = {"N": 0}
            row = emit("consistency", "", v, r, CONSISTENCY_COLUMNS, score=self.human2[0])
            tables["consistency"] = _frame({"": row}, CONSISTENCY_COLUMNS)
            # degradation: human-system minus human-human (RSMTool's `degradation`)
            deg = {}
            hh_row = tables["consistency"].iloc[0]
            for label in (sysname, rname):
                vals, reasons = {}, {}
                for c in DEGRADATION_COLUMNS:
                    a, b = ev.loc[label, c], hh_row[c]
                    if a != a or b != b:
                        vals[c] = None
                        reasons[c] = f"requires defined human-system and human-human {c}"
                    else:
                        vals[c] = float(a - b)
                deg[label] = emit(
                    "degradation",
                    label,
                    vals,
                    reasons,
                    DEGRADATION_COLUMNS,
                    suffix="Degradation",
                    score=label,
                )
            tables["degradation"] = _frame(deg, DEGRADATION_COLUMNS)
            tables["disattenuated_correlations"] = self._disattenuated(
                emit,
                "disattenuated_correlations",
                {k: ev.loc[k, "corr"] for k in (sysname, rname)},
                {k: hh_row["corr"] for k in (sysname, rname)},
            )

        # true-score evaluation
        if self._true is not None:
            rows = {}
            for label, t in ((sysname, self._true), (rname, self._true_r)):
                v, r = _true_values(t, self.rater_error_variance)
                rows[label] = emit("true_score_eval", label, v, r, TRUE_SCORE_COLUMNS, score=label)
            tables["true_score_eval"] = _frame(rows, TRUE_SCORE_COLUMNS)

        # subgroups
        pop_h = (ev.loc[sysname, "h_mean"], _nan_none(ev.loc[sysname, "h_sd"]))
        pops = {
            sysname: (*pop_h, ev.loc[sysname, "sys_mean"], _nan_none(ev.loc[sysname, "sys_sd"])),
            rname: (*pop_h, ev.loc[rname, "sys_mean"], _nan_none(ev.loc[rname, "sys_sd"])),
        }
        short_cols = (
            ["N", "h_mean", "h_sd"]
            + [f"{c if c != 'SMD' else 'DSM'}.{sysname}" for c in SHORT_CONTINUOUS]
            + [f"{c if c != 'SMD' else 'DSM'}.{rname}" for c in SHORT_ROUNDED]
        )
        for col in self.subgroups:
            by = self._by[col]
            rows = {}
            labels = by["hm"].labels
            order = sorted(range(len(labels)), key=lambda k: str(labels[k]))
            for i, g in [(k, labels[k]) for k in order] + [(0, "All data")]:
                row: dict[str, Any] = {}
                for label, s, cols in (
                    (sysname, by["hm"], SHORT_CONTINUOUS),
                    (rname, by["hr"], SHORT_ROUNDED),
                ):
                    stats = s if g != "All data" else s.total()
                    j = i if g != "All data" else 0
                    v, r = _pair_values(stats, j, pop=pops[label])
                    keep = [c if c != "SMD" else "DSM" for c in cols]
                    if label == sysname:
                        keep = ["N", "h_mean", "h_sd"] + keep
                    vals = emit(
                        f"eval_by_{col}",
                        str(g),
                        v,
                        r,
                        keep,
                        score=label,
                        subgroup=col,
                        group=str(g),
                    )
                    for c in keep:
                        name = c if c in ("N", "h_mean", "h_sd") else f"{c}.{label}"
                        row[name] = vals[c]
                rows[str(g)] = row
            tables[f"eval_by_{col}"] = _frame(rows, short_cols)
            if "hh" in by:
                hh = by["hh"]
                pop_hh = (pop_h[0], pop_h[1], *self._h2_pop())
                rows = {}
                order = sorted(range(len(hh.labels)), key=lambda k: str(hh.labels[k]))
                for i, g in [(k, hh.labels[k]) for k in order] + [(0, "All data")]:
                    v, r = _pair_values(
                        hh if g != "All data" else hh.total(), i, pop=pop_hh, names=("h1", "h2")
                    )
                    cols = [c if c != "SMD" else "DSM" for c in CONSISTENCY_COLUMNS]
                    rows[str(g)] = emit(
                        f"consistency_by_{col}",
                        str(g),
                        v,
                        r,
                        cols,
                        score=self.human2[0],
                        subgroup=col,
                        group=str(g),
                    )
                tables[f"consistency_by_{col}"] = _frame(
                    rows, [c if c != "SMD" else "DSM" for c in CONSISTENCY_COLUMNS]
                )
                eb, cb = tables[f"eval_by_{col}"], tables[f"consistency_by_{col}"]
                tables[f"disattenuated_correlations_by_{col}"] = self._disattenuated(
                    emit,
                    f"disattenuated_correlations_by_{col}",
                    {g: eb.loc[g, f"corr.{sysname}"] for g in eb.index},
                    {g: cb.loc[g, "corr"] for g in eb.index},
                    subgroup=col,
                )
            table, reasons = fairness_from_cells(by["cells"], self.base_groups.get(col))
            tables[f"fairness_metrics_by_{col}"] = table
            base = table["base_category"].iloc[0]
            for name in FAIRNESS_METRICS:
                p = {
                    "table": f"fairness_metrics_by_{col}",
                    "score": sysname,
                    "subgroup": col,
                    "base_category": base,
                }
                if name in reasons:
                    records.append(undefined(METRIC_TYPES[name], reasons[name], **p))
                    records.append(undefined(METRIC_TYPES[name] + "PValue", reasons[name], **p))
                    for row in ("R2", "sig"):
                        undef_rows.append(
                            {
                                "table": p["table"],
                                "row": row,
                                "column": name,
                                "reason": reasons[name],
                            }
                        )
                else:
                    records.append(Metric(METRIC_TYPES[name], float(table.loc["R2", name]), p))
                    records.append(
                        Metric(METRIC_TYPES[name] + "PValue", float(table.loc["sig", name]), p)
                    )
        for k, c in self.dropped.items():
            records.append(Metric("NDropped", c, {"reason": k}))
        undef = (
            pd.DataFrame(undef_rows, columns=["table", "row", "column", "reason"])
            if not undef_rows
            else pd.DataFrame(undef_rows)[["table", "row", "column", "reason"]]
        )
        return ScoringResult(
            tables=tables, metrics=MetricSet(records), dropped=dict(self.dropped), undefined=undef
        )

    @staticmethod
    def _disattenuated(emit: Any, table: str, hm: dict, hh: dict, **params: Any) -> pd.DataFrame:
        """``corr_HM / sqrt(corr_HH)`` per row (RSMTool's ``disattenuated_correlations``)."""
        rows = {}
        for key in hm:
            a, b = hm[key], hh[key]
            vals: Values = {
                "corr_HM": None if a != a else float(a),
                "corr_HH": None if b != b else float(b),
            }
            reasons: Reasons = {
                "corr_HM": "human-system correlation undefined",
                "corr_HH": "human-human correlation undefined",
            }
            if b != b or b < 0:
                vals["sqrt_HH"] = vals["corr_disattenuated"] = None
                reasons["sqrt_HH"] = reasons["corr_disattenuated"] = (
                    "requires a defined, non-negative human-human correlation"
                )
            else:
                vals["sqrt_HH"] = math.sqrt(b)
                if a != a or b == 0:
                    vals["corr_disattenuated"] = None
                    reasons["corr_disattenuated"] = (
                        "requires a defined human-system and a positive human-human correlation"
                    )
                else:
                    vals["corr_disattenuated"] = float(a) / math.sqrt(b)
            p = {"score": key} if not params else {"group": str(key), **params}
            rows[key] = emit(table, str(key), vals, reasons, DISATTENUATED_COLUMNS, **p)
        return _frame(rows, DISATTENUATED_COLUMNS)

    def _h2_pop(self) -> tuple[float, float | None]:
        s = self._h2all
        n = float(s.n[0])
        if n == 0:
            return (float("nan"), None)
        my = s.shift + s.sy[0] / n
        if n < 2:
            return (my, None)
        ss = 0.0 if s.ymin[0] == s.ymax[0] else max(float(s.syy[0] - s.sy[0] ** 2 / n), 0.0)
        return (my, math.sqrt(ss / (n - 1)))


class _Partial:
    def __init__(self) -> None:
        self.hm = self.hr = self.hh = self.h2all = self.true = self.true_r = None
        self.by: dict[str, dict[str, Any]] = {}


def _nan_none(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _frame(rows: dict[str, dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame.from_dict(rows, orient="index")
    df = df.reindex(columns=list(columns))
    for c in df.columns:
        if c.startswith("N") and c in ("N", "N raters", "N single", "N multiple"):
            df[c] = df[c].astype("int64")
        else:
            df[c] = df[c].astype("float64")
    return df


def evaluate_scoring(
    data: Any,
    *,
    human: str,
    system: str,
    human2: str | Sequence[str] | None = None,
    subgroups: Sequence[str] = (),
    exclude_zero_scores: bool = True,
    rater_error_variance: float | None = None,
    base_groups: dict[str, str] | None = None,
    source: str = "data",
) -> ScoringResult:
    """Evaluate system scores against human scores: RSMTool's tables and Metric records.

    ``data`` is a pandas/polars DataFrame, a CSV/Parquet/JSONL path or a list of dicts. See
    :class:`ScoringEvaluator` for the arguments and ``docs/scoring.md`` for the tables.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"h": [1, 2, 3, 4], "h2": [1, 3, 3, None], "m": [1.1, 2.2, 3.4, 3.6]})
        >>> res = evaluate_scoring(df, human="h", system="m", human2="h2")
        >>> int(res["consistency"].loc["", "N"]), res["true_score_eval"].loc["m", "N multiple"]
        (3, np.int64(3))
    """
    ev = ScoringEvaluator(
        human=human,
        system=system,
        human2=human2,
        subgroups=subgroups,
        exclude_zero_scores=exclude_zero_scores,
        rater_error_variance=rater_error_variance,
        base_groups=base_groups,
    )
    ev.add(data, source=source)
    return ev.compute()
