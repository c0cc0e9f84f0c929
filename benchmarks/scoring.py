"""Benchmark: the full RSMTool table set on 1e6 responses, assay vs peers one metric at a time.

Data: 1e6 responses, human scores 1-6, continuous system scores, a second human score on 20%,
two subgroup columns (8 and 3 groups). assay computes every table with one call
(:func:`assay.scoring.scoring_tables`; :func:`assay.scoring.evaluate_scoring` gives the same
numbers as Metric records only and is timed too). The peer baseline computes the same cells
one metric at a time with scikit-learn (cohen_kappa_score, mean_squared_error, r2_score),
scipy (pearsonr), numpy (means, sds, QWK covariance formula, PRMSE formulas, DSM) and
statsmodels (formula OLS on every row + anova_lm for the fairness tables), as RSMTool does.
The two results are compared.

Optional: with ASSAY_RSMTOOL_PYTHON pointing at an interpreter with rsmtool installed, rsmtool's
own Analyzer / prmse / fairness functions are timed on the same data in that interpreter.

Then the rsmeval pipeline (``assay.scoring.rsmeval_tables``: read the CSV, trim, scale
``asis``, every rsmeval table including the per-response OLS coefficient tables) on
min(n, 1e5) responses.

Every time is printed as wall and CPU seconds of this process (the machine may be shared);
the ratio uses CPU time. BLAS is held to one thread (as assay's work is single-threaded).

Usage: python benchmarks/scoring.py [n]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def make_data(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3.5, 1.0, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2[rng.random(n) >= 0.2] = np.nan
    l1 = rng.choice([f"L{i}" for i in range(8)], n, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])
    sex = rng.choice(["F", "M", "X"], n, p=[0.49, 0.49, 0.02])
    m = t + rng.normal(0, 0.5, n) + 0.1 * (l1 == "L3")
    return pd.DataFrame({"h": h, "h2": h2, "m": m, "L1": l1, "sex": sex})


def peer_tables(df: pd.DataFrame, subgroups: list[str]) -> dict[str, pd.DataFrame]:
    """The same numbers, one metric call at a time (sklearn / scipy / statsmodels / numpy)."""
    import statsmodels.formula.api as smf
    from scipy.stats import pearsonr
    from sklearn.metrics import cohen_kappa_score, mean_squared_error, r2_score
    from statsmodels.stats.anova import anova_lm

    def qwk(a, b):
        return 2 * np.cov(a, b, ddof=0)[0][1] / (np.var(a) + np.var(b) + (a.mean() - b.mean()) ** 2)

    def metrics(h, y, pop=None, pooled=False):
        hr, yr = np.rint(h), np.rint(y)
        labels = np.arange(min(hr.min(), yr.min()), max(hr.max(), yr.max()) + 1)
        out = {
            "N": h.size,
            "h_mean": h.mean(),
            "h_sd": np.std(h, ddof=1),
            "h_min": h.min(),
            "h_max": h.max(),
            "sys_mean": y.mean(),
            "sys_sd": np.std(y, ddof=1),
            "sys_min": y.min(),
            "sys_max": y.max(),
            "corr": pearsonr(h, y)[0],
            "wtkappa": qwk(h, y),
            "R2": r2_score(h, y),
            "kappa": cohen_kappa_score(hr, yr, labels=labels),
            "exact_agr": np.mean(np.abs(h - y) <= 0) * 100,
            "adj_agr": np.mean(np.abs(h - y) <= 1) * 100,
            "RMSE": np.sqrt(mean_squared_error(h, y)),
        }
        if pop is not None:
            out["DSM"] = np.mean((y - pop[2]) / pop[3] - (h - pop[0]) / pop[1])
        elif pooled:
            out["SMD"] = (y.mean() - h.mean()) / np.sqrt(
                (np.var(h, ddof=1) + np.var(y, ddof=1)) / 2
            )
        else:
            out["SMD"] = (y.mean() - h.mean()) / np.std(h, ddof=1)
        return out

    h, m, h2 = df["h"].to_numpy(), df["m"].to_numpy(), df["h2"].to_numpy()
    mr = np.rint(m)
    tables = {}
    tables["eval"] = pd.DataFrame({"m": metrics(h, m), "m_round": metrics(h, mr)}).T
    d = ~np.isnan(h2)
    tables["consistency"] = pd.DataFrame({"": metrics(h[d], h2[d], pooled=True)}).T
    ratings = np.column_stack([h, h2])
    c = (~np.isnan(ratings)).sum(axis=1)
    means = np.nanmean(ratings, axis=1)
    multiple = c > 1
    se2 = np.average(np.nanvar(ratings[multiple], ddof=1, axis=1), weights=c[multiple] - 1)
    vt = ((c * (means - np.nanmean(ratings)) ** 2).sum() - (c.size - 1) * se2) / (
        c.sum() - (c**2).sum() / c.sum()
    )
    ts = {}
    for name, y in (("m", m), ("m_round", mr)):
        mse = ((c * (means - y) ** 2).sum() - c.size * se2) / c.sum()
        ts[name] = {
            "Variance of errors": se2,
            "True score var": vt,
            "MSE true": mse,
            "PRMSE true": 1 - mse / vt,
        }
    tables["true_score_eval"] = pd.DataFrame(ts).T
    for col in subgroups:
        g = df[col].to_numpy()
        pop_m = (h.mean(), np.std(h, ddof=1), m.mean(), np.std(m, ddof=1))
        pop_r = (h.mean(), np.std(h, ddof=1), mr.mean(), np.std(mr, ddof=1))
        rows = {}
        for lab in sorted(set(g)):
            s = g == lab
            a = metrics(h[s], m[s], pop=pop_m)
            b = metrics(h[s], mr[s], pop=pop_r)
            rows[lab] = {
                "N": a["N"],
                "corr.m": a["corr"],
                "wtkappa.m": a["wtkappa"],
                "DSM.m": a["DSM"],
                "R2.m": a["R2"],
                "kappa.m_round": b["kappa"],
                "exact_agr.m_round": b["exact_agr"],
                "DSM.m_round": b["DSM"],
            }
        tables[f"eval_by_{col}"] = pd.DataFrame(rows).T
        fd = pd.DataFrame({"sc1": h, "error": m - h, "grp": g})
        fd["SE"] = fd["error"] ** 2
        sizes = fd["grp"].value_counts()
        base = sorted(sizes.index, key=lambda k: (-sizes[k], k))[0]
        fd["group"] = pd.Categorical(fd["grp"], categories=[base] + sorted(set(g) - {base}))
        fd["sc1_cat"] = pd.Categorical(fd["sc1"])
        osa = smf.ols("SE ~ group", data=fd).fit()
        osd = smf.ols("error ~ group", data=fd).fit()
        null = smf.ols("error ~ sc1_cat", data=fd).fit()
        full = smf.ols("error ~ group + sc1_cat", data=fd).fit()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = anova_lm(null, full).values[1][-1]
        tables[f"fairness_metrics_by_{col}"] = pd.DataFrame(
            {
                "Overall score accuracy": [osa.rsquared_adj, osa.f_pvalue],
                "Overall score difference": [osd.rsquared_adj, osd.f_pvalue],
                "Conditional score difference": [full.rsquared_adj - null.rsquared_adj, p],
            },
            index=["R2", "sig"],
        )
    return tables


RSMTOOL_SCRIPT = r"""
import sys, time, warnings
warnings.simplefilter("ignore")
import pandas as pd
from rsmtool.analyzer import Analyzer
from rsmtool.fairness_utils import get_fairness_analyses
from rsmtool.utils.prmse import get_true_score_evaluations
df = pd.read_csv(sys.argv[1])
df = df.rename(columns={"h": "sc1", "h2": "sc2", "m": "raw_trim"})
df["raw_trim_round"] = df["raw_trim"].round().astype("int64")
t0 = time.perf_counter()
an = Analyzer()
cols = ["sc1", "raw_trim", "raw_trim_round", "sc2"]
an.compute_metrics(df[cols].copy(), compute_shortened=True, include_second_score=True)
get_true_score_evaluations(df, ["raw_trim", "raw_trim_round"], ["sc1", "sc2"])
for col in ["L1", "sex"]:
    an.compute_metrics_by_group(df[["sc1", "raw_trim", "raw_trim_round", col]].copy(), col)
    get_fairness_analyses(df[["sc1", "raw_trim", col]].copy(), col, "raw_trim", "sc1")
print(time.perf_counter() - t0)
"""


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(t: tuple[float, float]) -> tuple[float, float]:
    """(wall, CPU) seconds since ``t``."""
    return time.perf_counter() - t[0], time.process_time() - t[1]


def main() -> None:
    from assay.scoring import evaluate_scoring, scoring_tables

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    subgroups = ["L1", "sex"]
    df = make_data(n)
    share = (~df["h2"].isna()).mean()
    print(f"scoring benchmark: {n:,} responses, second score on {share:.0%}, groups {subgroups}")
    kw = dict(human="h", system="m", human2="h2", group_columns=subgroups)
    scoring_tables(df.iloc[:1000], **kw)  # warm imports
    times, times_records = [], []
    for _ in range(3):
        t0 = _clock()
        res = scoring_tables(df, **kw)
        times.append(_since(t0))
        t0 = _clock()
        evaluate_scoring(df, **kw)
        times_records.append(_since(t0))
    t_assay = min(times, key=lambda t: t[1])

    t0 = _clock()
    peer = peer_tables(df, subgroups)
    t_peer = _since(t0)

    # agreement between the two
    worst, where = 0.0, ""
    for name, pt in peer.items():
        at = res.tables[name]
        for row in pt.index:
            for col in pt.columns:
                key = row if name != "consistency" else ""
                acol = col
                if name == "consistency":
                    acol = {
                        "h_mean": "h1_mean",
                        "h_sd": "h1_sd",
                        "h_min": "h1_min",
                        "h_max": "h1_max",
                        "sys_mean": "h2_mean",
                        "sys_sd": "h2_sd",
                        "sys_min": "h2_min",
                        "sys_max": "h2_max",
                    }.get(col, col)
                    if acol in ("R2", "RMSE"):
                        continue
                diff = abs(float(at.loc[key, acol]) - float(pt.loc[row, col]))
                if diff > worst:
                    worst, where = diff, f"{name}[{row!r}, {col!r}]"
    runs = ", ".join(f"{t[1]:.2f}" for t in times)
    rec = min(times_records, key=lambda t: t[1])
    print("  (wall s / CPU s)")
    tab = f"{t_assay[0]:6.2f} / {t_assay[1]:6.2f}"
    print(f"  assay scoring_tables (all tables):   {tab}  (CPU of 3: {runs})")
    print(f"  assay evaluate_scoring (records):    {rec[0]:6.2f} / {rec[1]:6.2f}  (best of 3)")
    print(f"  peers one metric at a time:          {t_peer[0]:6.2f} / {t_peer[1]:6.2f}")
    print(f"  CPU time: peers / assay tables = {t_peer[1] / t_assay[1]:.1f}x")
    print(f"  max |assay - peers| over all compared cells: {worst:.2e} at {where}")

    rsm = os.environ.get("ASSAY_RSMTOOL_PYTHON")
    if rsm:
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "d.csv")
            df.to_csv(p, index=False)
            proc = subprocess.run([rsm, "-c", RSMTOOL_SCRIPT, p], capture_output=True, text=True)
            if proc.returncode == 0:
                t_rsm = float(proc.stdout.strip().splitlines()[-1])
                print(
                    "  rsmtool 12 (Analyzer + prmse + fairness, own interpreter): "
                    f"{t_rsm:8.2f} s wall  ratio {t_rsm / t_assay[0]:.1f}x (wall)"
                )
            else:
                print("  rsmtool run failed:", proc.stderr[-500:])
    bench_rsmeval(df.iloc[: min(n, 100_000)])


def bench_rsmeval(df: pd.DataFrame) -> None:
    """Time the rsmeval pipeline (CSV in, every table out) on ``df``."""
    import json

    from assay.scoring import run_rsmeval

    with tempfile.TemporaryDirectory() as tmp:
        d = df.assign(id=[f"r{i}" for i in range(len(df))])
        d.to_csv(os.path.join(tmp, "p.csv"), index=False)
        cfg = {
            "experiment_id": "bench",
            "predictions_file": "p.csv",
            "system_score_column": "m",
            "human_score_column": "h",
            "second_human_score_column": "h2",
            "id_column": "id",
            "subgroups": ["L1", "sex"],
            "trim_min": 1,
            "trim_max": 6,
            "scale_with": "asis",
        }
        path = os.path.join(tmp, "c.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        t0 = _clock()
        tables = run_rsmeval(path)
        wall, cpu = _since(t0)
    what = f"{len(df):,} responses, {len(tables)} tables"
    print(f"  rsmeval pipeline ({what}): {wall:.2f} / {cpu:.2f} s (wall / CPU)")


if __name__ == "__main__":
    main()
