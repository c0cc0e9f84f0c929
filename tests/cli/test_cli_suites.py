"""`assay llm cat|fairness|language|average` end to end against a scripted loopback server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store
from assay.testing.llm import FakeChatServer

runner = CliRunner()
DATA = Path(__file__).parents[1] / "suites" / "data"


@pytest.fixture
def server():
    def answer(messages):
        text = messages[-1]["content"]
        if "Option 1:" in text:
            return "2"
        if '{"choice"' in text:
            return '{"choice": "Paris"}'
        if "readingScore" in text:
            return "H"
        return "1" if "two_year_recid" in text else "Y"

    with FakeChatServer(responder=answer) as srv:
        yield srv


def _invoke(args):
    return runner.invoke(app, ["llm", *args], catch_exceptions=False)


def test_cat_prints_records_and_stores_one_item_per_call(server, tmp_path):
    db = str(tmp_path / "s.db")
    out = tmp_path / "cat.json"
    r = _invoke(["cat", "--data", str(DATA / "cat_dev.json"), "-m", server.spec(), "--db", db,
                 "--out", str(out), "--quiet"])  # fmt: skip
    assert r.exit_code == 0, r.output
    records = json.loads(out.read_text())
    types = {d["type"] for d in records}
    assert {"LMS", "SS", "ICAT", "CATCounts", "ErrorRate"} <= types
    scopes = {d["parameters"]["scope"] for d in records}
    assert {"general", "intrasentence", "intersentence", "gender", "race", "religion"} <= scopes
    with Store(db) as st:
        ev = st.latest(kind="llm_cat", dataset="cat_dev.json")
        full = st.get(ev.id, items=True)
    assert full.status == "finished" and full.model == server.spec()
    assert len(full.items) == 6 and server.calls == 6
    it = full.items[0]
    assert (
        it.raw_answer == "2"
        and it.parsed["choice"] == 2
        and "Option 1:" in it.prompt[-1]["content"]
    )
    assert full.parameters["seed"] == 1 and full.parameters["template_version"] == "v1"


def test_dry_run_prints_prompts_without_calling(server):
    r = _invoke(
        ["cat", "--data", str(DATA / "cat_dev.json"), "-m", server.spec(), "--dry-run", "2"]
    )
    assert r.exit_code == 0
    assert len(re.findall(r"^### ", r.output, re.MULTILINE)) == 2
    assert "Option 3:" in r.output and server.calls == 0
    r = _invoke(
        ["fairness", "--dataset", "pisa", "--sample", "--dry-run", "1", "-m", server.spec()]
    )
    assert r.exit_code == 0 and "<Student Attributes>:" in r.output and server.calls == 0


@pytest.mark.parametrize(
    "args, name, needles",
    [
        (["cat", "--data", "{bad_dev}"], "bad_dev", ["intersentence[1]", "sentences", "three"]),
        (["language", "--data", "{bad_exam}"], "bad_exam", ["line 2", "answer", "out of range"]),
        (["fairness", "--dataset-file", "{bad_toml}"], "bad_toml", ["toy_test.csv", "hours"]),
    ],
)
def test_bad_data_exits_2_naming_file_record_and_field(server, tmp_path, args, name, needles):
    dev = json.loads((DATA / "cat_dev.json").read_text())
    dev["data"]["intersentence"][1]["sentences"].pop()
    (tmp_path / "bad_dev.json").write_text(json.dumps(dev))
    (tmp_path / "bad_exam.csv").write_text("language,question,options,answer\nen,q,['a' 'b'],5\n")
    for f in ("toy.toml", "toy.txt", "toy_train.csv"):
        (tmp_path / f).write_text((DATA / f).read_text())
    (tmp_path / "toy_test.csv").write_text("id,name,sex,outcome\n1,r1,m,yes\n")
    paths = {"bad_dev": tmp_path / "bad_dev.json", "bad_exam": tmp_path / "bad_exam.csv",
             "bad_toml": tmp_path / "toy.toml"}  # fmt: skip
    argv = [a.format(**{k: str(v) for k, v in paths.items()}) for a in args]
    r = _invoke([*argv, "-m", server.spec(), "--quiet"])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in r.output
    for needle in needles:
        assert needle in lines[0]
    assert server.calls == 0  # nothing paid


def test_max_errors_exits_1_and_stores_a_failed_run(tmp_path):
    db = str(tmp_path / "s.db")
    with FakeChatServer(responder=lambda m: "1") as srv:
        from assay.llm.suites import CATSuite

        prompts = [
            p.item.messages[-1]["content"] for p in CATSuite(str(DATA / "cat_dev.json")).prepare()
        ]
        srv.plan = {prompts[0]: ["400"], prompts[2]: ["400"]}
        r = _invoke(["cat", "--data", str(DATA / "cat_dev.json"), "-m", srv.spec(), "--db", db,
                     "--max-errors", "1", "--concurrency", "1", "--retries", "0",
                     "--quiet"])  # fmt: skip
    assert r.exit_code == 1
    assert "2 call errors exceed max_errors=1" in r.output
    with Store(db) as st:
        (ev,) = st.list()
        full = st.get(ev.id, items=True)
    assert full.status == "failed" and "max_errors=1" in full.error
    assert len(full.items) == 3 and [i.ok for i in full.items] == [False, True, False]


def test_fairness_runs_then_average(server, tmp_path):
    db = str(tmp_path / "s.db")
    for ds in ("pisa", "compas"):
        r = _invoke(["fairness", "--dataset", ds, "--sample", "-n", "6", "-m", server.spec(),
                     "--db", db, "--quiet"])  # fmt: skip
        assert r.exit_code == 0, r.output
        recs = json.loads(r.stdout)
        counts = [
            d
            for d in recs
            if d["type"] == "ResponseCounts" and not d["parameters"].get("counterfactual")
        ]
        assert counts[0]["value"] == {"valid": 6, "invalid": 0, "errors": 0}
    assert server.calls == 24  # 6 originals + 6 counterfactuals, twice
    r = _invoke(["fairness", "--dataset-file", str(DATA / "toy.toml"), "-m", server.spec(),
                 "--db", db, "--quiet", "--format", "table"])  # fmt: skip
    assert r.exit_code == 0 and "Accuracy" in r.stdout and "StatisticalPa" in r.stdout
    r = _invoke(["average", "--datasets", "pisa,compas", "--db", db])
    assert r.exit_code == 0, r.output
    recs = {d["type"]: d for d in json.loads(r.stdout)}
    acc = recs["Accuracy"]
    assert acc["parameters"]["n"] == 2 and len(acc["parameters"]["evaluations"]) == 2
    with Store(db) as st:
        found = st.latest_per_dataset(kind="llm_fairness", datasets=["pisa", "compas"])
    means = []
    for ev in found.values():
        means.append(ev.metrics.get("Accuracy").value)
    assert acc["value"] == pytest.approx(sum(means) / 2)
    r = _invoke(["average", "--datasets", "pisa,german", "--db", db])
    assert r.exit_code == 2 and "german" in r.output


def test_language_command(server, tmp_path):
    r = _invoke(["language", "--data", str(DATA / "exam.csv"), "--languages", "en,fr",
                 "-m", server.spec(), "--no-save", "--quiet"])  # fmt: skip
    assert r.exit_code == 0, r.output
    recs = json.loads(r.stdout)
    acc = {d["parameters"]["language"]: d["value"] for d in recs if d["type"] == "Accuracy"}
    assert acc == {"all": 0.25, "en": 0.5, "fr": 0.0}  # only "Paris" is ever answered
    assert server.calls == 4
