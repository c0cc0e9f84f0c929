"""Intervals on ``fairness_metrics_by_<column>`` (the R^2 of OSA, OSD, CSD) and on
``consistency_by_<column>``: equal to a naive loop that materialises every resample as
responses (each distinct response repeated by its count) and refits the models with numpy
least squares (fairness) or runs numpy / scipy / scikit-learn (consistency); BCa against the
same loop's jackknife (each distinct response left out once) through
``assay.uncertainty.intervals.bca``;
seeded; merged and stored; the CLI refuses bad combinations with one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from assay.cli.main import app
from assay.scoring import ScoringEvaluator, evaluate_scoring
from assay.scoring.fairness_fits import FAIRNESS_CI_TYPES, fairness_r2
from assay.scoring.level_stats import CellStats
from assay.scoring.subgroup_ols import FAIRNESS_METRICS, fairness_analyses
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import bca
from assay.uncertainty.resampling import resample_counts
from contract import assert_same_metrics

LEVEL, B, SEED = 0.9, 40, 5
Q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
CONSISTENCY = ("PearsonR", "QWK", "CohenKappa", "ExactAgreement", "AdjacentAgreement", "DSM")


def _frame(n: int = 150, seed: int = 0) -> pd.DataFrame:
    """Three groups, group "b" scored 0.4 high, a second human on about half."""
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    m = np.round(np.clip(h + 0.4 * (g == "b") + rng.normal(0, 0.8, n), 1, 5), 1)
    h2 = np.where(rng.random(n) < 0.5, np.clip(h + rng.integers(-1, 2, n), 1, 5), np.nan)
    return pd.DataFrame({"h": h, "m": m, "h2": h2, "g": g})


# ---------------------------------------------------------------- naive refits


def _adjusted_r2(y: np.ndarray, x: np.ndarray) -> float:
    """Adjusted R^2 of the least-squares fit of ``y`` on ``x`` (with its constant column)."""
    coef, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    n = y.size
    return 1.0 - (n - 1) / (n - rank) * float(resid @ resid) / float(((y - y.mean()) ** 2).sum())


def _dummies(v: np.ndarray) -> np.ndarray:
    return (v[:, None] == np.unique(v)[None, :]).astype(float)


def _naive_fairness(h: np.ndarray, m: np.ndarray, g: np.ndarray) -> list[float]:
    """OSA, OSD, CSD refitted on the rows: every group's and level's dummy, lstsq's rank."""
    e, one = m - h, np.ones((h.size, 1))
    groups, levels = _dummies(g), _dummies(h)
    osa = _adjusted_r2(e * e, np.hstack([one, groups]))
    osd = _adjusted_r2(e, np.hstack([one, groups]))
    csd = _adjusted_r2(e, np.hstack([one, levels, groups])) - _adjusted_r2(
        e, np.hstack([one, levels])
    )
    return [osa, osd, csd]


def _naive_consistency(h: np.ndarray, two: np.ndarray, h2: np.ndarray, g: np.ndarray) -> list:
    """``consistency_by`` on the rows: All data, then each group (sorted)."""
    pop = (h.mean(), h.std(ddof=1), h2[two].mean(), h2[two].std(ddof=1))
    out = []
    for keep in [two, *(two & (g == j) for j in np.unique(g))]:
        x, y = h[keep], h2[keep]
        xr, yr = np.rint(x).astype(int), np.rint(y).astype(int)
        cov = np.cov(x, y, ddof=0)[0, 1]
        out += [
            pearsonr(x, y)[0],
            2 * cov / (x.var() + y.var() + (y.mean() - x.mean()) ** 2),
            cohen_kappa_score(xr, yr) if len({*xr, *yr}) > 1 else 1.0,
            100 * np.mean(x == y),
            100 * np.mean(np.abs(x - y) <= 1),
            (y.mean() - pop[2]) / pop[3] - (x.mean() - pop[0]) / pop[1],
        ]
    return out


def _loop(units: np.ndarray, mult: np.ndarray, fn) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """``fn`` on every resample and on every leave-one-out set, materialised as rows."""
    reps = []
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        reps.append(fn(units[np.repeat(np.arange(len(units)), w.astype(np.int64))]))
    jack = []
    for i in range(len(units)):
        w = mult.copy()
        w[i] -= 1
        jack.append(fn(units[np.repeat(np.arange(len(units)), w)]))
    return np.array(reps), np.array(jack)


def _want(reps: np.ndarray, jack: np.ndarray, est: np.ndarray, mult, method: str):  # noqa: ANN001, ANN202
    if method == "bca":
        return bca(reps, est, jack, mult, LEVEL)
    return np.quantile(reps, Q, axis=0)


@pytest.mark.parametrize("method", ["bootstrap", "bca"])
def test_fairness_intervals_equal_a_loop_of_least_squares_refits(method: str) -> None:
    df = _frame()
    ms = evaluate_scoring(df, human="h", system="m", group_columns=["g"], ci=LEVEL,
                          ci_method=method, num_bootstrap=B, seed=SEED)  # fmt: skip
    code = np.unique(df.g, return_inverse=True)[1]
    units, mult, _ = collapse(np.column_stack([df.h, df.m, code]))

    def fn(rows: np.ndarray) -> list[float]:
        return _naive_fairness(rows[:, 0], rows[:, 1], rows[:, 2])

    reps, jack = _loop(units, mult, fn)
    est = np.array([ms.get(k, table="fairness_metrics_by_g").value for k in FAIRNESS_CI_TYPES])
    assert est == pytest.approx(fn(units[np.repeat(np.arange(len(units)), mult)]), abs=1e-12)
    want = _want(reps, jack, est, mult, method)
    for j, kind in enumerate(FAIRNESS_CI_TYPES):
        p = ms.get(kind, table="fairness_metrics_by_g").parameters
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want[:, j], rel=1e-10, abs=1e-12)
        assert (p["ci_method"], p["num_bootstrap"], p["seed"]) == (method, B, SEED)
        assert "ci_low" not in ms.get(kind + "PValue", table="fairness_metrics_by_g").parameters


@pytest.mark.parametrize("method", ["bootstrap", "bca"])
def test_consistency_by_intervals_equal_a_loop_over_materialised_resamples(method: str) -> None:
    df = _frame(seed=1)
    ms = evaluate_scoring(df, human="h", system="m", human2="h2", group_columns=["g"],
                          ci=LEVEL, ci_method=method, num_bootstrap=B, seed=SEED)  # fmt: skip
    names, code = np.unique(df.g, return_inverse=True)
    has = df.h2.notna().to_numpy()
    rows = np.column_stack([df.h, has, np.where(has, df.h2, 0.0), code])
    units, mult, _ = collapse(rows)

    def fn(r: np.ndarray) -> list:
        return _naive_consistency(r[:, 0], r[:, 1] > 0, r[:, 2], r[:, 3])

    reps, jack = _loop(units, mult, fn)
    groups = ["All data", *names.tolist()]
    found = [ms.get(k, table="consistency_by_g", group=g) for g in groups for k in CONSISTENCY]
    est = np.array([m.value for m in found])
    assert est == pytest.approx(fn(units[np.repeat(np.arange(len(units)), mult)]), rel=1e-12)
    want = _want(reps, jack, est, mult, method)
    for j, m in enumerate(found):
        p = m.parameters
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want[:, j], rel=1e-10, abs=1e-12), (
            m.type,
            p["group"],
        )
        assert p["ci_method"] == method


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.integers(1, 4), st.integers(0, 10**6), st.booleans())
def test_property_resampled_fits_are_the_point_fits_of_the_weighted_rows(
    n: int, groups: int, seed: int, linked: bool
) -> None:
    """``fairness_r2`` of cell sums is ``fairness_analyses`` (statsmodels WLS) of the rows,
    degenerate data included: one group, constant errors, groups with no shared human score
    (``linked`` false: each group on its own scores)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    h = rng.integers(1, 4, n).astype(float) + (0 if linked else 3 * g)
    m = h + rng.choice([0.0, 0.5, 1.0], n) * (rng.random() < 0.8)
    cells = CellStats.from_arrays(h, m, g, tuple(range(groups)))
    got = fairness_r2(cells.n[None], cells.s1[None], cells.s2[None], cells.s4[None])[0]
    want = fairness_analyses(h, m, g.astype(str)).loc["R2", list(FAIRNESS_METRICS)]
    assert got == pytest.approx(want.to_numpy(dtype=float), abs=1e-10, nan_ok=True)


def _records(ms, *tables: str) -> list[dict]:  # noqa: ANN001
    return [m.to_dict() for m in ms if m.parameters.get("table") in tables]


def test_seeded_values_unchanged_and_the_bootstrap_said_for_other_methods() -> None:
    df = _frame(seed=2)
    kw = {"human": "h", "system": "m", "human2": "h2", "group_columns": ["g"]}
    tables = ("fairness_metrics_by_g", "consistency_by_g")
    a, b = (evaluate_scoring(df, **kw, ci=0.9, num_bootstrap=30, seed=1) for _ in range(2))
    c = evaluate_scoring(df, **kw, ci=0.9, num_bootstrap=30, seed=2)
    assert _records(a, *tables) == _records(b, *tables) != _records(c, *tables)
    plain = evaluate_scoring(df, **kw)
    assert [m.value for m in a] == [m.value for m in plain]
    with_ci = [m for m in a if m.parameters.get("table") in tables and "ci_low" in m.parameters]
    assert len(with_ci) == 3 + 4 * len(CONSISTENCY)
    wilson = evaluate_scoring(df, **kw, ci=0.9, num_bootstrap=30, ci_method="wilson")
    p = wilson.get("OverallScoreDifference", table="fairness_metrics_by_g").parameters
    assert p["ci_method"] == "bootstrap" and p["ci_low"] < p["ci_high"]


def test_merged_batches_and_state_equal_one_evaluator() -> None:
    df = _frame(seed=3)
    kw = {"human": "h", "system": "m", "human2": "h2", "group_columns": ["g"], "ci": 0.9}
    kw |= {"num_bootstrap": 40, "ci_method": "bca"}
    one = ScoringEvaluator(**kw).add(df).compute()
    parts = [ScoringEvaluator(**kw).add(df.iloc[i : i + 50]) for i in range(0, 150, 50)]
    merged = ScoringEvaluator.from_state(parts[2].merge(parts[0]).merge(parts[1]).state())
    got = merged.compute()
    assert assert_same_metrics(got, one, rel=1e-9) > 0
    for kind, table in (("ConditionalScoreDifference", "fairness_metrics_by_g"),
                        ("DSM", "consistency_by_g")):  # fmt: skip
        assert got.filter(kind, table=table)[0].parameters["ci_low"] is not None


def test_cli_saves_shows_and_exports_the_intervals(tmp_path) -> None:
    df = _frame(seed=4)
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    db = str(tmp_path / "runs.db")
    args = ["scoring", "--data", str(path), "--human", "h", "--system", "m", "--human2", "h2"]
    args += ["--subgroup", "g", "--ci", "0.9", "--num-bootstrap", "25", "--seed", "3"]
    r = CliRunner().invoke(app, [*args, "--out-dir", str(tmp_path / "o"), "--save", "--db", db])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    want = evaluate_scoring(df, human="h", system="m", human2="h2", group_columns=["g"],
                            ci=0.9, num_bootstrap=25, seed=3)  # fmt: skip
    assert printed == json.loads(want.to_json())
    tables = ("fairness_metrics_by_g", "consistency_by_g")
    assert sum(m["parameters"].get("table") in tables and "ci_low" in m["parameters"]
               for m in printed) == 3 + 4 * len(CONSISTENCY)  # fmt: skip
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--ci", "1.5"], "--ci"),
        (["--ci", "0.9", "--ci-method", "jackknife"], "--ci-method"),
        (["--cluster", "g"], "--cluster"),
    ],
)
def test_cli_bad_interval_combinations_exit_2_with_one_line(tmp_path, extra, flag) -> None:
    path = tmp_path / "s.csv"
    _frame(n=30).to_csv(path, index=False)
    args = ["scoring", "--data", str(path), "--human", "h", "--system", "m", "--subgroup", "g"]
    r = CliRunner().invoke(app, [*args, "--out-dir", str(tmp_path / "o"), *extra])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and flag in r.output, r.output
    assert not (tmp_path / "o").exists()
