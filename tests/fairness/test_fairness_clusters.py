"""Fairness with ``cluster``: every interval and slice gap interval equals a naive loop that
materialises each resample's drawn clusters (every row of a drawn cluster copied as often as
it was drawn) and runs the point estimate on the rows; seeds, merge, state and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.fairness import FairnessEvaluator, evaluate_fairness
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 40, 5
WHERE = ("group_column", "group", "privileged", "control_column", "control", "method", "agg")
CONFIG = {
    "groups": ["sex=F", "age:40:invert"],
    "group_columns": ["sex", ("sex", "race")],
    "by": ["site"],
}


def _df(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(16), n // 16)  # 16 patients, 15 rows each
    sex = np.tile(["F", "M", "F"], n // 3)  # both sexes in every patient
    y = rng.integers(0, 2, n)
    yhat = np.where(rng.random(n) < 0.7 + 0.02 * (pid % 5), y, 1 - y)
    return pd.DataFrame({
        "y": y, "yhat": yhat, "sex": sex, "pid": [f"p{i:02d}" for i in pid],
        "age": rng.integers(20, 60, n), "race": rng.choice(["a", "b"], n),
        "site": rng.choice(["x", "y", "z"], n),
    })  # fmt: skip


def _key(m) -> tuple:
    return (m.type, *(json.dumps(m.parameters.get(k)) for k in WHERE), m.parameters.get("slice"))


def _values(ms) -> dict[tuple, float]:
    """Every number record by key (``None``: NaN), and per slice record its gap to the
    whole set's record under key ``("gap", ...)``."""
    out = {_key(m): np.nan if m.value is None else float(m.value) for m in ms
           if not isinstance(m.value, dict)}  # fmt: skip
    for m in ms:
        if "slice" in m.parameters:
            whole = out.get((*_key(m)[:-1], None), np.nan)
            out[("gap", *_key(m))] = out[_key(m)] - whole
    return out


def _q(values: list[float]) -> list[float]:
    v = np.asarray(values, dtype=float)
    return np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


@pytest.mark.parametrize("method", ["bootstrap", "wilson"])
def test_intervals_equal_a_loop_over_materialised_clusters(method: str) -> None:
    df = _df()
    kw = {"ci": LEVEL, "num_bootstrap": B, "seed": SEED, "cluster": "pid", "ci_method": method}
    ev = FairnessEvaluator(**CONFIG, **kw).add(df, label="y", prediction="yhat")
    ms = ev.compute()
    names = sorted(df["pid"].unique())
    rows = {g: df.index[df["pid"] == g].to_numpy() for g in names}
    loops: dict[tuple, list[float]] = {}
    for k in np.concatenate(list(resample_counts(np.ones(len(names), np.int64), B, SEED))):
        idx = np.concatenate([rows[g] for g, c in zip(names, k) for _ in range(int(c))])
        one = FairnessEvaluator(**CONFIG).add(df.iloc[idx], label="y", prediction="yhat")
        got = _values(one.compute())
        for key in _values(ms):
            loops.setdefault(key, []).append(got.get(key, np.nan))
    checked = gaps = 0
    for m in ms:
        p = m.parameters
        if "ci_low" in p and p["ci_low"] is not None:
            assert p["cluster"] == "pid" and p["ci_method"] == "bootstrap"
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(_q(loops[_key(m)]), abs=1e-12)
            checked += 1
        if "gap_ci_low" in p:
            want = _q(loops[("gap", *_key(m))])
            assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12)
            gaps += 1
    assert checked > 60 and gaps > 20, (checked, gaps)


def test_clusters_are_not_rows() -> None:
    """Clustered intervals differ from the row bootstrap, and a seed repeats them."""
    df = _df(seed=1)
    kw = {"ci": LEVEL, "num_bootstrap": B, "seed": SEED}
    rows = evaluate_fairness(df, label="y", prediction="yhat", **CONFIG, **kw)
    runs = [
        evaluate_fairness(df, label="y", prediction="yhat", **CONFIG, **kw, cluster="pid")
        for _ in range(2)
    ]
    assert runs[0].to_json() == runs[1].to_json()
    a = rows.filter("StatisticalParityDifference", privileged="sex = F")[0].parameters
    b = runs[0].filter("StatisticalParityDifference", privileged="sex = F")[0].parameters
    assert (a["ci_low"], a["ci_high"]) != (b["ci_low"], b["ci_high"])
    other = evaluate_fairness(df, label="y", prediction="yhat", **CONFIG, **kw | {"seed": 6},
                              cluster="pid")  # fmt: skip
    assert other.to_json() != runs[0].to_json()


def test_merge_state_and_batches() -> None:
    df = _df(seed=2)
    kw = {**CONFIG, "ci": LEVEL, "num_bootstrap": 20, "cluster": "pid"}
    one = FairnessEvaluator(**kw).add(df, label="y", prediction="yhat").compute()
    a = FairnessEvaluator(**kw).add(df.iloc[100:], label="y", prediction="yhat")
    b = FairnessEvaluator(**kw).add(df.iloc[:100], label="y", prediction="yhat")
    merged = FairnessEvaluator.from_state(a.merge(b).state()).compute()
    assert merged.to_json() == one.to_json()


def test_bad_cluster() -> None:
    df = _df()
    with pytest.raises(InvalidInputError, match="cluster"):
        FairnessEvaluator(["sex=F"], cluster="pid")  # needs ci
    with pytest.raises(InvalidInputError, match="zone"):
        evaluate_fairness(df, label="y", prediction="yhat", groups=["sex=F"], ci=0.9,
                          cluster="zone")  # fmt: skip
    gap = df.astype({"pid": object})
    gap.loc[7, "pid"] = None
    with pytest.raises(InvalidInputError, match="row 8.*pid.*missing value"):
        evaluate_fairness(gap, label="y", prediction="yhat", groups=["sex=F"], ci=0.9,
                          cluster="pid")  # fmt: skip


def test_cli_cluster(tmp_path) -> None:
    df = _df(seed=3)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    base = ["fairness", "--data", str(path), "--label", "y", "--prediction", "yhat"]
    base += ["--sensitive", "sex=F"]
    r = CliRunner().invoke(app, [*base, "--ci", "0.9", "--num-bootstrap", "30", "--cluster", "pid"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    want = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex=F"], ci=0.9,
                             num_bootstrap=30, cluster="pid")  # fmt: skip
    spd = next(m for m in got if m["type"] == "StatisticalParityDifference")
    assert spd["parameters"]["cluster"] == "pid"
    w = want.filter("StatisticalParityDifference")[0].parameters
    assert spd["parameters"]["ci_low"] == pytest.approx(w["ci_low"], abs=1e-12)
    for bad in (["--cluster", "pid"], ["--ci", "0.9", "--cluster", "zone"]):
        r = CliRunner().invoke(app, [*base, *bad])
        assert r.exit_code == 2 and "--cluster" in r.output and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1, r.output


def test_cluster_survives_save_show_export(tmp_path) -> None:
    df = _df(seed=4)
    path, db = tmp_path / "d.csv", str(tmp_path / "runs.db")
    df.to_csv(path, index=False)
    args = ["fairness", "--data", str(path), "--label", "y", "--prediction", "yhat"]
    args += ["--group", "sex", "--by", "site", "--ci", "0.9", "--num-bootstrap", "20"]
    r = CliRunner().invoke(app, [*args, "--cluster", "pid", "--save", "--db", db])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    assert sum(m["parameters"].get("cluster") == "pid" for m in printed) > 10
    assert any("gap_ci_low" in m["parameters"] for m in printed)
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    assert json.loads(shown.stdout)["parameters"]["cluster"] == "pid"
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed
