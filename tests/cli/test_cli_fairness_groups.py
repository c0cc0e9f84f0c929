"""`assay fairness` with categorical privileged values (--sensitive L1=en,fr) and per-group
metrics (--group L1): good input end to end on real files, and bad input (exit 2, one line
naming the option or the column: those cases are in test_bad_inputs_fairness.py)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()

DATA = "y,yhat,L1,grade\n1,1,en,1\n0,1,en,2\n1,0,fr,2\n0,0,fr,3\n1,1,de,3\n0,0,de,1\n"
BASE = ["--label", "y", "--prediction", "yhat"]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text(DATA)
    (tmp_path / "d.jsonl").write_text(
        "\n".join(
            json.dumps({"y": int(r[0]), "yhat": int(r[1]), "L1": r[2], "grade": int(r[3])})
            for r in (line.split(",") for line in DATA.splitlines()[1:])
        )
        + "\n"
    )
    return tmp_path


def _run(args):
    r = runner.invoke(app, ["fairness", *args])
    return r, r.stdout + r.stderr


def _records(text):
    out = {}
    for m in json.loads(text):
        p = m["parameters"]
        out[(m["type"], p.get("group_column"), p.get("group"), "privileged" in p)] = m
    return out


@pytest.mark.parametrize("name", ["d.csv", "d.jsonl"])
def test_sensitive_by_value_and_group(workdir, name):
    r, text = _run(
        ["--data", name, *BASE, "--sensitive", "L1=en,fr", "--group", "L1", "--group", "grade"]
    )
    assert r.exit_code == 0, text
    rec = _records(r.stdout)
    # privileged en+fr: yhat 1 1 0 0 -> 1/2; unprivileged de: yhat 1 0 -> 1/2
    spd = rec[("StatisticalParityDifference", "L1", None, True)]
    assert spd["value"] == 0.0 and spd["parameters"]["privileged"] == "L1 in {en, fr}"
    assert rec[("SelectionRate", "L1", "en", False)]["value"] == 1.0
    assert rec[("SelectionRate", "L1", "fr", False)]["value"] == 0.0
    assert rec[("TruePositiveRate", "L1", "fr", False)]["value"] == 0.0
    assert rec[("Accuracy", "grade", "3", False)]["value"] == 1.0
    assert rec[("DemographicParityDifference", "L1", None, False)]["value"] == 1.0
    assert rec[("DemographicParityRatio", "L1", None, False)]["value"] == 0.0
    eor = rec[("EqualizedOddsRatio", "L1", None, False)]
    assert eor["value"] == 0.0 and eor["parameters"]["method"] == "between_groups"


def test_method_zero_division_and_table(workdir):
    (workdir / "d.csv").write_text(DATA + "1,0,es,1\n")  # es: no negative labels
    r, text = _run(["--data", "d.csv", *BASE, "--group", "L1"])
    rec = _records(r.stdout)
    assert rec[("FalsePositiveRate", "L1", "es", False)]["value"] is None
    assert rec[("EqualizedOddsDifference", "L1", None, False)]["value"] is None
    r, text = _run(
        ["--data", "d.csv", *BASE, "--group", "L1", "--zero-division", "0"]
        + ["--method", "to_overall", "--equalized-odds-agg", "mean"]
    )
    assert r.exit_code == 0, text
    rec = _records(r.stdout)
    assert rec[("FalsePositiveRate", "L1", "es", False)]["value"] == 0.0
    eod = rec[("EqualizedOddsDifference", "L1", None, False)]
    assert eod["parameters"]["method"] == "to_overall" and eod["value"] is not None
    assert eod["parameters"]["agg"] == "mean"
    r, text = _run(["--data", "d.csv", *BASE, "--group", "L1", "--format", "table"])
    assert r.exit_code == 0, text  # the by-group grid, fairlearn's by_group layout
    assert "demographic parity: difference 1.0000, ratio 0.0000" in text, text
    assert any(line.startswith("│ fr ") and "0.5000" in line for line in text.splitlines()), text


def test_missing_group_value_names_the_row(workdir):
    (workdir / "m.csv").write_text("y,yhat,L1\n1,1,en\n0,0,\n")
    r, text = _run(["--data", "m.csv", *BASE, "--group", "L1"])
    assert r.exit_code == 2 and "row 2" in text and "field 'L1'" in text, text
