"""``--out`` into a folder that does not exist is refused in one line (a typo must not make
folders anywhere); nothing is created. ``--out-dir`` still makes its folder."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app


@pytest.fixture
def inputs(tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text("uid,value\nd1,a\nd2,b\n")
    pr = tmp_path / "pr.csv"
    pr.write_text("uid,value,score\nd1,a,0.8\nd1,b,0.2\nd2,a,0.4\nd2,b,0.6\n")
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps({"sample_id": f"s{i}", "value": i % 2}) + "\n"
                              for i in range(6)))  # fmt: skip
    text = tmp_path / "t.jsonl"
    text.write_text(json.dumps({"uid": "1", "prediction": "a b", "groundtruth": "a b"}) + "\n")
    db = tmp_path / "store.db"
    argv = ["classification", "--groundtruths", str(gt), "--predictions", str(pr), "--save",
            "--db", str(db)]  # fmt: skip
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    return {"gt": gt, "pr": pr, "scores": scores, "text": text, "db": db}


COMMANDS = {
    "classification": ["classification", "--groundtruths", "{gt}", "--predictions", "{pr}"],
    "stats": ["stats", "--scores", "{scores}"],
    "text": ["text", "--data", "{text}", "--metrics", "rouge"],
    "runs export": ["runs", "export", "1", "--db", "{db}"],
    "report": ["report", "1", "--db", "{db}"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_out_into_a_missing_folder_is_refused(inputs, tmp_path, name):
    missing = tmp_path / "typo" / "deeper"
    out = missing / ("r.html" if name == "report" else "r.json")
    argv = [a.format(**inputs) for a in COMMANDS[name]]
    res = CliRunner().invoke(app, [*argv, "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "does not exist" in lines[0] and "--out" in lines[0], res.output
    assert str(missing) in lines[0]
    assert not (tmp_path / "typo").exists()


def test_out_into_an_existing_folder_works(inputs, tmp_path):
    out = tmp_path / "r.json"
    argv = [a.format(**inputs) for a in COMMANDS["classification"]]
    res = CliRunner().invoke(app, [*argv, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())
