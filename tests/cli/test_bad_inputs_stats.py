"""Bad input to `assay stats`: exit 2, one line naming the option (or file and line), no
traceback, and an existing --out left exactly as it was. Most cases are bad value-mapping
specs, on the evaluation (--to-float), on a metric or on a reducer."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()

SCORES = "".join(
    json.dumps({"sample_id": i // 2, "epoch": i % 2 + 1, "value": v, "sample_metadata": {"t": t}})
    + "\n"
    for i, (v, t) in enumerate([("C", "a"), ("P", "a"), ("P", "b"), ("I", "b")])
)

# name -> (extra args, scores file content or None for SCORES, expected fragments)
CASES = {
    "--to-float not JSON": (["--to-float", "{P: 0}"], None, ["--to-float", "invalid JSON"]),
    "--to-float mixes fields and a table": (
        ["--to-float", '{"correct": "ok", "P": 0}'],
        None,
        ["--to-float", "mixes the fields", "'P'"],
    ),
    "--to-float table value not a number": (
        ["--to-float", '{"P": "half"}'],
        None,
        ["--to-float", "'P': 'half'", "finite number"],
    ),
    "--to-float sentinel a list": (
        ["--to-float", '{"correct": [1]}'],
        None,
        ["--to-float", "field 'correct'", "scalar"],
    ),
    "--to-float a list": (["--to-float", "[1, 2]"], None, ["--to-float", "expected a"]),
    "--to-float table key a number": (
        ["--to-float", '{"values": {"P": NaN}}'],
        None,
        ["--to-float", "finite number"],
    ),
    "metric mapping not a number": (
        ["--metric", 'accuracy(to_float={"P": "x"})'],
        None,
        ["--metric accuracy(", "'P': 'x'", "finite number"],
    ),
    "metric mapping mixed": (
        ["--metric", 'mean(to_float={"partial": "p", "C": 1})'],
        None,
        ["--metric mean(", "mixes the fields"],
    ),
    "metric mapping not a literal": (
        ["--metric", "accuracy(to_float=dict(P=0))"],
        None,
        ["--metric accuracy(", "not a literal"],
    ),
    "metric call syntax error": (
        ["--metric", "accuracy(to_float={'P': 0}"],
        None,
        ["--metric accuracy(", "cannot read"],
    ),
    "metric unknown keyword": (
        ["--metric", "accuracy(to_flaot={'P': 0})"],
        None,
        ["--metric accuracy(", "to_flaot"],
    ),
    "metric unknown": (["--metric", "acuracy()"], None, ["--metric acuracy()", "unknown metric"]),
    "metric JSON spec broken": (
        ["--metric", '{"metric": "Accuracy", "params": {"to_float": {"P": []}}}'],
        None,
        ["--metric {", "finite number"],
    ),
    "grouped inner mapping bad": (
        ["--metric", 'grouped(mean(to_float={"P": true}), "t")'],
        None,
        ["--metric grouped(", "finite number"],
    ),
    "reducer mapping not a number": (
        ["--reducer", 'mean_score(to_float={"P": "x"})'],
        None,
        ["--reducer mean_score(", "finite number"],
    ),
    "reducer mode takes no mapping": (
        ["--reducer", 'mode(to_float={"P": 0})'],
        None,
        ["--reducer mode(", "to_float"],
    ),
    "reducer unknown": (["--reducer", "avg"], None, ["--reducer avg", "unknown reducer"]),
    "letter not a custom sentinel": (
        ["--to-float", '{"correct": "pass", "incorrect": "fail"}'],
        None,
        ["scores.jsonl", "sample 0", "field 'value'", "'C'"],
    ),
    "score line not JSON": ([], '{"value": "C"}\n{value: 1}\n', ["scores.jsonl", "row 2"]),
    "score line without value": ([], '{"sample_id": 1}\n', ["scores.jsonl", "field 'value'"]),
    "empty scores file": ([], "", ["scores.jsonl", "no scores"]),
}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exit_2_with_one_clear_line(workdir, case):
    args, content, fragments = CASES[case]
    (workdir / "scores.jsonl").write_text(SCORES if content is None else content)
    out = workdir / "out.json"
    out.write_text("OLD")
    r = runner.invoke(app, ["stats", "--scores", "scores.jsonl", *args, "--out", "out.json"])
    text = r.stdout + r.stderr
    assert r.exit_code == 2, text
    assert "Traceback" not in text
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for frag in fragments:
        assert frag in text, (frag, text)
    assert out.read_text() == "OLD"


def test_missing_scores_file(workdir):
    r = runner.invoke(app, ["stats", "--scores", "nope.jsonl"])
    assert r.exit_code == 2 and "nope.jsonl" in r.stderr and "file not found" in r.stderr
