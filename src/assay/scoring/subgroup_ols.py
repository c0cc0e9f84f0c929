"""Additional fairness analyses (Loukina, Madnani & Zechner 2019), as RSMTool computes them.

For a group column, with error ``e = M - H`` and squared error ``SE = e^2``:

* Overall score accuracy (OSA): OLS ``SE ~ group``; ``R2`` is the adjusted R^2, ``sig`` the
  F-test p-value of the model.
* Overall score difference (OSD): OLS ``e ~ group``; same outputs.
* Conditional score difference (CSD): OLS ``e ~ group + C(H)`` against the null model
  ``e ~ C(H)`` (the human score as a categorical covariate); ``R2`` is the difference of the
  adjusted R^2 of the two fits, ``sig`` the p-value of the nested-model F test.

Here adjusted R^2 is ``1 - (n - 1) / df_resid * SSR / TSS`` and the F statistic of a model
(or of the extra terms of a nested model) is ``(SS explained / df) / (SSR / df_resid)``.

Reference group: the largest group, ties broken by the alphabetical order of the labels
(RSMTool's rule), unless one is given. It changes only the coefficients, never R^2 or p.

Degenerate fits follow the row-level fits: an exact fit (SSR = 0 while something is
explained) has F = infinity and p = 0; a single group explains nothing (R^2 = 0) and has no
F test (p undefined); errors (or squared errors) that do not vary leave nothing to explain
(R^2 and p undefined).

How it is computed: every regressor is categorical, so the row-level OLS fit is the
statsmodels WLS fit of the cell means (cell = group x human score) weighted by cell size, and
the row-level residual and total sums of squares are the WLS ones plus the within-cell sum of
squares, known from the cell sums of ``e``, ``e^2`` and ``e^4`` (:class:`CellStats`). For CSD
the human-score effects are absorbed first (Frisch-Waugh-Lovell: level-demeaned cell means on
level-demeaned group dummies), so the fit has one column per group even when the human score
has thousands of distinct values. This is exact and needs a few dozen rows instead of N.
:func:`fairness_analyses_ols` runs the same statsmodels formulas on the raw rows, as RSMTool
does; the tests check both agree.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps

from assay._validation import check_same_length
from assay.errors import InvalidInputError
from assay.scoring.level_stats import CellStats

__all__ = [
    "FairnessFit",
    "fairness_from_cells",
    "fairness_analyses",
    "fairness_analyses_ols",
    "reference_group",
    "FAIRNESS_METRICS",
]

# A total sum of squares this small relative to sum(y^2) is rounding noise: y is constant.
_ZERO_REL = 1e-12

FAIRNESS_METRICS = (
    "Overall score accuracy",
    "Overall score difference",
    "Conditional score difference",
)
OSA, OSD, CSD = FAIRNESS_METRICS

Values = dict[tuple[str, str], float]
Reasons = dict[tuple[str, str], str]


def f_test_pvalue(explained: float, df_num: float, ssr: float, df_resid: float) -> float | None:
    """p-value of ``F = (explained / df_num) / (ssr / df_resid)``; None when there is no test.

    An exact fit (``ssr == 0`` with ``explained > 0``) has ``F = inf`` and p = 0.

    Example:
        >>> f_test_pvalue(2.0, 1, 0.0, 2)
        0.0
    """
    if df_num <= 0 or df_resid <= 0:
        return None
    if ssr <= 0:
        return 0.0 if explained > 0 else None
    return float(sps.f.sf((explained / df_num) / (ssr / df_resid), df_num, df_resid))


@dataclass(frozen=True)
class FairnessFit:
    """Summary of one row-level OLS fit: sums of squares and degrees of freedom."""

    nobs: float
    ssr: float
    centered_tss: float
    df_model: float
    df_resid: float

    @property
    def rsquared(self) -> float:
        return 1.0 - self.ssr / self.centered_tss

    @property
    def rsquared_adj(self) -> float:
        return 1.0 - (self.nobs - 1) / self.df_resid * (1.0 - self.rsquared)

    @property
    def f_pvalue(self) -> float | None:
        return f_test_pvalue(self.centered_tss - self.ssr, self.df_model, self.ssr, self.df_resid)


def reference_group(labels: tuple, sizes: np.ndarray, base_group: str | None = None) -> int:
    """Index of the reference group: ``base_group`` if given, else largest (ties: alphabetical)."""
    if base_group is not None:
        if base_group not in labels:
            raise InvalidInputError(
                f"reference group {base_group!r} is not one of {list(labels)}", source="base_group"
            )
        return labels.index(base_group)
    order = sorted(range(len(labels)), key=lambda i: (-sizes[i], str(labels[i])))
    return order[0]


def _wls(ymean: np.ndarray, n: np.ndarray, within: float, exog: np.ndarray) -> FairnessFit:
    import statsmodels.api as sm

    nobs = float(n.sum())
    with warnings.catch_warnings():  # rank-deficient designs are fine: pinv, as statsmodels OLS
        warnings.simplefilter("ignore")
        fit = sm.WLS(ymean, exog, weights=n, hasconst=True).fit()
    grand = float(np.dot(n, ymean)) / nobs
    tss = float(np.dot(n, (ymean - grand) ** 2)) + within
    ssr = float(fit.ssr) + within
    rank = float(fit.df_model) + 1.0
    return FairnessFit(nobs, ssr, tss, df_model=rank - 1.0, df_resid=nobs - rank)


def _fwl(
    yres: np.ndarray, n: np.ndarray, within: float, xres: np.ndarray, null: FairnessFit
) -> FairnessFit:
    """Extend ``null`` by the residualised regressors ``xres`` (cell level, weights ``n``)."""
    import statsmodels.api as sm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.WLS(yres, xres, weights=n, hasconst=False).fit()
    rank = float(fit.df_model)  # no constant: df_model is the rank of xres
    ssr = float(fit.ssr) + within
    return FairnessFit(
        null.nobs, ssr, null.centered_tss, null.df_model + rank, null.df_resid - rank
    )


def _dummies(codes: np.ndarray, k: int, base: int) -> np.ndarray:
    cols = [j for j in range(k) if j != base]
    return (codes[:, None] == np.array(cols, dtype=np.intp)[None, :]).astype(np.float64)


def _within(sum1: np.ndarray, sum2: np.ndarray, n: np.ndarray) -> float:
    """Within-cell sum of squares from the cell sums of y and y^2."""
    ok = n > 0
    return float(np.clip(sum2[ok] - sum1[ok] ** 2 / n[ok], 0.0, None).sum())


def _record(name: str, fit: FairnessFit, scale: float, values: Values, reasons: Reasons) -> None:
    """R^2 and p of one metric into ``values``, or the reasons they are undefined."""
    if fit.centered_tss <= _ZERO_REL * scale:
        what = "squared errors" if name == OSA else "errors"
        reasons[(name, "R2")] = reasons[(name, "sig")] = f"requires non-constant {what}"
        return
    values[(name, "R2")] = fit.rsquared_adj
    p = fit.f_pvalue
    if p is None:
        reasons[(name, "sig")] = (
            "requires at least two groups (an F test with 1+ degrees of freedom)"
        )
    else:
        values[(name, "sig")] = p


def _group_fits(cells: CellStats, base: int, values: Values, reasons: Reasons) -> None:
    """OSA and OSD: the fits on group-level cells."""
    sizes = cells.n.sum(axis=1)
    g = sizes.size
    s1g, s2g, s4g = cells.s1.sum(axis=1), cells.s2.sum(axis=1), cells.s4.sum(axis=1)
    xg = np.column_stack([np.ones(g), _dummies(np.arange(g), g, base)])
    osa = _wls(s2g / sizes, sizes, _within(s2g, s4g, sizes), xg)
    osd = _wls(s1g / sizes, sizes, _within(s1g, s2g, sizes), xg)
    _record(OSA, osa, float(s4g.sum()), values, reasons)
    _record(OSD, osd, float(s2g.sum()), values, reasons)


def _csd(cells: CellStats, base: int, values: Values, reasons: Reasons) -> None:
    """CSD: ``e ~ C(H)`` (null) against ``e ~ group + C(H)`` (full)."""
    g = cells.n.shape[0]
    li = np.flatnonzero(cells.n.sum(axis=0) > 0)
    n_gl, s1, s2 = cells.n[:, li], cells.s1[:, li], cells.s2[:, li]
    n_l, s1l, s2l = n_gl.sum(axis=0), s1.sum(axis=0), s2.sum(axis=0)
    nobs = float(n_l.sum())
    # null model e ~ C(H): its fitted values are the level means
    tss = float(s2l.sum() - s1l.sum() ** 2 / nobs)
    null = FairnessFit(nobs, _within(s1l, s2l, n_l), tss, li.size - 1.0, nobs - li.size)
    # full model by Frisch-Waugh-Lovell: absorb the level effects, then WLS of the
    # level-demeaned cell means on the level-demeaned group dummies
    gi, lj = np.nonzero(n_gl > 0)
    nc, s1c, s2c = n_gl[gi, lj], s1[gi, lj], s2[gi, lj]
    full = null  # one group: nothing to add
    if g > 1:
        share = n_gl / n_l[None, :]  # (G, L): share of group j among level l
        others = [j for j in range(g) if j != base]
        dummies = _dummies(gi, g, base) - share[others][:, lj].T
        full = _fwl(s1c / nc - (s1l / n_l)[lj], nc, _within(s1c, s2c, nc), dummies, null)
    if full.centered_tss <= _ZERO_REL * float(s2l.sum()):
        reasons[(CSD, "R2")] = reasons[(CSD, "sig")] = "requires non-constant errors"
        return
    if full.df_resid <= 0:
        reasons[(CSD, "R2")] = reasons[(CSD, "sig")] = (
            "requires residual degrees of freedom > 0 in the model with human score"
        )
        return
    values[(CSD, "R2")] = full.rsquared_adj - null.rsquared_adj if g > 1 else 0.0
    df_diff = null.df_resid - full.df_resid
    p = f_test_pvalue(null.ssr - full.ssr, df_diff, full.ssr, full.df_resid)
    if g < 2:
        reasons[(CSD, "sig")] = (
            "requires at least two groups (an F test with 1+ degrees of freedom)"
        )
    elif p is None:
        reasons[(CSD, "sig")] = (
            "group membership adds no information once the human score is known (or the "
            "human score alone fits the errors exactly: F = 0/0)"
        )
    else:
        values[(CSD, "sig")] = p


def fairness_from_cells(
    cells: CellStats, base_group: str | None = None
) -> tuple[pd.DataFrame, Reasons]:
    """The ``fairness_metrics_by_<group>`` table from cell statistics.

    Returns the table (index ``R2``, ``sig``; columns the three metrics and
    ``base_category``) and, for each undefined cell, its reason keyed by (metric, row);
    the table holds NaN there.
    """
    keep = cells.n.sum(axis=1) > 0
    labels = tuple(lab for lab, k in zip(cells.labels, keep) if k)
    kept = CellStats(
        labels, cells.levels, cells.n[keep], cells.s1[keep], cells.s2[keep], cells.s4[keep]
    )
    sizes = kept.n.sum(axis=1)
    base = reference_group(labels, sizes, base_group)
    values: Values = {}
    reasons: Reasons = {}
    if float(sizes.sum()) - len(labels) <= 0:
        for name in FAIRNESS_METRICS:
            reasons[(name, "R2")] = reasons[(name, "sig")] = (
                "requires more responses than groups (residual degrees of freedom > 0)"
            )
    else:
        _group_fits(kept, base, values, reasons)
        _csd(kept, base, values, reasons)
    table = pd.DataFrame(
        {name: [values.get((name, r), np.nan) for r in ("R2", "sig")] for name in FAIRNESS_METRICS},
        index=["R2", "sig"],
    )
    table["base_category"] = labels[base] if labels else None
    return table, reasons


def fairness_analyses(
    human: ArrayLike, system: ArrayLike, groups: ArrayLike, base_group: str | None = None
) -> pd.DataFrame:
    """``fairness_metrics_by_<group>`` for arrays: human and system scores and group labels.

    Rows ``R2`` (adjusted R^2; for CSD the difference to the human-score-only model) and
    ``sig`` (p-value); columns OSA, OSD, CSD and ``base_category``. Undefined entries are
    NaN; :func:`assay.scoring.scoring_tables` also reports why.

    Example:
        >>> import numpy as np
        >>> h = np.array([1., 2, 3, 1, 2, 3, 2, 3]); m = h + np.array([0, 0, 0, 1, 1, 1, 0.5, 0])
        >>> t = fairness_analyses(h, m, np.array(list("aaabbbab")))
        >>> round(float(t.loc["R2", "Overall score difference"]), 4)
        0.3636
    """
    from assay.scoring.compute import score_pair

    h, m = score_pair(human, system)
    codes, labels = pd.factorize(pd.Series(np.asarray(groups)).astype(str))
    check_same_length(human=h, groups=codes)
    cells = CellStats.from_arrays(h, m, codes, tuple(labels))
    return fairness_from_cells(cells, base_group)[0]


def fairness_analyses_ols(
    human: ArrayLike, system: ArrayLike, groups: ArrayLike, base_group: str | None = None
) -> pd.DataFrame:
    """The same table by statsmodels formula OLS on every row (RSMTool's procedure; slow).

    Example:
        >>> import numpy as np
        >>> h = np.array([1., 2, 3, 1, 2, 3, 2, 3]); m = h + np.array([0, 0, 0, 1, 1, 1, 0.5, 0])
        >>> g = np.array(list("aaabbbab"))
        >>> t = fairness_analyses_ols(h, m, g)
        >>> col = "Overall score difference"
        >>> bool(np.isclose(t.loc["R2", col], fairness_analyses(h, m, g).loc["R2", col]))
        True
    """
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df = pd.DataFrame(
        {
            "h": np.asarray(human, float),
            "m": np.asarray(system, float),
            "g": pd.Series(np.asarray(groups)).astype(str).to_numpy(),
        }
    )
    df["error"] = df["m"] - df["h"]
    df["SE"] = df["error"] ** 2
    codes, labels = pd.factorize(df["g"])
    base = labels[reference_group(tuple(labels), np.bincount(codes), base_group)]
    order = [base] + sorted([lab for lab in labels if lab != base])
    df["group"] = pd.Categorical(df["g"], categories=order)
    df["hcat"] = pd.Categorical(df["h"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osa = smf.ols("SE ~ group", data=df).fit()
        osd = smf.ols("error ~ group", data=df).fit()
        null = smf.ols("error ~ hcat", data=df).fit()
        full = smf.ols("error ~ group + hcat", data=df).fit()
        p_csd = float(anova_lm(null, full).values[1][-1])
        table = pd.DataFrame(
            {
                OSA: [osa.rsquared_adj, osa.f_pvalue],
                OSD: [osd.rsquared_adj, osd.f_pvalue],
                CSD: [full.rsquared_adj - null.rsquared_adj, p_csd],
            },
            index=["R2", "sig"],
        )
    table["base_category"] = base
    return table
