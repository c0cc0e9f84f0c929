"""The `assay classification` and `assay fairness` commands, end to end on real files."""

import json
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    gts = pd.DataFrame({"uid": ["1", "2", "3", "4"], "value": ["cat", "cat", "dog", "dog"]})
    pds = pd.DataFrame(
        {
            "uid": ["1", "1", "2", "2", "3", "4"],
            "value": ["cat", "dog", "cat", "dog", "dog", "cat"],
            "score": [0.9, 0.1, 0.3, 0.6, 0.8, 0.2],
        }
    )
    paths = {}
    gts.to_csv(tmp_path / "gts.csv", index=False)
    pds.to_json(tmp_path / "pds.jsonl", orient="records", lines=True)
    pds.to_parquet(tmp_path / "pds.parquet")
    paths.update(gts=tmp_path / "gts.csv", pds=tmp_path / "pds.jsonl", pq=tmp_path / "pds.parquet")
    return paths


def test_classification_json_to_stdout(files):
    r = runner.invoke(
        app,
        [
            "classification",
            "--groundtruths",
            str(files["gts"]),
            "--predictions",
            str(files["pds"]),
            "--score-thresholds",
            "0,0.5",
        ],
    )
    assert r.exit_code == 0, r.output
    records = json.loads(r.stdout)
    acc = [m for m in records if m["type"] == "Accuracy"]
    assert [(m["parameters"]["score_threshold"], m["value"]) for m in acc] == [
        (0.0, 0.5),
        (0.5, 0.5),
    ]
    assert {m["type"] for m in records} >= {
        "Counts",
        "ROCAUC",
        "PrecisionRecallCurve",
        "DetailedPrecisionRecallCurve",
    }


def test_parquet_and_out_file_and_table(files, tmp_path):
    out = tmp_path / "m.json"
    r = runner.invoke(
        app,
        [
            "classification",
            "--groundtruths",
            str(files["gts"]),
            "--predictions",
            str(files["pq"]),
            "--out",
            str(out),
            "--metrics",
            "ROCAUC",
            "--format",
            "table",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "ROCAUC" in r.stdout
    assert [m["value"] for m in json.loads(out.read_text())] == [1.0, 0.5]


def test_bad_input_exit_2_names_file_row_field_and_writes_nothing(files, tmp_path):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"uid": ["1", "2"], "value": ["cat", "dog"], "score": [0.5, 1.7]}).to_csv(
        bad, index=False
    )
    out = tmp_path / "never.json"
    r = runner.invoke(
        app,
        [
            "classification",
            "--groundtruths",
            str(files["gts"]),
            "--predictions",
            str(bad),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 2
    assert f"{bad}: row 2: field 'score'" in r.stderr
    assert not out.exists() and not list(tmp_path.glob(".never.json*"))


def test_unknown_uid_and_missing_column(files, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"uid": "1", "value": "cat", "score": 0.5}\n{"uid": "9", "value": "cat", "score": 0.5}\n'
    )
    r = runner.invoke(
        app, ["classification", "--groundtruths", str(files["gts"]), "--predictions", str(bad)]
    )
    assert r.exit_code == 2 and "row 2: field 'uid': uid '9' has no ground truth" in r.stderr
    nocol = tmp_path / "nocol.csv"
    pd.DataFrame({"uid": ["1"], "label": ["cat"]}).to_csv(nocol, index=False)
    r = runner.invoke(
        app, ["classification", "--groundtruths", str(nocol), "--predictions", str(files["pds"])]
    )
    assert r.exit_code == 2 and "field 'value': missing column" in r.stderr
    malformed = tmp_path / "m.jsonl"
    malformed.write_text('{"uid": "1", "value": "cat", "score": 0.5}\n{"uid": 2,\n')
    r = runner.invoke(
        app,
        ["classification", "--groundtruths", str(files["gts"]), "--predictions", str(malformed)],
    )
    assert r.exit_code == 2 and "row 2: malformed JSON" in r.stderr


def test_fairness_command(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame(
        {"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "sex": [1, 1, 0, 0], "age": [20, 30, 50, 60]}
    ).to_csv(data, index=False)
    r = runner.invoke(
        app,
        [
            "fairness",
            "--data",
            str(data),
            "--label",
            "y",
            "--prediction",
            "yhat",
            "--sensitive",
            "sex",
            "--sensitive",
            "age:40:invert",
        ],
    )
    assert r.exit_code == 0, r.output
    records = json.loads(r.stdout)
    rec = {(m["type"], m["parameters"].get("group_column")): m for m in records}
    assert rec[("StatisticalParityDifference", "sex")]["value"] == -1.0
    age = rec[("StatisticalParityDifference", "age")]
    assert age["value"] == -1.0 and age["parameters"]["privileged"] == "age <= 40"
    (avg,) = [
        m
        for m in records
        if m["type"] == "StatisticalParityDifference" and "average_over" in m["parameters"]
    ]
    assert avg["value"] == -1.0 and avg["parameters"]["average_over"] == ["sex:0", "age:40:invert"]
    r = runner.invoke(
        app,
        [
            "fairness",
            "--data",
            str(data),
            "--label",
            "y",
            "--prediction",
            "yhat",
            "--sensitive",
            "race",
        ],
    )
    assert r.exit_code == 2 and "field 'race': missing column" in r.stderr


def test_console_script_entry_point(files):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "classification",
            "--groundtruths",
            str(files["gts"]),
            "--predictions",
            str(files["pds"]),
            "--metrics",
            "mROCAUC",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [
        {"type": "mROCAUC", "value": 0.75, "parameters": {"label_key": "class"}}
    ]


def test_save_records_the_evaluation_in_the_store(files, tmp_path):
    from assay.results import MetricSet
    from assay.store import Store

    db = tmp_path / "runs.db"
    args = [
        "--groundtruths",
        str(files["gts"]),
        "--predictions",
        str(files["pds"]),
        "--save",
        "--db",
        str(db),
    ]
    r = runner.invoke(app, ["classification", *args])
    assert r.exit_code == 0, r.output
    assert "saved evaluation" in r.stderr
    printed = MetricSet.from_json(r.stdout)
    with Store(str(db)) as store:
        (ev,) = store.list(kind="classification")
        stored = store.get(ev.id)
    assert ev.status == "finished" and ev.dataset == str(files["gts"])
    assert MetricSet(stored.metrics).to_json() == printed.to_json()


def test_cli_modules_load_no_domain_code():
    # `assay COMMAND` imports its module (assay/cli/NAME.py): it must not pull in the
    # domain's computation.
    code = (
        "import sys, assay.cli.support; before = set(sys.modules);"
        "import assay.cli.classification, assay.cli.fairness;"
        "print(sorted(set(sys.modules) - before))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    new = set(eval(r.stdout))
    assert not new & {"numpy", "pandas", "pyarrow"}, new
    loaded = {m for m in new if m.split(".")[0] == "assay"}
    # the commands, the domains' package faces and their declarations (light by rule), and
    # the declaration machinery: nothing that computes
    allowed = {
        "assay._lazy",
        "assay._compat",
        "assay.options",
        "assay.metric_table",
        "assay.uncertainty",
        "assay.uncertainty.options",
        "assay.classification",
        "assay.classification.declared",
        "assay.fairness",
        "assay.fairness.declared",
        "assay.thresholds",
    }
    ours = {m for m in loaded if m.startswith("assay.cli.")}
    assert {"assay.cli.classification", "assay.cli.fairness"} <= ours, loaded
    mine = {m for m in loaded - ours if m.split(".")[0] == "assay"}
    assert mine <= allowed, mine - allowed


def test_help_lists_every_metric_type():
    from assay.classification.declared import METRICS, OPTIONS

    listed = OPTIONS["metrics"].help.rsplit(": ", 1)[1].rstrip(".")
    assert listed.split(", ") == list(METRICS.types)
    r = runner.invoke(app, ["classification", "--help"], env={"COLUMNS": "400"})
    assert r.exit_code == 0 and "DetailedPrecisionRecallCurve" in r.stdout
