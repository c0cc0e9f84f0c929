"""Scoring with ``cluster`` (a candidate's responses resampled together): every interval of
``eval``, ``eval_by``, ``true_score_eval``, ``consistency``, ``degradation``,
``consistency_by``, ``fairness_metrics_by`` and the slices
(and their gaps) equals a naive loop that materialises each resample's drawn clusters (every
response of a drawn candidate copied as often as drawn) and runs the point estimate on the
rows; BCa's jackknife leaves one candidate out (the point estimate on the data without it)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.scoring import ScoringEvaluator, evaluate_scoring
from assay.uncertainty.intervals import bca
from assay.uncertainty.resampling import resample_counts
from contract import assert_same_metrics

LEVEL, B, SEED = 0.9, 30, 4
KEYS = ("table", "score", "group", "slice", "smd_method")
OPTIONS = {"human": "h", "system": "m", "human2": "h2", "group_columns": ["g"], "by": ["site"]}


def _frame(n: int = 150, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cand = np.repeat(np.arange(n // 6), 6)  # 25 candidates, 6 responses each
    ability = rng.normal(0, 1, n // 6)[cand]
    h = np.clip(np.rint(3 + ability + rng.normal(0, 0.7, n)), 1, 5)
    h2 = np.where(rng.random(n) < 0.5, np.clip(h + rng.integers(-1, 2, n), 1, 5), np.nan)
    m = np.round(np.clip(3 + ability + rng.normal(0, 0.8, n), 1, 5), 1)
    return pd.DataFrame({
        "h": h, "h2": h2, "m": m, "cand": [f"c{i:02d}" for i in cand],
        "g": rng.choice(["a", "b"], n), "site": rng.choice(["x", "y"], n),
    })  # fmt: skip


def _key(m) -> tuple:
    return (m.type, *(json.dumps(m.parameters.get(k)) for k in KEYS))


def _values(ms) -> dict[tuple, float]:
    """Every number record by key, and each slice record's gap to its whole-set record."""
    out = {_key(m): np.nan if m.value is None else float(m.value) for m in ms
           if isinstance(m.value, (int, float))}  # fmt: skip
    for m in ms:
        if "slice" in m.parameters and m.type != "DSM":
            whole = (*_key(m)[:4], json.dumps(None), *_key(m)[5:])
            out[("gap", *_key(m))] = out[_key(m)] - out.get(whole, np.nan)
    return out


def _runs(frames: list[pd.DataFrame]) -> dict[tuple, np.ndarray]:
    found: dict[tuple, list[float]] = {}
    for i, f in enumerate(frames):
        for k, v in _values(evaluate_scoring(f, **OPTIONS)).items():
            found.setdefault(k, [np.nan] * i).append(v)
        for k in found:
            found[k] += [np.nan] * (i + 1 - len(found[k]))
    return {k: np.asarray(v, dtype=float) for k, v in found.items()}


@pytest.mark.parametrize("method", ["bootstrap", "bca"])
def test_intervals_equal_a_loop_over_materialised_clusters(method: str) -> None:
    df = _frame()
    kw = {"ci": LEVEL, "num_bootstrap": B, "seed": SEED, "ci_method": method}
    ms = evaluate_scoring(df, **OPTIONS, **kw, cluster="cand")
    names = sorted(df["cand"].unique())
    rows = {g: df.index[df["cand"] == g].to_numpy() for g in names}
    counts = np.concatenate(list(resample_counts(np.ones(len(names), np.int64), B, SEED)))
    drawn = [
        df.loc[np.concatenate([rows[g] for g, c in zip(names, k) for _ in range(int(c))])]
        for k in counts
    ]
    reps = _runs(drawn)
    if method == "bca":
        jack = _runs([df[df["cand"] != g] for g in names])
        est = _values(evaluate_scoring(df, **OPTIONS))
    checked = gaps = 0
    for m in ms:
        p = m.parameters
        if p.get("ci_low") is not None:
            assert p["cluster"] == "cand" and p["ci_method"] == method
            r = reps[_key(m)]
            if method == "bca":
                want = bca(r[:, None], [est[_key(m)]], jack[_key(m)][:, None],
                           np.ones(len(names)), LEVEL)[:, 0]  # fmt: skip
            else:
                want = np.quantile(r[~np.isnan(r)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-9, abs=1e-12), _key(m)
            checked += 1
        if p.get("gap_ci_low") is not None and method == "bootstrap":
            g = reps[("gap", *_key(m))]
            want = np.quantile(g[~np.isnan(g)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
            assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12)
            gaps += 1
    tables = {m.parameters["table"] for m in ms if m.parameters.get("ci_low") is not None}
    assert {"eval", "eval_by_g", "true_score_eval", "consistency", "degradation"} <= tables
    assert {"fairness_metrics_by_g", "consistency_by_g"} <= tables
    assert checked > 60 and (method == "bca" or gaps > 10), (checked, gaps)


def test_seeded_merged_and_not_the_response_bootstrap() -> None:
    df = _frame(seed=1)
    kw = {**OPTIONS, "ci": LEVEL, "num_bootstrap": B, "seed": SEED, "cluster": "cand"}
    one = ScoringEvaluator(**kw).add(df).compute()
    assert one.to_json() == evaluate_scoring(df, **kw).to_json()
    a, b = ScoringEvaluator(**kw).add(df.iloc[:70]), ScoringEvaluator(**kw).add(df.iloc[70:])
    merged = ScoringEvaluator.from_state(a.merge(b).state()).compute()
    assert assert_same_metrics(merged, one, rel=1e-9) > 0  # sums in another order
    got = merged.filter("QWK", table="eval", score="m")[0].parameters
    assert got["cluster"] == "cand"
    assert got["ci_low"] == pytest.approx(
        one.filter("QWK", table="eval", score="m")[0].parameters["ci_low"]
    )
    plain = evaluate_scoring(df, **{k: v for k, v in kw.items() if k != "cluster"})
    qwk = [x.filter("QWK", table="eval", score="m")[0].parameters for x in (one, plain)]
    assert (qwk[0]["ci_low"], qwk[0]["ci_high"]) != (qwk[1]["ci_low"], qwk[1]["ci_high"])


def test_bad_cluster() -> None:
    df = _frame()
    with pytest.raises(InvalidInputError, match="cluster"):
        ScoringEvaluator(human="h", system="m", cluster="cand")  # needs ci
    with pytest.raises(InvalidInputError, match="zone"):
        evaluate_scoring(df, human="h", system="m", ci=0.9, cluster="zone")
    gap = df.astype({"cand": object})
    gap.loc[3, "cand"] = None
    with pytest.raises(InvalidInputError, match="cand.*no value"):
        evaluate_scoring(gap, human="h", system="m", ci=0.9, cluster="cand")


def test_cli_cluster(tmp_path) -> None:
    df = _frame(seed=2)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    base = ["scoring", "--data", str(path), "--human", "h", "--system", "m"]
    ci = ["--ci", "0.9", "--num-bootstrap", "20"]
    r = CliRunner().invoke(app, [*base, "--out-dir", str(tmp_path / "o"), *ci, "--cluster", "cand"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    want = evaluate_scoring(df, human="h", system="m", ci=0.9, num_bootstrap=20, cluster="cand")
    qwk = next(m for m in got if m["type"] == "QWK" and m["parameters"].get("score") == "m")
    w = want.filter("QWK", table="eval", score="m")[0].parameters
    assert qwk["parameters"]["cluster"] == "cand"
    assert qwk["parameters"]["ci_low"] == pytest.approx(w["ci_low"], abs=1e-12)
    for i, bad in enumerate((["--cluster", "cand"], ["--ci", "0.9", "--cluster", "zone"])):
        r = CliRunner().invoke(app, [*base, "--out-dir", str(tmp_path / f"b{i}"), *bad])
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1, r.output
