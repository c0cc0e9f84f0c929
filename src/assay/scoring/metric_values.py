"""Metric values of one table row from the sufficient statistics, with reasons where undefined.

For a group with ``n`` score pairs ``(x, y)`` (human and system score, or two human scores)
and the shifted sums of :class:`~assay.scoring.sufficient_stats.PairStats`:

* means ``x_bar = shift + sum x' / n``; sums of squares ``SS_x = sum x'^2 - (sum x')^2 / n``
  (0 when ``x`` is constant, so rounding cannot invent a variance); ``sd = sqrt(SS / (n - 1))``;
* Pearson ``r = S_xy / sqrt(SS_x SS_y)``; ``R2 = 1 - sum (y - x)^2 / SS_x``;
* QWK ``= 2 (S_xy / n) / (SS_x / n + SS_y / n + (y_bar - x_bar)^2)``;
* Cohen's kappa ``1 - (1 - p_o) / (1 - p_e)`` from the rounded-score histograms, 1 when both
  rounded scores take one single value (SKLL);
* exact / adjacent agreement ``100 * #{|y - x| <= 0 or 1} / n``; ``MSE = sum (y - x)^2 / n``;
* SMD ``(y_bar - x_bar) / sd_x`` (unpooled), ``/ sqrt((sd_x^2 + sd_y^2) / 2)`` (pooled),
  ``/ SD_X`` (johnson) or ``/ sqrt((SD_X^2 + SD_Y^2) / 2)`` (williamson) with population sds;
  or DSM ``(y_bar - Y) / SD_Y - (x_bar - X) / SD_X`` with the whole set's (or given
  population) means ``X, Y`` and sds ``SD_X, SD_Y``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay.scoring.columns import EVAL_COLUMNS
from assay.scoring.compute import DSM_SD_ATOL
from assay.scoring.sufficient_stats import PairStats, TrueScoreStats

__all__ = ["pair_values", "true_values", "disattenuated_values", "second_score_population"]

Values = dict[str, Any]
Reasons = dict[str, str]
#: Population (mean X, sd X, mean Y, sd Y); ``None`` where not given.
Population = tuple[float | None, float | None, float | None, float | None]
NO_POPULATION: Population = (None, None, None, None)


def _empty(names: tuple[str, str]) -> tuple[Values, Reasons]:
    hx, hy = names
    cols = [c.replace("h_", f"{hx}_").replace("sys_", f"{hy}_") for c in EVAL_COLUMNS[1:]]
    reason = "requires at least one response" + (" with two human scores" if hy == "h2" else "")
    return {"N": 0, **{c: None for c in [*cols, "DSM"]}}, {c: reason for c in [*cols, "DSM"]}


def _spread(
    v: Values,
    r: Reasons,
    n: float,
    ss: tuple[float, float, float],
    const: tuple[bool, bool],
    names: tuple[str, str],
) -> tuple[float, float] | None:
    """Sds, Pearson r and R2 into ``v``; returns the two sample variances (None when n < 2)."""
    hx, hy = names
    ssx, ssy, sxy = ss
    cx, cy = const
    if n < 2:
        for c in (f"{hx}_sd", f"{hy}_sd", "corr", "R2"):
            v[c] = None
            r[c] = "requires N >= 2 responses"
        return None
    vx, vy = ssx / (n - 1), ssy / (n - 1)
    v[f"{hx}_sd"], v[f"{hy}_sd"] = math.sqrt(vx), math.sqrt(vy)
    if cx or cy:
        which = "human" if cx else ("second human" if hy == "h2" else "system")
        v["corr"] = None
        r["corr"] = f"requires non-constant {which} scores (variance > 0)"
    else:
        v["corr"] = max(-1.0, min(1.0, sxy / math.sqrt(ssx * ssy)))
    return vx, vy


def _kappa(s: PairStats, i: int, n: float) -> tuple[float | None, str]:
    if s.hist_x is None or s.hist_y is None:
        return None, "too many rounded score categories for kappa"
    hx_i = s.hist_x[i].astype(np.int64)
    hy_i = s.hist_y[i].astype(np.int64)
    n_int = int(round(n))
    pe_num = int(np.dot(hx_i, hy_i))
    if pe_num == n_int * n_int:  # one category only: SKLL returns 1
        return 1.0, ""
    po = float(s.rexact[i]) / n
    pe = pe_num / (n * n)
    return 1.0 - (1.0 - po) / (1.0 - pe), ""


def _sd(variances: tuple[float, float] | None, k: int) -> float | None:
    return None if variances is None else math.sqrt(variances[k])


def _dsm(
    v: Values,
    r: Reasons,
    means: tuple[float, float],
    variances: tuple[float, float] | None,
    pop: Population,
) -> None:
    """DSM against the whole set's means and sds; a score without them uses its own."""
    pmx, psx, pmy, psy = pop
    if pmx is None:
        pmx, psx = means[0], _sd(variances, 0)
    if pmy is None:
        pmy, psy = means[1], _sd(variances, 1)
    if (
        psx is None
        or psy is None
        or math.isclose(psx, 0.0, abs_tol=DSM_SD_ATOL)
        or math.isclose(psy, 0.0, abs_tol=DSM_SD_ATOL)
    ):
        v["DSM"] = None
        r["DSM"] = "requires non-zero whole-set standard deviations of both scores"
    else:
        v["DSM"] = (means[1] - pmy) / psy - (means[0] - pmx) / psx


def _smd(
    v: Values,
    r: Reasons,
    means: tuple[float, float],
    variances: tuple[float, float] | None,
    smd: str,
    pop: Population,
) -> None:
    """SMD with one of RSMTool's denominators (``johnson``/``williamson``: population sds)."""
    psx, psy = pop[1], pop[3]
    d: float | None
    if smd in ("unpooled", "pooled"):
        if variances is None:
            v["SMD"] = None
            r["SMD"] = "requires N >= 2 responses (sample standard deviation)"
            return
        vx, vy = variances
        d = math.sqrt(vx) if smd == "unpooled" else math.sqrt((vx + vy) / 2.0)
    elif smd == "johnson":
        d = psx
    else:
        d = None if psx is None or psy is None else math.sqrt((psx**2 + psy**2) / 2.0)
    if d is None:
        v["SMD"] = None
        r["SMD"] = f"requires the population standard deviations of the {smd} method"
    elif d == 0:
        v["SMD"] = None
        r["SMD"] = f"requires a non-zero {smd} standard deviation"
    else:
        v["SMD"] = (means[1] - means[0]) / d


def pair_values(
    s: PairStats,
    i: int,
    smd: str = "unpooled",
    pop: Population | None = None,
    names: tuple[str, str] = ("h", "sys"),
    dsm: bool = False,
) -> tuple[Values, Reasons]:
    """Every ``eval`` column for group ``i``: SMD with the ``smd`` method or, with ``dsm``,
    DSM. ``pop`` = population (mean X, sd X, mean Y, sd Y), each ``None`` when not given:
    the sds of ``johnson``/``williamson``, the whole-set values DSM standardises with (a
    score without them uses its own mean and sd, as RSMTool)."""
    hx, hy = names
    n = float(s.n[i])
    if n == 0:
        return _empty(names)
    v: Values = {"N": int(n)}
    r: Reasons = {}
    mx = s.shift + s.sx[i] / n
    my = s.shift + s.sy[i] / n
    cx = bool(s.xmin[i] == s.xmax[i])
    cy = bool(s.ymin[i] == s.ymax[i])
    ssx = 0.0 if cx else max(float(s.sxx[i] - s.sx[i] ** 2 / n), 0.0)
    ssy = 0.0 if cy else max(float(s.syy[i] - s.sy[i] ** 2 / n), 0.0)
    sxy = 0.0 if (cx or cy) else float(s.sxy[i] - s.sx[i] * s.sy[i] / n)
    v[f"{hx}_mean"], v[f"{hy}_mean"] = float(mx), float(my)
    v[f"{hx}_min"], v[f"{hx}_max"] = float(s.xmin[i]), float(s.xmax[i])
    v[f"{hy}_min"], v[f"{hy}_max"] = float(s.ymin[i]), float(s.ymax[i])
    variances = _spread(v, r, n, (ssx, ssy, sxy), (cx, cy), names)
    if variances is not None:
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
    v["kappa"], why = _kappa(s, i, n)
    if why:
        r["kappa"] = why
    v["exact_agr"] = float(s.exact[i]) * 100.0 / n
    v["adj_agr"] = float(s.adj[i]) * 100.0 / n
    mse = float(s.sdd[i]) / n
    v["MSE"] = mse
    v["RMSE"] = math.sqrt(mse)
    means = (float(mx), float(my))
    if dsm:
        _dsm(v, r, means, variances, pop or NO_POPULATION)
    else:
        _smd(v, r, means, variances, smd, pop or NO_POPULATION)
    return v, r


def true_values(t: TrueScoreStats, given: float | None) -> tuple[Values, Reasons]:
    """The ``true_score_eval`` row (see :mod:`assay.scoring.true_score` for the formulas)."""
    v: Values = {
        "N": int(t.n),
        "N raters": int(t.max_raters),
        "N single": t.n_single,
        "N multiple": t.n_multiple,
    }
    r: Reasons = {}
    se2 = float(given) if given is not None else (t.within / t.dof if t.dof > 0 else None)
    rest = ("Variance of errors", "True score var", "MSE true", "PRMSE true")
    if se2 is None:
        reason = (
            "requires a response with two or more human scores, or a given rater_error_variance"
        )
        return {**v, **{c: None for c in rest}}, {c: reason for c in rest}
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


def disattenuated_values(hm: float, hh: float) -> tuple[Values, Reasons]:
    """``corr_HM / sqrt(corr_HH)`` (NaN marks an undefined input correlation)."""
    vals: Values = {
        "corr_HM": None if hm != hm else float(hm),
        "corr_HH": None if hh != hh else float(hh),
    }
    reasons: Reasons = {
        "corr_HM": "human-system correlation undefined",
        "corr_HH": "human-human correlation undefined",
    }
    if hh != hh or hh < 0:
        vals["sqrt_HH"] = vals["corr_disattenuated"] = None
        reasons["sqrt_HH"] = reasons["corr_disattenuated"] = (
            "requires a defined, non-negative human-human correlation"
        )
    else:
        vals["sqrt_HH"] = math.sqrt(hh)
        if hm != hm or hh == 0:
            vals["corr_disattenuated"] = None
            reasons["corr_disattenuated"] = (
                "requires a defined human-system and a positive human-human correlation"
            )
        else:
            vals["corr_disattenuated"] = float(hm) / math.sqrt(hh)
    return vals, reasons


def second_score_population(s: PairStats) -> tuple[float, float | None]:
    """Mean and sd (ddof 1) of the second score over the double-scored responses."""
    n = float(s.n[0])
    if n == 0:
        return (float("nan"), None)
    my = s.shift + s.sy[0] / n
    if n < 2:
        return (my, None)
    ss = 0.0 if s.ymin[0] == s.ymax[0] else max(float(s.syy[0] - s.sy[0] ** 2 / n), 0.0)
    return (my, math.sqrt(ss / (n - 1)))
