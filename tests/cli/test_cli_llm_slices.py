"""``--ci`` and ``--by`` on the LLM commands (a suite, the judge metrics of ``assay text``)
against a scripted loopback server: the records carry the intervals and the slices, and
they come back unchanged from the store (``--save`` -> ``assay runs show`` -> ``assay runs
export``); a second run of the same command is answered from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer
from contract.llm_tasks import answer

runner = CliRunner()
DATA = Path(__file__).parents[1] / "suites" / "data"


@pytest.fixture
def server():
    def respond(messages):
        text = str(messages[-1]["content"])
        if "Option 1:" in text:
            return ["1", "2", "3"][len(text) % 3]
        return answer(messages)

    with FakeChatServer(responder=respond) as srv:
        yield srv


def _round_trip(db: str, out: Path) -> list[dict]:
    """The records written to ``--out``, after checking that the store shows and exports
    exactly them."""
    written = json.loads(out.read_text()) if out.suffix == ".json" else [
        json.loads(line) for line in out.read_text().splitlines()
    ]  # fmt: skip
    shown = runner.invoke(app, ["runs", "show", "1", "--db", db])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["metrics"] == written
    exported = runner.invoke(app, ["runs", "export", "1", "--db", db])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout)[0]["metrics"] == written
    return written


def test_cat_with_ci_and_by_round_trips_through_the_store(server, tmp_path):
    db, out, cache = str(tmp_path / "s.db"), tmp_path / "cat.json", str(tmp_path / "c.sqlite")
    args = ["llm", "cat", "--data", str(DATA / "cat_dev.json"), "-m", server.spec(), "--db", db,
            "--out", str(out), "--quiet", "--ci", "0.9", "--num-bootstrap", "50",
            "--by", "bias_type", "--by", "test_type", "--cache", cache]  # fmt: skip
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    records = _round_trip(db, out)
    lms = next(d for d in records if d["type"] == "LMS" and "slice" not in d["parameters"])
    assert lms["parameters"]["ci_method"] == "bootstrap" and lms["parameters"]["seed"] == 1
    sliced = [d for d in records if d["parameters"].get("slice_column") == "bias_type"]
    assert {d["parameters"]["slice"] for d in sliced} == {
        "gender",
        "race",
        "religion",
        "profession",
    }
    by_test = [d for d in records if d["parameters"].get("slice_column") == "test_type"]
    one = next(d for d in by_test if d["type"] == "LMS" and d["parameters"]["scope"] == "general")
    assert one["parameters"]["n"] == 3 and "gap_ci_low" in one["parameters"]
    made = server.calls
    r = runner.invoke(app, [*args, "--no-save"])
    assert r.exit_code == 0 and server.calls == made  # the same command: answered from the cache


def test_text_judge_metrics_with_ci_and_by_round_trip_through_the_store(server, tmp_path):
    rows = [
        {"uid": str(i), "query": f"Question {i}?", "prediction": f"Answer {i}. Also {i % 3}.",
         "groundtruth": f"Reference {i}.", "context": [f"Context {i}."], "topic": "ab"[i % 2]}
        for i in range(8)
    ]  # fmt: skip
    data = tmp_path / "t.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db, out = str(tmp_path / "s.db"), tmp_path / "out.jsonl"
    r = runner.invoke(
        app,
        ["text", "--data", str(data), "--metrics", "rouge,faithfulness", "-m", server.spec(),
         "--ci", "0.8", "--ci-method", "t", "--by", "topic", "--save", "--db", db,
         "--out", str(out), "-q", "--no-cache"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    records = _round_trip(db, out)
    agg = [d for d in records if d["parameters"].get("aggregate") == "mean"]
    rouge = next(d for d in agg if d["type"] == "ROUGE")
    assert (
        rouge["parameters"]["ci_method"] == "t" and rouge["parameters"]["confidence_level"] == 0.8
    )
    faith = [d for d in agg if d["type"] == "Faithfulness"]
    assert [d["parameters"].get("slice") for d in faith] == [None, "a", "b"]
    assert all(d["parameters"]["ci_method"] == "t" for d in faith)
    assert all("gap_ci_low" in d["parameters"] for d in faith[1:])


def _text_rows(n: int) -> list[dict]:
    words = ["red", "fox", "cat", "sat", "mat", "ran", "far", "dog"]
    return [
        {"uid": f"r{i:02d}", "prediction": " ".join(words[(i + k) % 8] for k in range(4)),
         "groundtruth": " ".join(words[(2 * i + k) % 8] for k in range(5)),
         "topic": ["news", "sport", None][i % 3]}
        for i in range(n)
    ]  # fmt: skip


def test_rouge_and_bleu_slices_equal_each_topic_alone_in_a_file_and_streamed(tmp_path):
    import pandas as pd

    from assay.text.evaluator import TextEvaluator

    rows = _text_rows(30)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    folder = tmp_path / "pq"
    folder.mkdir()
    for k in range(3):  # a Parquet dataset of three files, streamed one row group at a time
        pd.DataFrame(rows[10 * k : 10 * k + 10]).to_parquet(folder / f"part{k}.parquet")
    got = []
    for data in (tmp_path / "t.jsonl", folder):
        r = runner.invoke(app, ["text", "--data", str(data), "--metrics", "rouge,bleu",
                                "--rouge-types", "rouge1", "--by", "topic", "--ci", "0.9",
                                "--num-bootstrap", "80"])  # fmt: skip
        assert r.exit_code == 0, r.output
        got.append(json.loads(r.stdout))
    assert got[0] == got[1]
    sliced = [d for d in got[0] if d["parameters"].get("slice_column") == "topic"]
    # the rows without a topic are the slice null, listed last (issue 36 item 10)
    assert list(dict.fromkeys(d["parameters"]["slice"] for d in sliced)) == ["news", "sport", None]
    for topic in ("news", "sport", None):
        keep = [x for x in rows if x["topic"] == topic]
        alone = TextEvaluator(metrics=["rouge", "bleu"], rouge_types=["rouge1"], ci=0.9,
                              num_bootstrap=80)  # fmt: skip
        alone.add([x["prediction"] for x in keep], [x["groundtruth"] for x in keep],
                  uids=[x["uid"] for x in keep])  # fmt: skip
        want = [m.to_dict() for m in alone.compute() if "aggregate" in m.parameters]
        mine = [d for d in sliced if d["parameters"]["slice"] == topic]
        assert len(mine) == len(want) == 2
        for w, m in zip(want, mine):
            drop = ("slice_column", "slice", "slice_n", "gap", "gap_ci_low", "gap_ci_high")
            own = {k: v for k, v in m["parameters"].items() if k not in drop}
            w_own = dict(w["parameters"])
            assert (m["type"], m["value"], own) == (w["type"], w["value"], w_own)
            assert m["parameters"]["slice_n"] == 10 and "gap_ci_low" in m["parameters"]
