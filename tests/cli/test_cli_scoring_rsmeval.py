"""``assay scoring --config FILE.json`` (an rsmeval experiment) and ``--trim-min/--trim-max``:
files named as RSMTool names them, the same tables as the API, clear exit 2 on bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.scoring import run_rsmeval

runner = CliRunner()


def _write(tmp_path, n=150, seed=5):
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1.2, n)
    df = pd.DataFrame(
        {
            "ID": [f"r{i}" for i in range(n)],
            "sc1": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "sc2": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "score": t * 1.3 - 0.9,
            "L1": rng.choice(["en", "fr"], n),
        }
    )
    df.to_csv(tmp_path / "pred.csv", index=False)
    cfg = {
        "experiment_id": "exp1",
        "predictions_file": "pred.csv",
        "system_score_column": "score",
        "second_human_score_column": "sc2",
        "id_column": "ID",
        "subgroups": ["L1"],
        "trim_min": 1,
        "trim_max": 5,
    }
    (tmp_path / "exp.json").write_text(json.dumps(cfg))
    return tmp_path / "exp.json"


def test_config_writes_rsmtool_named_tables(tmp_path):
    config = _write(tmp_path)
    out = tmp_path / "out"
    r = runner.invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    names = {p.name for p in out.iterdir()}
    for t in (
        "eval",
        "eval_short",
        "eval_by_L1",
        "confMatrix",
        "confMatrix_h1h2",
        "score_dist",
        "data_composition",
        "data_composition_by_L1",
        "test_excluded_composition",
        "estimates_osa_by_L1",
        "estimates_osd_by_L1",
        "estimates_csd_by_L1",
        "pred_processed",
        "true_score_eval",
        "consistency",
    ):
        assert f"exp1_{t}.csv" in names, t
    assert "exp1_test_excluded_responses.csv" not in names  # nothing excluded: no file
    api = run_rsmeval(config)
    mine = pd.read_csv(out / "exp1_eval.csv", index_col=0)
    assert list(mine.index) == ["raw", "raw_trim", "raw_trim_round"]
    np.testing.assert_allclose(mine.to_numpy(), api["eval"].to_numpy(), rtol=1e-15)
    by = pd.read_csv(out / "exp1_eval_by_L1.csv", index_col=0)
    assert list(by.index) == ["All data", "en", "fr"]


def test_trim_options_without_a_config(tmp_path):
    _write(tmp_path)
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        [
            "scoring",
            "--data",
            str(tmp_path / "pred.csv"),
            "--human",
            "sc1",
            "--system",
            "score",
            "--trim-min",
            "1",
            "--trim-max",
            "5",
            "--scale-with",
            "asis",
            "--subgroup",
            "L1",
            "--out-dir",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    ev = pd.read_csv(out / "eval.csv", index_col=0)
    assert list(ev.index) == ["scale", "scale_trim", "scale_trim_round"]
    assert ev.loc["scale_trim_round", "sys_min"] >= 1 and ev.loc["scale_trim_round", "sys_max"] <= 5
    assert ev.loc["scale", "sys_max"] > 5.5


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--trim-min", "1"], "--trim-max"),
        (["--human", "sc1"], "drop the other scoring options"),
        (["--keep-zero-scores"], "drop the other scoring options"),
    ],
)
def test_option_mistakes_exit_2(tmp_path, args, expect):
    config = _write(tmp_path)
    base = ["scoring", "--out-dir", str(tmp_path / "o")]
    if "--human" in args or "--keep-zero-scores" in args:
        base += ["--config", str(config)]
    else:
        base += ["--data", str(tmp_path / "pred.csv"), "--human", "sc1", "--system", "score"]
    r = runner.invoke(app, [*base, *args])
    assert r.exit_code == 2
    assert expect in r.output
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        ("{not json", "cannot read the configuration"),
        ('{"experiment_id": "x"}', "missing required key 'predictions_file'"),
        (
            '{"experiment_id": "x", "predictions_file": "nope.csv", "system_score_column": "s",'
            ' "trim_min": 1, "trim_max": 5}',
            "nope.csv",
        ),
    ],
)
def test_bad_config_exits_2_with_one_line(tmp_path, content, expect):
    (tmp_path / "c.json").write_text(content)
    r = runner.invoke(
        app, ["scoring", "--config", str(tmp_path / "c.json"), "--out-dir", str(tmp_path / "o")]
    )
    assert r.exit_code == 2, r.output
    assert expect in r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


def test_missing_data_without_config_exits_2(tmp_path):
    r = runner.invoke(app, ["scoring", "--out-dir", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "--config" in r.output


def test_plain_mode_takes_a_tsv(tmp_path):
    _write(tmp_path)
    df = pd.read_csv(tmp_path / "pred.csv")
    df.to_csv(tmp_path / "pred.tsv", sep="\t", index=False)
    outs = []
    for name in ("pred.csv", "pred.tsv"):
        out = tmp_path / name.replace(".", "_")
        r = runner.invoke(
            app,
            [
                "scoring",
                "--data",
                str(tmp_path / name),
                "--human",
                "sc1",
                "--system",
                "score",
                "--out-dir",
                str(out),
            ],
        )
        assert r.exit_code == 0, r.output
        outs.append((out / "eval.csv").read_text())
    assert outs[0] == outs[1]
