"""`assay fairness --group sex,race --sample-weight w` on CSV, Parquet and JSONL: the records
equal the evaluator's on the same table, and fairlearn's weighted crossed selection rates."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame, demographic_parity_difference, selection_rate
from typer.testing import CliRunner

from assay.cli.main import app
from assay.fairness import FairnessEvaluator

runner = CliRunner()


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame(
        {
            "y": (rng.random(n) < 0.5).astype(int),
            "yhat": (rng.random(n) < 0.4).astype(int),
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(["a", "b", "c"], n),
            "w": rng.uniform(0.2, 2.0, n).round(3),
        }
    )
    df["a,b"] = rng.choice(["u", "v"], n)  # a column whose name holds a comma
    return df


def _write(df: pd.DataFrame, path) -> None:
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        df.to_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in df.to_dict("records")))


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_crossed_weighted_end_to_end(tmp_path, suffix):
    df = _frame()
    path = tmp_path / f"d{suffix}"
    _write(df, path)
    args = ["fairness", "--data", str(path), "--label", "y", "--prediction", "yhat",
            "--group", "sex,race", "--group", "a,b", "--sample-weight", "w"]  # fmt: skip
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "o.json")])
    assert r.exit_code == 0, r.stdout + r.stderr
    got = json.loads((tmp_path / "o.json").read_text())
    ev = FairnessEvaluator(group_columns=[("sex", "race"), "a,b"])
    expected = ev.add(df, label="y", prediction="yhat", sample_weight="w").compute().to_list()
    assert got == expected
    by = MetricFrame(
        metrics=selection_rate, y_true=df["y"], y_pred=df["yhat"],
        sensitive_features=df[["sex", "race"]], sample_params={"sample_weight": df["w"]},
    ).by_group  # fmt: skip
    rates = {
        tuple(m["parameters"]["group"]): m["value"]
        for m in got
        if m["type"] == "SelectionRate" and m["parameters"]["group_column"] == ["sex", "race"]
    }
    assert len(rates) == 6
    for group, value in by.items():
        assert abs(rates[group] - value) < 1e-12
    dpd = [m for m in got if m["type"] == "DemographicParityDifference"]
    fl = demographic_parity_difference(
        df["y"], df["yhat"], sensitive_features=df[["sex", "race"]], sample_weight=df["w"]
    )
    assert abs(dpd[0]["value"] - fl) < 1e-12
    assert {m["parameters"]["group"] for m in got if m["type"] == "GroupCounts"
            and m["parameters"]["group_column"] == "a,b"} == {"u", "v"}  # fmt: skip


def test_table_format_is_readable(tmp_path):
    df = _frame()
    df.to_csv(tmp_path / "d.csv", index=False)
    r = runner.invoke(app, ["fairness", "--data", str(tmp_path / "d.csv"), "--label", "y",
                            "--prediction", "yhat", "--group", "sex,race",
                            "--sample-weight", "w", "--format", "table"])  # fmt: skip
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "by group: sex × race (weighted)" in r.stdout and "equalized odds" in r.stdout
    combos = df[["sex", "race"]].drop_duplicates().itertuples(index=False, name=None)
    rows = [line for line in r.stdout.splitlines() if line.startswith("│ ")]
    for sex, race in combos:  # one grid row per combination present
        assert sum(line.startswith(f"│ {sex}, {race} ") for line in rows) == 1, r.stdout


def test_control_column_end_to_end(tmp_path):
    df = _frame()
    df["site"] = np.where(df.index % 3 == 0, "x", "y")
    df.to_parquet(tmp_path / "d.parquet")
    r = runner.invoke(app, ["fairness", "--data", str(tmp_path / "d.parquet"), "--label", "y",
                            "--prediction", "yhat", "--group", "sex,race", "--control", "site",
                            "--sample-weight", "w", "--out", str(tmp_path / "o.json")])  # fmt: skip
    assert r.exit_code == 0, r.stdout + r.stderr
    got = json.loads((tmp_path / "o.json").read_text())
    ev = FairnessEvaluator(group_columns=[("sex", "race")], control_columns=["site"])
    expected = ev.add(df, label="y", prediction="yhat", sample_weight="w").compute().to_list()
    assert got == expected
    dpd = [m for m in got if m["type"] == "DemographicParityDifference"]
    assert [m["parameters"]["control"] for m in dpd] == ["x", "y"]
    assert all(m["parameters"]["control_column"] == "site" for m in dpd)
