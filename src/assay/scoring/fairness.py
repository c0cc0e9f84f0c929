"""Additional fairness analyses (Loukina, Madnani & Zechner 2019), as RSMTool computes them.

For a subgroup column, with error ``e = M - H`` and squared error ``SE = e^2``:

* Overall score accuracy (OSA): OLS ``SE ~ group``; ``R2`` is the adjusted R^2, ``sig`` the
  F-test p-value of the model.
* Overall score difference (OSD): OLS ``e ~ group``; same outputs.
* Conditional score difference (CSD): OLS ``e ~ group + C(H)`` against the null model
  ``e ~ C(H)`` (the human score as a categorical covariate); ``R2`` is the difference of the
  adjusted R^2 of the two fits, ``sig`` the p-value of the nested-model F-test (``anova_lm``).

Reference group: the largest subgroup, ties broken by the alphabetical order of the labels
(RSMTool's rule), unless one is given. It affects only the coefficients, never R^2 or p.

How it is computed: every regressor is categorical, so the row-level OLS fit is the statsmodels
WLS fit of the cell means (cell = subgroup x human score) weighted by cell size, and the
row-level residual and total sums of squares are the WLS ones plus the within-cell sum of
squares, known from the cell sums of ``e``, ``e^2`` and ``e^4`` (:class:`CellStats`). For CSD
the human-score effects are absorbed first (Frisch-Waugh-Lovell: level-demeaned cell means on
level-demeaned group dummies), so the fit has one column per subgroup even when the human score
has thousands of distinct values. This is exact and needs a few dozen rows instead of N. :func:`fairness_analyses_ols` runs the same
statsmodels formulas on the raw rows, as RSMTool does; the tests check both agree.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from assay.scoring.stats import CellStats

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
    def f_pvalue(self) -> float:
        ess = self.centered_tss - self.ssr
        f = (ess / self.df_model) / (self.ssr / self.df_resid)
        return float(sps.f.sf(f, self.df_model, self.df_resid))


def reference_group(labels: tuple, sizes: np.ndarray, base_group: str | None = None) -> int:
    """Index of the reference group: ``base_group`` if given, else largest (ties: alphabetical)."""
    if base_group is not None:
        if base_group not in labels:
            from assay.errors import InvalidInputError

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
    return FairnessFit(
        nobs=nobs, ssr=ssr, centered_tss=tss, df_model=rank - 1.0, df_resid=nobs - rank
    )


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
        nobs=null.nobs,
        ssr=ssr,
        centered_tss=null.centered_tss,
        df_model=null.df_model + rank,
        df_resid=null.df_resid - rank,
    )


def _dummies(codes: np.ndarray, k: int, base: int) -> np.ndarray:
    cols = [j for j in range(k) if j != base]
    return (codes[:, None] == np.array(cols)[None, :]).astype(np.float64)


def fairness_from_cells(
    cells: CellStats, base_group: str | None = None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The ``fairness_metrics_by_<group>`` table from cell statistics.

    Returns the table (index ``R2``, ``sig``; columns the three metrics and ``base_category``)
    and, for metrics that are undefined, a reason per metric name (the value is then NaN).
    """
    keep_g = cells.n.sum(axis=1) > 0
    labels = tuple(l for l, k in zip(cells.labels, keep_g) if k)
    n_gl = cells.n[keep_g]
    s1 = cells.s1[keep_g]
    s2 = cells.s2[keep_g]
    s4 = cells.s4[keep_g]
    sizes = n_gl.sum(axis=1)
    base = reference_group(labels, sizes, base_group)
    reasons: dict[str, str] = {}
    values: dict[str, tuple[float, float]] = {}
    nobs = float(sizes.sum())
    g = len(labels)

    # group-level cells (OSA, OSD)
    s1g, s2g, s4g = s1.sum(axis=1), s2.sum(axis=1), s4.sum(axis=1)
    xg = np.column_stack([np.ones(g), _dummies(np.arange(g), g, base)])

    def within(sum1: np.ndarray, sum2: np.ndarray, n: np.ndarray) -> float:
        ok = n > 0
        return float(np.clip(sum2[ok] - sum1[ok] ** 2 / n[ok], 0.0, None).sum())

    fits: dict[str, FairnessFit] = {}
    if g < 2:
        for name in FAIRNESS_METRICS:
            reasons[name] = "requires at least two subgroups"
    elif nobs - g <= 0:
        for name in FAIRNESS_METRICS:
            reasons[name] = (
                "requires more responses than subgroups (residual degrees of freedom > 0)"
            )
    else:
        fits["osa"] = _wls(s2g / sizes, sizes, within(s2g, s4g, sizes), xg)
        fits["osd"] = _wls(s1g / sizes, sizes, within(s1g, s2g, sizes), xg)
        scale = {"osa": float(s4g.sum()), "osd": float(s2g.sum())}  # sum of y^2 for each fit
        for key, name in (("osa", FAIRNESS_METRICS[0]), ("osd", FAIRNESS_METRICS[1])):
            f = fits[key]
            if f.centered_tss <= _ZERO_REL * scale[key]:
                reasons[name] = "requires non-constant " + (
                    "squared errors" if key == "osa" else "errors"
                )
            else:
                values[name] = (f.rsquared_adj, f.f_pvalue)
        # CSD: e ~ C(H) (null) vs e ~ group + C(H)
        n_l = n_gl.sum(axis=0)
        levels_used = n_l > 0
        li = np.flatnonzero(levels_used)
        n_l = n_l[li]
        s1l, s2l = s1[:, li].sum(axis=0), s2[:, li].sum(axis=0)
        # null model e ~ C(H): fitted values are the level means
        within_levels = within(s1l, s2l, n_l)
        tss = float(s2l.sum() - s1l.sum() ** 2 / nobs)
        null = FairnessFit(
            nobs=nobs,
            ssr=within_levels,
            centered_tss=tss,
            df_model=li.size - 1.0,
            df_resid=nobs - li.size,
        )
        # full model e ~ group + C(H), by Frisch-Waugh-Lovell: absorb the level effects, then
        # statsmodels WLS of the level-demeaned cell means on the level-demeaned group dummies
        gi, lj = np.nonzero(n_gl[:, li] > 0)
        nc = n_gl[:, li][gi, lj]
        s1c, s2c = s1[:, li][gi, lj], s2[:, li][gi, lj]
        ybar_l = s1l / n_l
        share = n_gl[:, li] / n_l[None, :]  # (G, L): share of group j among level l
        dummies = _dummies(gi, g, base) - share[[j for j in range(g) if j != base]][:, lj].T
        full = _fwl(s1c / nc - ybar_l[lj], nc, within(s1c, s2c, nc), dummies, null)
        name = FAIRNESS_METRICS[2]
        if full.centered_tss <= _ZERO_REL * float(s2l.sum()):
            reasons[name] = "requires non-constant errors"
        elif full.df_resid <= 0:
            reasons[name] = "requires residual degrees of freedom > 0 in the model with human score"
        else:
            df_diff = null.df_resid - full.df_resid
            if df_diff <= 0:
                reasons[name] = (
                    "subgroup membership adds no information once the human score is known"
                )
            else:
                fstat = ((null.ssr - full.ssr) / df_diff) / (full.ssr / full.df_resid)
                p = float(sps.f.sf(fstat, df_diff, full.df_resid))
                values[name] = (full.rsquared_adj - null.rsquared_adj, p)
    table = pd.DataFrame(
        {
            name: [values.get(name, (np.nan, np.nan))[0], values.get(name, (np.nan, np.nan))[1]]
            for name in FAIRNESS_METRICS
        },
        index=["R2", "sig"],
    )
    table["base_category"] = labels[base] if labels else None
    return table, reasons


def fairness_analyses(
    human: np.ndarray, system: np.ndarray, groups: np.ndarray, base_group: str | None = None
) -> pd.DataFrame:
    """``fairness_metrics_by_<group>`` for arrays: human and system scores and group labels.

    Rows ``R2`` (adjusted R^2; for CSD the difference to the human-score-only model) and
    ``sig`` (p-value); columns OSA, OSD, CSD and ``base_category``. Undefined entries are NaN;
    :func:`assay.scoring.evaluate_scoring` also reports why.

    Example:
        >>> import numpy as np
        >>> h = np.array([1., 2, 3, 1, 2, 3, 2, 3]); m = h + np.array([0, 0, 0, 1, 1, 1, 0.5, 0])
        >>> t = fairness_analyses(h, m, np.array(list("aaabbbab")))
        >>> round(float(t.loc["R2", "Overall score difference"]), 4)
        0.3636
    """
    codes, labels = pd.factorize(pd.Series(groups).astype(str))
    cells = CellStats.from_arrays(
        np.asarray(human, float), np.asarray(system, float), codes, tuple(labels)
    )
    return fairness_from_cells(cells, base_group)[0]


def fairness_analyses_ols(
    human: np.ndarray, system: np.ndarray, groups: np.ndarray, base_group: str | None = None
) -> pd.DataFrame:
    """The same table by statsmodels formula OLS on every row (RSMTool's procedure; slow).

    Example:
        >>> import numpy as np
        >>> h = np.array([1., 2, 3, 1, 2, 3, 2, 3]); m = h + np.array([0, 0, 0, 1, 1, 1, 0.5, 0])
        >>> t = fairness_analyses_ols(h, m, np.array(list("aaabbbab")))
        >>> bool(np.isclose(t.loc["R2", "Overall score difference"],
        ...      fairness_analyses(h, m, np.array(list("aaabbbab"))).loc["R2", "Overall score difference"]))
        True
    """
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df = pd.DataFrame(
        {
            "h": np.asarray(human, float),
            "m": np.asarray(system, float),
            "g": pd.Series(groups).astype(str).to_numpy(),
        }
    )
    df["error"] = df["m"] - df["h"]
    df["SE"] = df["error"] ** 2
    codes, labels = pd.factorize(df["g"])
    base = labels[reference_group(tuple(labels), np.bincount(codes), base_group)]
    order = [base] + sorted([l for l in labels if l != base])
    df["group"] = pd.Categorical(df["g"], categories=order)
    df["hcat"] = pd.Categorical(df["h"])
    osa = smf.ols("SE ~ group", data=df).fit()
    osd = smf.ols("error ~ group", data=df).fit()
    null = smf.ols("error ~ hcat", data=df).fit()
    full = smf.ols("error ~ group + hcat", data=df).fit()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_csd = float(anova_lm(null, full).values[1][-1])
    table = pd.DataFrame(
        {
            FAIRNESS_METRICS[0]: [osa.rsquared_adj, osa.f_pvalue],
            FAIRNESS_METRICS[1]: [osd.rsquared_adj, osd.f_pvalue],
            FAIRNESS_METRICS[2]: [full.rsquared_adj - null.rsquared_adj, p_csd],
        },
        index=["R2", "sig"],
    )
    table["base_category"] = base
    return table
