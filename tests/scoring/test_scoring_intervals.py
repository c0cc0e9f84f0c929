"""Scoring intervals over responses: the vectorised bootstrap equals a Python loop running
scikit-learn / scipy on each resample materialised as responses (same resample counts);
seeded; the value unchanged; state and merge carry the response pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score, r2_score

from assay.errors import UndefinedMetricError
from assay.scoring import ScoringEvaluator, evaluate_scoring
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.resampling import resample_counts
from contract import assert_same_metrics

LEVEL, B, SEED = 0.9, 40, 3


def _frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    m = np.round(np.clip(h + rng.normal(0, 0.9, n), 1, 5), 1)  # ties: repeated pairs
    return pd.DataFrame({"h": h, "m": m, "g": rng.choice(["a", "b"], n)})


def _peer(h: np.ndarray, m: np.ndarray) -> dict[str, float]:
    """The metrics of one resample from scikit-learn, scipy and numpy."""
    hr, mr = np.rint(h).astype(int), np.rint(m).astype(int)
    d = m - h
    return {
        "PearsonR": pearsonr(h, m)[0],
        "QWK": 2 * np.cov(h, m, ddof=0)[0, 1] / (h.var() + m.var() + (m.mean() - h.mean()) ** 2),
        "R2": r2_score(h, m),
        "CohenKappa": cohen_kappa_score(hr, mr) if len({*hr, *mr}) > 1 else 1.0,
        "ExactAgreement": 100 * np.mean(np.abs(d) <= 0),
        "AdjacentAgreement": 100 * np.mean(np.abs(d) <= 1),
        "SMD": (m.mean() - h.mean()) / h.std(ddof=1),
        "RMSE": np.sqrt(np.mean(d * d)),
    }


@pytest.mark.parametrize("form", ["m", "m_round"])
def test_bootstrap_equals_peers_on_each_materialised_resample(form: str) -> None:
    df = _frame()
    ms = evaluate_scoring(df, human="h", system="m", ci=LEVEL, num_bootstrap=B, seed=SEED)
    h = df.h.to_numpy()
    m = df.m.to_numpy() if form == "m" else np.rint(df.m.to_numpy())
    units, mult, _ = collapse(np.column_stack([h, m]))
    loops: dict[str, list[float]] = {}
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        idx = np.repeat(np.arange(len(units)), w.astype(np.int64))
        for k, v in _peer(units[idx, 0], units[idx, 1]).items():
            loops.setdefault(k, []).append(v)
    for kind, values in loops.items():
        p = ms.get(kind, table="eval", score=form).parameters
        want = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-9, abs=1e-12), kind
        assert (p["ci_method"], p["num_bootstrap"], p["seed"]) == ("bootstrap", B, SEED)


def test_seeded_value_unchanged_and_only_the_tables_with_intervals() -> None:
    df = _frame(seed=1)
    a = evaluate_scoring(df, human="h", system="m", group_columns=["g"], ci=0.95, seed=1)
    b = evaluate_scoring(df, human="h", system="m", group_columns=["g"], ci=0.95, seed=1)
    c = evaluate_scoring(df, human="h", system="m", group_columns=["g"], ci=0.95, seed=2)
    plain = evaluate_scoring(df, human="h", system="m", group_columns=["g"])
    assert a.to_json() == b.to_json() != c.to_json()
    assert [m.value for m in a] == [m.value for m in plain]
    with_ci = {(m.type, m.parameters["table"]) for m in a if "ci_low" in m.parameters}
    assert {t for _, t in with_ci} == {"eval", "eval_by_g", "fairness_metrics_by_g"}
    assert len({k for k, t in with_ci if t == "eval"}) == 8


def test_batches_merge_and_state_carry_the_pairs() -> None:
    df = _frame(seed=2)
    one = ScoringEvaluator(human="h", system="m", ci=0.9, num_bootstrap=50).add(df).compute()
    a = ScoringEvaluator(human="h", system="m", ci=0.9, num_bootstrap=50).add(df[:50])
    b = ScoringEvaluator(human="h", system="m", ci=0.9, num_bootstrap=50).add(df[50:])
    merged = ScoringEvaluator.from_state(b.merge(a).state())
    assert assert_same_metrics(merged.compute(), one, rel=1e-9) > 0
    got = merged.compute().get("QWK", table="eval", score="m").parameters
    want = one.get("QWK", table="eval", score="m").parameters
    assert got["ci_low"] == pytest.approx(want["ci_low"], rel=1e-9)


def test_cli_ci(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    df = _frame(seed=4)
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    args = ["scoring", "--data", str(path), "--human", "h", "--system", "m"]
    r = CliRunner().invoke(app, [*args, "--out-dir", str(tmp_path / "o"), "--ci", "0.8"])
    assert r.exit_code == 0, r.output
    got = [
        d for d in json.loads(r.stdout) if d["type"] == "QWK" and d["parameters"]["score"] == "m"
    ]
    want = evaluate_scoring(df, human="h", system="m", ci=0.8)
    p = want.get("QWK", table="eval", score="m").parameters
    assert got[0]["parameters"]["ci_low"] == pytest.approx(p["ci_low"], rel=1e-12)
    r = CliRunner().invoke(
        app, [*args, "--out-dir", str(tmp_path / "p"), "--ci", "0.8", "--num-bootstrap", "1"]
    )
    assert r.exit_code == 2 and "--num-bootstrap" in r.output


@pytest.mark.parametrize("form", ["m", "m_round"])
def test_by_group_intervals_equal_peers_on_materialised_resamples(form: str) -> None:
    """eval_by_<column>: each group's metrics (and DSM against the resample's whole set) on
    every resample materialised as responses, with the same counts."""
    df = _frame(n=160, seed=6)
    ms = evaluate_scoring(
        df, human="h", system="m", group_columns=["g"], ci=LEVEL, num_bootstrap=B, seed=SEED
    )
    h = df.h.to_numpy()
    m = df.m.to_numpy() if form == "m" else np.rint(df.m.to_numpy())
    names, code = np.unique(df.g.to_numpy().astype(str), return_inverse=True)
    units, mult, _ = collapse(np.column_stack([h, m, code]))
    loops: dict[tuple[str, str], list[float]] = {}
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        idx = np.repeat(np.arange(len(units)), w.astype(np.int64))
        hh, mm, cc = units[idx, 0], units[idx, 1], units[idx, 2]
        for j, name in enumerate(names):
            x, y = hh[cc == j], mm[cc == j]
            peer = _peer(x, y)
            peer["DSM"] = (y.mean() - mm.mean()) / mm.std(ddof=1) - (x.mean() - hh.mean()) / hh.std(
                ddof=1
            )
            for k, v in peer.items():
                loops.setdefault((k, str(name)), []).append(v)
    checked = 0
    for (kind, group), values in loops.items():
        if kind == "SMD":
            continue  # the by-group tables report DSM
        found = ms.filter(kind, table="eval_by_g", score=form, group=group)
        if not found:
            continue  # the table shows this column for the other score form only
        p = found[0].parameters
        want = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-9, abs=1e-12), kind
        checked += 1
    assert checked >= 8


def _rated(n: int = 140, seed: int = 0, raters: int = 2) -> pd.DataFrame:
    """Human ratings with a second (and third) rater on some responses only."""
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    out = {"h": h, "m": np.round(np.clip(h + rng.normal(0, 0.8, n), 1, 5), 1)}
    for k in range(2, raters + 1):
        extra = np.clip(h + rng.integers(-1, 2, n), 1, 5).astype(float)
        extra[rng.random(n) < 0.4] = np.nan
        out[f"h{k}"] = extra
    return pd.DataFrame(out)


@pytest.mark.parametrize(("raters", "given"), [(2, None), (3, None), (1, 0.3)])
def test_prmse_interval_equals_a_loop_over_materialised_resamples(raters, given) -> None:
    """Each resample materialised as responses (a representative of every collapsed unit,
    repeated by its count) and run through ``prmse_true`` and its parts: to 1e-12."""
    from assay.scoring.tally import true_rows
    from assay.scoring.true_score import mse_true, prmse_true, true_score_variance

    df = _rated(seed=raters, raters=raters)
    extra = [f"h{k}" for k in range(2, raters + 1)]
    ms = evaluate_scoring(
        df,
        human="h",
        system="m",
        human2=extra or None,
        rater_error_variance=given,
        ci=LEVEL,
        num_bootstrap=B,
        seed=SEED,
    )
    ratings = df[["h", *extra]].to_numpy()
    for form in ("m", "m_round"):
        y = df.m.to_numpy() if form == "m" else np.rint(df.m.to_numpy())
        units, mult, inv = collapse(np.column_stack([y, true_rows(ratings)]))
        rep = np.array([np.flatnonzero(inv == i)[0] for i in range(len(units))])
        loops: dict[str, list[float]] = {"PRMSE": [], "MSETrue": [], "TrueScoreVariance": []}
        for w in np.concatenate(list(resample_counts(mult, B, SEED))):
            idx = np.repeat(rep, w.astype(np.int64))
            r, s = ratings[idx], y[idx]
            loops["MSETrue"].append(mse_true(s, r, given))
            loops["TrueScoreVariance"].append(true_score_variance(r, given))
            try:
                loops["PRMSE"].append(prmse_true(s, r, given))
            except UndefinedMetricError:  # an undefined resample is left out, as the bootstrap does
                pass
        for kind, values in loops.items():
            p = ms.get(kind, table="true_score_eval", score=form).parameters
            want = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-12, abs=1e-12), kind
        err = ms.get("RaterErrorVariance", table="true_score_eval", score=form).parameters
        assert ("ci_low" in err) == (given is None)


def test_prmse_interval_survives_merge_and_state() -> None:
    df = _rated(seed=9)
    kw = {"human": "h", "system": "m", "human2": "h2", "ci": 0.9, "num_bootstrap": 40}
    one = ScoringEvaluator(**kw).add(df).compute()
    a, b = ScoringEvaluator(**kw).add(df[:60]), ScoringEvaluator(**kw).add(df[60:])
    merged = ScoringEvaluator.from_state(a.merge(b).state()).compute()
    assert assert_same_metrics(merged, one, rel=1e-9) > 0
    p = merged.get("PRMSE", table="true_score_eval", score="m").parameters
    assert (
        p["ci_low"] < merged.get("PRMSE", table="true_score_eval", score="m").value < p["ci_high"]
    )


def test_an_smd_of_another_method_gets_no_unpooled_interval() -> None:
    df = _frame(seed=12)
    ms = evaluate_scoring(df, human="h", system="m", smd_method="pooled", ci=0.9, num_bootstrap=30)
    smd = ms.get("SMD", table="eval", score="m").parameters
    assert smd["smd_method"] == "pooled" and "ci_low" not in smd
    assert "ci_low" in ms.get("QWK", table="eval", score="m").parameters


def test_consistency_and_degradation_intervals_equal_a_loop_over_materialised_resamples() -> None:
    """Human-human metrics on the double-scored responses of each resample (the pooled SMD
    of h2 against h) and their degradation (human-system minus human-human, same draw)."""
    df = _rated(seed=7)
    ms = evaluate_scoring(
        df, human="h", system="m", human2="h2", ci=LEVEL, num_bootstrap=B, seed=SEED
    )
    h2 = df.h2.to_numpy()
    has = ~np.isnan(h2)
    units, mult, _ = collapse(np.column_stack([df.h, df.m, has, np.where(has, h2, 0.0)]))
    hh: dict[str, list[float]] = {}
    deg: dict[str, list[float]] = {}
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        idx = np.repeat(np.arange(len(units)), w.astype(np.int64))
        h, m, two, s = (units[idx, k] for k in range(4))
        x, y = h[two > 0], s[two > 0]
        human = _peer(x, y)
        human["SMD"] = (y.mean() - x.mean()) / np.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2)
        system = _peer(h, m)
        for k in ("PearsonR", "QWK", "CohenKappa", "ExactAgreement", "AdjacentAgreement", "SMD"):
            hh.setdefault(k, []).append(human[k])
            deg.setdefault(k, []).append(system[k] - human[k])
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    for kind, values in hh.items():
        p = ms.get(kind, table="consistency").parameters
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(np.quantile(values, q), rel=1e-9)
        p = ms.get(kind + "Degradation", table="degradation", score="m").parameters
        want = np.quantile(deg[kind], q)
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-9, abs=1e-12), kind
