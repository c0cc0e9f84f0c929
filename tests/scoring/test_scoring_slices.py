"""Scoring slices (``by=``, ``--by``): every slice record equals the ``eval`` record of the
input filtered to that subgroup and evaluated alone (DSM: the ``eval_by_<col>`` table's);
the gap is the slice minus the whole set; a too-small slice is null with the reason; with
``ci`` the slice's and the gap's intervals equal a loop over materialised resamples in which
slice and whole come from the same draw; the CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr
from typer.testing import CliRunner

from assay.cli.main import app
from assay.scoring import evaluate_scoring
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 40, 2
KINDS = (
    "PearsonR",
    "QWK",
    "R2",
    "CohenKappa",
    "ExactAgreement",
    "AdjacentAgreement",
    "SMD",
    "RMSE",
)


def _frame(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    m = np.round(h + rng.normal(0.1, 0.8, n), 1)
    l1 = rng.choice(["es", "zh", "ar"], n, p=[0.5, 0.3, 0.2])
    l1[0] = "xx"  # a slice of one response
    return pd.DataFrame({"h": h, "m": m, "L1": l1, "site": rng.choice([1, 2], n)})


@pytest.mark.parametrize("smd_method", ["unpooled", "pooled"])
def test_slices_equal_each_subgroup_evaluated_alone(smd_method: str) -> None:
    df = _frame()
    ms = evaluate_scoring(df, human="h", system="m", by=["L1", "site"], smd_method=smd_method)
    whole = evaluate_scoring(df, human="h", system="m", smd_method=smd_method)
    by_tables = evaluate_scoring(df, human="h", system="m", group_columns=["L1", "site"])
    checked = 0
    for col in ("L1", "site"):
        for value in sorted({str(v) for v in df[col]}):
            alone = evaluate_scoring(
                df[df[col].astype(str) == value], human="h", system="m", smd_method=smd_method
            )
            for score in ("m", "m_round"):
                for kind in KINDS:
                    got = ms.get(kind, slice_column=col, slice=value, score=score)
                    want = alone.get(kind, table="eval", score=score)
                    assert got.parameters["n"] == (df[col].astype(str) == value).sum()
                    if want.value is None:
                        assert got.value is None
                        assert got.parameters["undefined"] == want.parameters["undefined"]
                        assert got.parameters["gap"] is None
                        continue
                    assert got.value == pytest.approx(want.value, rel=1e-9, abs=1e-12)
                    ref = whole.get(kind, table="eval", score=score).value
                    assert got.parameters["gap"] == pytest.approx(want.value - ref, abs=1e-9)
                    checked += 1
                dsm = ms.get("DSM", slice_column=col, slice=value, score=score)
                table = by_tables.filter("DSM", table=f"eval_by_{col}", score=score, group=value)
                assert dsm.value == pytest.approx(table[0].value, rel=1e-9, abs=1e-12)
                assert dsm.parameters["gap"] is None
    assert checked > 80
    tiny = ms.get("PearsonR", slice_column="L1", slice="xx", score="m")
    assert tiny.value is None and "N >= 2" in tiny.parameters["undefined"]


def test_by_adds_records_only_and_shares_the_group_state() -> None:
    df = _frame(seed=1)
    plain = evaluate_scoring(df, human="h", system="m", group_columns=["L1"])
    both = evaluate_scoring(df, human="h", system="m", group_columns=["L1"], by=["L1", "site"])
    sliced = [m for m in both if "slice_column" in m.parameters]
    rest = [m for m in both if "slice_column" not in m.parameters]
    assert [m.to_dict() for m in rest] == [m.to_dict() for m in plain]
    assert {m.parameters["slice_column"] for m in sliced} == {"L1", "site"}
    assert not [m for m in both if m.parameters.get("table") == "eval_by_site"]


def _peer(h: np.ndarray, m: np.ndarray) -> dict[str, float]:
    return {
        "PearsonR": pearsonr(h, m)[0] if len(h) > 1 and h.std() > 0 and m.std() > 0 else np.nan,
        "QWK": 2 * np.cov(h, m, ddof=0)[0, 1] / (h.var() + m.var() + (m.mean() - h.mean()) ** 2),
        "RMSE": np.sqrt(np.mean((m - h) ** 2)),
        "SMD": (m.mean() - h.mean()) / h.std(ddof=1) if len(h) > 1 and h.std() > 0 else np.nan,
    }


def test_slice_and_gap_intervals_equal_a_loop_over_materialised_resamples() -> None:
    df = _frame(n=150, seed=2)
    df = df[df.L1 != "xx"]
    ms = evaluate_scoring(
        df, human="h", system="m", by=["L1"], ci=LEVEL, num_bootstrap=B, seed=SEED
    )
    names, code = np.unique(df.L1.to_numpy().astype(str), return_inverse=True)
    units, mult, _ = collapse(np.column_stack([df.h, df.m, code]))
    vals: dict[tuple[str, str], list[float]] = {}
    gaps: dict[tuple[str, str], list[float]] = {}
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        idx = np.repeat(np.arange(len(units)), w.astype(np.int64))
        hh, mm, cc = units[idx, 0], units[idx, 1], units[idx, 2]
        whole = _peer(hh, mm)
        for j, name in enumerate(names):
            part = _peer(hh[cc == j], mm[cc == j])
            for k, v in part.items():
                vals.setdefault((k, name), []).append(v)
                gaps.setdefault((k, name), []).append(v - whole[k])
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    for (kind, name), v in vals.items():
        p = ms.get(kind, slice_column="L1", slice=name, score="m").parameters
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(np.nanquantile(v, q), rel=1e-9)
        want = np.nanquantile(gaps[(kind, name)], q)
        assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert (p["ci_method"], p["num_bootstrap"], p["seed"]) == ("bootstrap", B, SEED)


def test_cli_by(tmp_path) -> None:
    df = _frame(seed=3)
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    args = ["scoring", "--data", str(path), "--human", "h", "--system", "m"]
    r = CliRunner().invoke(app, [*args, "--out-dir", str(tmp_path / "o"), "--by", "L1"])
    assert r.exit_code == 0, r.output
    got = [d for d in json.loads(r.stdout) if d["parameters"].get("slice_column") == "L1"]
    want = [
        m
        for m in evaluate_scoring(df, human="h", system="m", by=["L1"]).to_list()
        if m["parameters"].get("slice_column") == "L1"
    ]
    assert got == want and got
    r = CliRunner().invoke(app, [*args, "--out-dir", str(tmp_path / "p"), "--by", "nope"])
    assert r.exit_code == 2 and "nope" in r.output and "Traceback" not in r.output


def _rated(n: int = 160, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    h2 = np.where(rng.random(n) < 0.6, np.clip(h + rng.integers(-1, 2, n), 1, 5), np.nan)
    m = np.round(h + rng.normal(0, 0.8, n), 1)
    return pd.DataFrame({"h": h, "h2": h2, "m": m, "L1": rng.choice(["es", "zh", "ar"], n)})


def test_prmse_slices_equal_prmse_true_of_each_subgroup_and_their_gap_intervals() -> None:
    from assay.scoring.tally import true_rows
    from assay.scoring.true_score import prmse_true

    df = _rated()
    ms = evaluate_scoring(
        df, human="h", human2="h2", system="m", by=["L1"], ci=LEVEL, num_bootstrap=B, seed=SEED
    )
    ratings = df[["h", "h2"]].to_numpy()
    (whole,) = [m for m in ms.filter("PRMSE", score="m") if "slice_column" not in m.parameters]
    for value in ("ar", "es", "zh"):
        sub = (df.L1 == value).to_numpy()
        got = ms.get("PRMSE", slice_column="L1", slice=value, score="m")
        want = prmse_true(df.m[sub], ratings[sub])
        assert got.value == pytest.approx(want, rel=1e-9)
        assert got.parameters["gap"] == pytest.approx(want - whole.value, abs=1e-9)
    names, code = np.unique(df.L1.to_numpy().astype(str), return_inverse=True)
    units, mult, inv = collapse(np.column_stack([df.m, true_rows(ratings), code]))
    rep = np.array([np.flatnonzero(inv == i)[0] for i in range(len(units))])
    vals: dict[str, list[float]] = {}
    gaps: dict[str, list[float]] = {}
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        idx = np.repeat(rep, w.astype(np.int64))
        r, s, c = ratings[idx], df.m.to_numpy()[idx], code[idx]
        all_ = prmse_true(s, r)
        for j, name in enumerate(names):
            v = prmse_true(s[c == j], r[c == j])
            vals.setdefault(name, []).append(v)
            gaps.setdefault(name, []).append(v - all_)
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    for name in names:
        p = ms.get("PRMSE", slice_column="L1", slice=name, score="m").parameters
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(np.quantile(vals[name], q), rel=1e-9)
        want = np.quantile(gaps[name], q)
        assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_cli_by_with_bca_intervals_equals_the_api(tmp_path) -> None:
    df = _rated(seed=6)
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    args = ["scoring", "--data", str(path), "--human", "h", "--human2", "h2", "--system", "m"]
    extra = ["--by", "L1", "--ci", "0.8", "--ci-method", "bca", "--num-bootstrap", "50"]
    r = CliRunner().invoke(app, [*args, *extra, "--out-dir", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    want = evaluate_scoring(
        df,
        human="h",
        human2="h2",
        system="m",
        by=["L1"],
        ci=0.8,
        ci_method="bca",
        num_bootstrap=50,
    )
    got = json.loads(r.stdout)
    assert got == json.loads(want.to_json())
    assert {d["parameters"].get("ci_method") for d in got} >= {"bca"}


def test_dsm_slices_have_no_gap_even_when_eval_reports_dsm() -> None:
    df = _frame(seed=8)
    ms = evaluate_scoring(
        df, human="h", system="m", by=["L1"], use_diff_std_means=True, ci=0.9, num_bootstrap=30
    )
    dsm = ms.get("DSM", slice_column="L1", slice="es", score="m").parameters
    assert dsm["gap"] is None and "gap_ci_low" not in dsm and "ci_low" in dsm
