"""Intervals (``ci``, ``cluster``) and slices (``by``) in rsmeval mode: every score type's
records carry exactly the interval ``evaluate_scoring`` computes on the same preprocessed
pairs, the tables rsmeval writes do not change, and the cluster and slice columns are the
input file's columns, by the names they have there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.results import MetricSet
from assay.scoring import evaluate_scoring, run_rsmeval

INTERVAL_KEYS = ("ci_low", "ci_high", "gap_ci_low", "gap_ci_high")
CI = {"ci": 0.9, "num_bootstrap": 50, "seed": 3}


def _data(n: int = 160, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1.2, n)
    h2 = np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5)
    return pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(n)],
            "h": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "h2": np.where(rng.random(n) < 0.5, h2, np.nan),  # double-scored half
            "m": t * 1.3 - 0.9,  # reaches beyond the scale: raw and raw_trim differ
            "g": rng.choice(["a", "b", "c"], n),
            "cand": [f"c{i // 4}" for i in range(n)],
            "site": rng.choice(["x", "y"], n),
        }
    )  # fmt: skip


def _config(tmp_path: Path, df: pd.DataFrame, **extra: Any) -> Path:
    df.to_csv(tmp_path / "p.csv", index=False)
    cfg = {
        "experiment_id": "x",
        "predictions_file": "p.csv",
        "system_score_column": "m",
        "human_score_column": "h",
        "second_human_score_column": "h2",
        "id_column": "id",
        "subgroups": ["g"],
        "candidate_column": "cand",
        "trim_min": 1,
        "trim_max": 5,
        **extra,
    }
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    return tmp_path / "c.json"


def _pairs(df: pd.DataFrame) -> pd.DataFrame:
    """The preprocessed pairs, written out here: rsmeval's names, trimming and rounding."""
    trimmed = np.clip(df["m"].to_numpy(), 1 - 0.4998, 5 + 0.4998)
    return pd.DataFrame(
        {"sc1": df["h"], "sc2": df["h2"], "raw": df["m"], "raw_trim": trimmed,
         "g": df["g"], "cand": df["cand"], "site": df["site"]}
    )  # fmt: skip


def _key(m: Any) -> tuple[str, str]:
    rest = {k: v for k, v in m.parameters.items() if k not in INTERVAL_KEYS}
    return m.type, json.dumps(rest, sort_keys=True, default=str)


def _assert_same_intervals(got: MetricSet, want: MetricSet, scores: set[str]) -> int:
    index = {_key(m): m for m in want}
    checked = 0
    for m in got:
        if m.parameters.get("score") not in scores or "ci_low" not in m.parameters:
            continue
        w = index[_key(m)]
        for k in INTERVAL_KEYS:
            if k in w.parameters:
                assert m.parameters[k] == pytest.approx(w.parameters[k], abs=1e-12), (m, k)
        assert m.value == pytest.approx(w.value, abs=1e-12)
        checked += 1
    return checked


@pytest.mark.parametrize("cluster", [None, "cand"])
def test_every_score_type_has_the_interval_of_evaluate_scoring(tmp_path, cluster) -> None:
    df = _data()
    got = run_rsmeval(_config(tmp_path, df), cluster=cluster, **CI).metrics
    pairs = _pairs(df)
    opts = {"human": "sc1", "human2": "sc2", "group_columns": ["g"], "cluster": cluster, **CI}
    n_raw = _assert_same_intervals(got, evaluate_scoring(pairs, system="raw", **opts), {"raw"})
    main = evaluate_scoring(pairs, system="raw_trim", **opts)
    n_trim = _assert_same_intervals(got, main, {"raw_trim", "raw_trim_round"})
    assert n_raw >= 15 and n_trim >= 2 * n_raw  # eval, degradation, true_score_eval, ...
    tables = {m.parameters["table"] for m in got if "ci_low" in m.parameters}
    assert {"eval", "degradation", "true_score_eval", "consistency"} <= tables
    assert {"fairness_metrics_by_g", "eval_by_g"} <= tables
    assert all(m.parameters.get("cluster") == cluster for m in got if "ci_low" in m.parameters)


def test_scale_types_get_intervals_too(tmp_path) -> None:
    df = _data()
    got = run_rsmeval(_config(tmp_path, df, scale_with="asis"), **CI).metrics
    pairs = _pairs(df).rename(columns={"raw": "scale", "raw_trim": "scale_trim"})
    opts = {"human": "sc1", "human2": "sc2", "group_columns": ["g"], **CI}
    assert _assert_same_intervals(got, evaluate_scoring(pairs, system="scale", **opts), {"scale"})
    want = evaluate_scoring(pairs, system="scale_trim", **opts)
    assert _assert_same_intervals(got, want, {"scale_trim", "scale_trim_round"}) > 30


def test_tables_unchanged_and_seeded(tmp_path) -> None:
    cfg = _config(tmp_path, _data())
    plain = run_rsmeval(cfg)
    a = run_rsmeval(cfg, cluster="cand", by=["site"], **CI)
    assert a.files("x") == plain.files("x")  # rsmeval's files: no interval columns
    assert [(m.type, m.value) for m in plain.metrics] == [
        (m.type, m.value) for m in a.metrics if "slice" not in m.parameters
    ]
    b = run_rsmeval(cfg, cluster="cand", by=["site"], **CI)
    assert a.metrics.to_json() == b.metrics.to_json()
    c = run_rsmeval(cfg, cluster="cand", by=["site"], **{**CI, "seed": 4})
    assert a.metrics.to_json() != c.metrics.to_json()


def test_by_slices_the_main_score(tmp_path) -> None:
    df = _data()
    got = run_rsmeval(_config(tmp_path, df), by=["site", "g"], **CI).metrics
    sliced = [m for m in got if "slice" in m.parameters]
    assert {m.parameters["score"] for m in sliced} == {"raw_trim", "raw_trim_round"}
    assert {m.parameters["slice_column"] for m in sliced} == {"site", "g"}
    opts = {"human": "sc1", "human2": "sc2", "group_columns": ["g"], "by": ["site", "g"], **CI}
    want = MetricSet([m for m in evaluate_scoring(_pairs(df), system="raw_trim", **opts)])
    index = {_key(m): m for m in want}
    for m in sliced:
        w = index[_key(m)]
        assert m.value == w.value or (m.value is None and w.value is None)
        for k in INTERVAL_KEYS:
            if k in w.parameters:
                assert m.parameters[k] == pytest.approx(w.parameters[k], abs=1e-12)


def test_cluster_columns_by_their_input_names(tmp_path) -> None:
    df = _data(n=60)
    cfg = _config(tmp_path, df)
    for column in ("cand", "g", "site", "id"):  # candidate, subgroup, other, id column
        got = run_rsmeval(cfg, cluster=column, **CI).metrics
        assert got.get("QWK", table="eval", score="raw_trim").parameters["cluster"] == column
    # the id column as cluster: every response its own cluster, as without one
    by_id = run_rsmeval(cfg, cluster="id", **CI).metrics.get("QWK", table="eval", score="raw")
    plain = run_rsmeval(cfg, **CI).metrics.get("QWK", table="eval", score="raw")
    assert by_id.value == plain.value
    with pytest.raises(InvalidInputError, match="zone"):
        run_rsmeval(cfg, cluster="zone", **CI)
    with pytest.raises(InvalidInputError, match="cluster"):
        run_rsmeval(cfg, cluster="cand")  # needs ci
    clash = _config(tmp_path, df.assign(raw_trim=df["site"]))  # a name rsmeval gives a score
    with pytest.raises(InvalidInputError, match="raw_trim"):
        run_rsmeval(clash, cluster="raw_trim", **CI)
    gap = df.astype({"site": object})
    gap.loc[3, "site"] = None
    with pytest.raises(InvalidInputError, match="site.*no value"):
        run_rsmeval(_config(tmp_path, gap), cluster="site", **CI)


def test_cli_save_show_export_keep_the_intervals(tmp_path) -> None:
    df = _data()
    cfg = _config(tmp_path, df)
    db = str(tmp_path / "runs.db")
    args = ["scoring", "--config", str(cfg), "--out-dir", str(tmp_path / "o"), "--save"]
    args += ["--db", db, "--ci", "0.9", "--num-bootstrap", "50", "--seed", "3"]
    r = CliRunner().invoke(app, [*args, "--cluster", "cand", "--by", "site"])
    assert r.exit_code == 0, r.output
    want = run_rsmeval(cfg, cluster="cand", by=["site"], **CI).metrics
    shown = json.loads(CliRunner().invoke(app, ["runs", "show", "1", "--db", db]).stdout)
    assert shown["metrics"] == json.loads(want.to_json())
    assert sum("ci_low" in m["parameters"] for m in shown["metrics"]) > 100
    assert sum("gap_ci_low" in m["parameters"] for m in shown["metrics"]) > 10
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == shown["metrics"]
    plain = tmp_path / "plain"
    r = CliRunner().invoke(app, ["scoring", "--config", str(cfg), "--out-dir", str(plain)])
    assert r.exit_code == 0, r.output
    files = sorted(p.name for p in plain.iterdir())
    assert files == sorted(p.name for p in (tmp_path / "o").iterdir())
    for name in files:
        assert (plain / name).read_bytes() == (tmp_path / "o" / name).read_bytes(), name


@pytest.mark.parametrize(
    ("extra", "expect"),
    [
        (["--cluster", "cand"], "--cluster"),
        (["--ci", "0.9", "--cluster", "zone"], "'zone'"),
        (["--ci", "1.5"], "--ci"),
        (["--ci", "0.9", "--ci-method", "nope"], "--ci-method"),
        (["--ci", "0.9", "--num-bootstrap", "1"], "--num-bootstrap"),
        (["--by", "zone"], "'zone'"),
    ],
)
def test_cli_bad_combinations_exit_2_with_one_line(tmp_path, extra, expect) -> None:
    cfg = _config(tmp_path, _data(n=40))
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["scoring", "--config", str(cfg), "--out-dir", str(out), *extra])
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1 and expect in r.output, r.output
    assert not out.exists()


def test_trim_options_mode_takes_intervals(tmp_path) -> None:
    df = _data()
    df.to_csv(tmp_path / "p.csv", index=False)
    args = ["scoring", "--data", str(tmp_path / "p.csv"), "--human", "h", "--system", "m"]
    args += ["--trim-min", "1", "--trim-max", "5", "--out-dir", str(tmp_path / "o")]
    db = str(tmp_path / "runs.db")
    args += ["--ci", "0.9", "--num-bootstrap", "50", "--seed", "3", "--cluster", "cand"]
    r = CliRunner().invoke(app, [*args, "--save", "--db", db])
    assert r.exit_code == 0, r.output
    shown = json.loads(CliRunner().invoke(app, ["runs", "show", "1", "--db", db]).stdout)
    pairs = _pairs(df)
    want = evaluate_scoring(pairs, human="sc1", system="raw_trim", cluster="cand", **CI)
    got = MetricSet.from_json(json.dumps(shown["metrics"]))
    assert _assert_same_intervals(got, want, {"raw_trim", "raw_trim_round"}) >= 16
