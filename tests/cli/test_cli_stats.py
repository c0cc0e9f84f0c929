"""`assay stats`: the records of a JSONL score file equal the API's, metrics and reducers
written as calls with their own `to_float` included."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

import assay.stats as st
from assay.cli.main import app
from assay.stats.spec_text import metric_from_text, reducer_from_text

runner = CliRunner()


def _rows():
    rng = np.random.default_rng(3)
    letters = ["C", "I", "P", "P", None, 0.25]
    return [
        {
            "sample_id": f"s{sid}",
            "epoch": epoch,
            "value": letters[int(rng.integers(0, len(letters)))],
            "sample_metadata": {"topic": f"t{sid % 3}", "doc": sid // 4},
        }
        for sid in range(30)
        for epoch in (1, 2, 3)
    ]


def test_cli_records_equal_the_api(tmp_path):
    rows = _rows()
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    metrics = [
        "accuracy",
        'accuracy(to_float={"P": 0.0})',
        'grouped(mean(to_float={"P": 1}), "topic", all="groups")',
        "stderr(cluster='doc', to_float={'values': {'P': 0.25}})",
        '{"metric": "Ci", "params": {"level": 0.9, "to_float": {"P": 0}}}',
    ]
    reducers = ["mode", "mean_score(to_float={'P': 0})", "at_least(2, value=0.5)"]
    args = ["stats", "--scores", str(path), "--out", str(tmp_path / "o.json")]
    for m in metrics:
        args += ["--metric", m]
    for r in reducers:
        args += ["--reducer", r]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.stdout + res.stderr
    got = json.loads((tmp_path / "o.json").read_text())
    scores = [
        st.SampleScore(st.Score(r["value"]), r["sample_id"], r["epoch"], r["sample_metadata"])
        for r in rows
    ]
    want = st.evaluate_scores(
        scores,
        [
            st.accuracy(),
            st.accuracy(to_float={"P": 0.0}),
            st.grouped(st.mean(to_float={"P": 1}), "topic", all="groups"),
            st.stderr(cluster="doc", to_float={"values": {"P": 0.25}}),
            st.ci(0.9, to_float={"P": 0}),
        ],
        ["mode", st.mean_score(to_float={"P": 0}), st.at_least(2, value=0.5)],
    )
    assert got == json.loads(want.to_json())
    assert len(got) == 3 * (1 + 1 + 4 + 1 + 1)
    with_mapping = [m for m in got if "to_float" in m["parameters"]]
    assert len(with_mapping) == 3 * 7


def test_text_specs_equal_the_api_specs():
    pairs = [
        ('accuracy(to_float={"P": 0.0})', st.accuracy(to_float={"P": 0.0})),
        ("stderr(cluster='doc')", st.stderr(cluster="doc")),
        (
            'grouped(var(to_float={"P": 1}), "t", all=false)',
            st.grouped(st.var(to_float={"P": 1}), "t", all=False),
        ),
        ("bootstrap_stderr(200, seed=3)", st.bootstrap_stderr(200, seed=3)),
    ]
    for text, metric in pairs:
        assert metric_from_text(text).spec == metric.spec, text
    assert (
        reducer_from_text("max_score(to_float={'P': 2})").spec
        == st.max_score(to_float={"P": 2}).spec
    )
    assert reducer_from_text("pass_at_2").name == "pass_at_2"
