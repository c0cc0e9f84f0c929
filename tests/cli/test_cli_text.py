"""``assay text``: ROUGE/BLEU, judge metrics through a scripted judge, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.text import bleu, rouge

runner = CliRunner()

ROWS = [
    {
        "uid": "a",
        "query": "Where is the tower?",
        "prediction": "The tower is in Paris. I think it is lovely.",
        "groundtruth": ["The tower is in Paris.", "It is in France."],
        "context": ["Paris has a tower.", "France is in Europe."],
    },
    {
        "uid": "b",
        "query": "How tall is it?",
        "prediction": "It is 330 metres tall.",
        "groundtruth": "The tower is 330 metres tall.",
        "context": ["The tower is 330 metres tall."],
    },
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rouge_bleu_json(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    r = runner.invoke(app, ["text", "--data", str(data), "--rouge-types", "rouge1,rougeL"])
    assert r.exit_code == 0, r.output
    recs = json.loads(r.stdout)
    preds = [x["prediction"] for x in ROWS]
    refs = [x["groundtruth"] for x in ROWS]
    want = rouge(preds, refs, rouge_types=["rouge1"])["rouge1"]
    got = [
        m["value"]
        for m in recs
        if m["type"] == "ROUGE"
        and m["parameters"].get("rouge_type") == "rouge1"
        and "datum_uid" in m["parameters"]
    ]
    assert got == want.tolist()
    b = [m for m in recs if m["type"] == "BLEU" and m["parameters"].get("datum_uid") == "b"]
    assert b[0]["value"] == bleu(preds, refs)[1]


def test_csv_and_parquet_inputs(tmp_path: Path) -> None:
    df = pd.DataFrame(ROWS)
    df["groundtruth"] = [json.dumps(g) if isinstance(g, list) else g for g in df["groundtruth"]]
    df["context"] = [json.dumps(c) for c in df["context"]]
    df.to_csv(tmp_path / "d.csv", index=False)
    pd.DataFrame(ROWS[1:]).to_parquet(tmp_path / "d.parquet")
    for name in ("d.csv", "d.parquet"):
        r = runner.invoke(app, ["text", "--data", str(tmp_path / name), "--metrics", "bleu"])
        assert r.exit_code == 0, r.output
        assert any(m["type"] == "BLEU" for m in json.loads(r.stdout))


@pytest.mark.parametrize(
    "metric, column",
    [
        ("faithfulness", "context"),
        ("answer_relevance", "query"),
        ("answer_correctness", "groundtruth"),
        ("rouge", "groundtruth"),
    ],
)
def test_missing_column_is_exit_2_naming_metric_and_column(tmp_path: Path, metric, column):
    rows = [{k: v for k, v in r.items() if k != column} for r in ROWS]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "out.jsonl"
    args = f"--metrics bleu,{metric} --model http://127.0.0.1:9/v1#nobody".split()
    r = runner.invoke(app, ["text", "--data", str(data), *args, "--out", str(out)])
    assert r.exit_code == 2
    first = "bleu" if column == "groundtruth" else metric  # the first metric needing it
    assert f"metric {first} needs the {column!r} column" in r.stderr
    assert "Traceback" not in r.output and not out.exists()


def test_unknown_metric_and_bad_weights(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    r = runner.invoke(app, ["text", "--data", str(data), "--metrics", "rouge,meteor"])
    assert r.exit_code == 2 and "unknown judge metric 'meteor'" in r.stderr
    r = runner.invoke(app, ["text", "--data", str(data), "--bleu-weights", "a,b"])
    assert r.exit_code == 2


def test_judge_metrics_with_scripted_judge_out_and_save(tmp_path: Path, scripted_server) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    out = tmp_path / "out.jsonl"
    db = tmp_path / "store.db"
    metrics = "rouge,faithfulness,bias,answer_correctness"
    args = ["--metrics", metrics, "--model", scripted_server.spec(), "--no-cache", "--save"]
    r = runner.invoke(app, ["text", "--data", str(data), *args, "--out", str(out), "--db", str(db)])
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    f = [m for m in recs if m["type"] == "Faithfulness" and m["parameters"].get("datum_uid") == "a"]
    assert f[0]["value"] == 1.0
    details = f[0]["parameters"]["details"]
    assert details["verdicts"][0]["verdict"] == "yes" and details["raw_replies"]
    assert any(m["type"] == "AnswerCorrectness" and m["parameters"].get("aggregate") for m in recs)
    from assay.store import Store

    with Store(str(db)) as store:
        (ev,) = store.list(kind="text")
        full = store.get(ev.id, items=True)
    assert full.items is not None and len(full.items) >= scripted_server.calls > 0
    # identical prompts share one call (attempts 0 on the sharer): items pay what was called
    assert sum(i.attempts for i in full.items) == scripted_server.calls
    assert any(i.parsed and "verdicts" in i.parsed for i in full.items)
    assert len(full.metrics) == len(recs)


def test_help_is_fast_and_light() -> None:
    code = (
        "import sys, time; t=time.perf_counter(); import assay.cli.text; "
        "heavy = ['assay.llm.judge.registry', 'assay.llm.judge.run', 'assay.text.evaluator', "
        "'numpy', 'pydantic', 'openai', 'nltk', 'pandas', 'llama_cpp']; "
        "print(time.perf_counter()-t, any(m in sys.modules for m in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    secs, heavy_loaded = out.stdout.split()
    assert heavy_loaded == "False"
    assert float(secs) < 5.0  # generous: the machine may be loaded
    t = time.perf_counter()
    r = runner.invoke(app, ["text", "--help"])
    assert r.exit_code == 0 and "--rouge-types" in r.output
    assert time.perf_counter() - t < 10


@pytest.fixture()
def scripted_server():
    """The loopback chat server answering every judge prompt with valid 'yes' replies."""
    import re

    from assay.testing.llm import FakeChatServer

    def respond(messages):
        text = next(m["content"] for m in messages if m["role"] == "user")
        for kind in ("statements", "opinions", "claims"):
            if f'{{"{kind}": [' in text and "Text:" in text:
                return json.dumps({kind: ["One thing."]})
        n = [int(x) for x in re.findall(r"exactly (\d+) entries", text)]
        yes = lambda k: [{"verdict": "yes", "reason": ""}] * k  # noqa: E731
        if len(n) == 2:
            return json.dumps({"answer_verdicts": yes(n[0]), "reference_verdicts": yes(n[1])})
        if n:
            return json.dumps({"verdicts": yes(n[0])})
        return json.dumps({"analysis": "ok", "score": 3})

    with FakeChatServer(responder=respond) as srv:
        yield srv


def test_dry_run_prints_the_first_calls_and_makes_none(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    r = runner.invoke(
        app,
        [
            "text",
            "--data",
            str(data),
            "--metrics",
            "faithfulness,bias,hallucination",
            "--model",
            "http://127.0.0.1:9/v1#nobody",
            "--dry-run",
            "--json-mode",
            "--max-tokens",
            "50",
        ],
    )
    assert r.exit_code == 0, r.output
    items = [json.loads(line) for line in r.stdout.splitlines()]
    ids = [i["id"] for i in items]
    # claims and opinions of each prediction, hallucination of each datum
    assert sum(i.startswith("claims:") for i in ids) == 2
    assert sum(i.startswith("opinions:") for i in ids) == 2
    assert sorted(i for i in ids if "/" in i) == ["a/hallucination", "b/hallucination"]
    assert items[0]["messages"][0]["role"] == "system"
    for it in items:  # --json-mode: each call asks for its own reply schema
        fmt = it["params"].pop("response_format")
        assert it["params"] == {"temperature": 0.0, "max_tokens": 50}
        assert fmt["type"] == "json_schema"
        kind = it["id"].split(":")[0] if ":" in it["id"] else "verdicts"
        assert fmt["json_schema"]["name"] == kind.capitalize()
        assert kind in fmt["json_schema"]["schema"]["properties"]
