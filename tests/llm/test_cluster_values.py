"""``--cluster`` with an item that has no cluster value: refused before the first call.

Every LLM command with ``--cluster`` (the three suites, judge metrics through ``assay
text``, ``assay pairwise judge``) checks the column's values before any call, not only at
scoring (regression: the items without a value were refused only after the whole run).
The refusal is one line naming the flag, the column and the first item without a value;
the calls are counted on the loopback chat server (none made). ``assay text`` with ROUGE
or BLEU alone makes no call, and names the row the same way.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.llm.pairwise.task import PairwiseTask
from assay.llm.slicing import check_clusters
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

SUITES = Path(__file__).resolve().parents[1] / "suites" / "data"
runner = CliRunner()


def _exam(tmp: Path) -> Path:
    rows = ["language,school,question,options,answer"]
    for i in range(8):
        school = "" if i == 5 else f"s{i % 3}"
        rows.append(f'en,{school},Question {i}?,"[""a{i}"", ""b{i}""]",{i % 2}')
    (path := tmp / "exam.csv").write_text("\n".join(rows) + "\n")
    return path


def _cat(tmp: Path) -> Path:
    doc = json.loads((SUITES / "cat_dev.json").read_text())
    for kind in ("intrasentence", "intersentence"):
        for i, item in enumerate(doc["data"][kind]):
            if not (kind == "intersentence" and i == 1):  # that item has no site
                item["site"] = f"s{i % 2}"
    (path := tmp / "dev.json").write_text(json.dumps(doc))
    return path, doc["data"]["intersentence"][1]["id"]


def _fairness(tmp: Path) -> Path:
    for name in ("toy.toml", "toy.txt", "toy_train.csv"):
        shutil.copy(SUITES / name, tmp / name)
    lines = (SUITES / "toy_test.csv").read_text().splitlines()
    lines[3] = lines[3].replace(",r3,", ",,")  # CSV line 4: no name
    (tmp / "toy_test.csv").write_text("\n".join(lines) + "\n")
    return tmp / "toy.toml"


def _text(tmp: Path) -> Path:
    rows = [{"uid": f"d{i}", "query": "q?", "prediction": "a b", "groundtruth": "a b",
             "site": "" if i == 2 else f"s{i % 2}"} for i in range(4)]  # fmt: skip
    (path := tmp / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _pairs(tmp: Path) -> Path:
    t = make_table(["quality"] * 4, {"m1": [1, 2, 3, 1], "ref": [2] * 4})
    t["site"] = ["a", "a", " ", "b"]  # a blank is no value (as scoring reads it)
    t.to_json(path := tmp / "pairs.jsonl", orient="records", lines=True)
    return path


def test_an_item_without_a_cluster_value_exits_2_naming_it_before_any_call(tmp_path):
    cat, cat_id = _cat(tmp_path)
    ci = ["--ci", "0.9", "--num-bootstrap", "20"]
    pw = ["pairwise", "judge", "--data", str(_pairs(tmp_path)), "--models", "m1",
          "--reference-model", "ref", "--out-dir", str(tmp_path / "runs")]  # fmt: skip
    cases = [
        (["llm", "language", "--data", str(_exam(tmp_path)), "--cluster", "school"],
         "school", "line 7"),
        (["llm", "cat", "--data", str(cat), "--cluster", "site"], "site", f"item {cat_id}"),
        (["llm", "fairness", "--dataset-file", str(_fairness(tmp_path)), "--cluster", "name"],
         "name", "test row 3"),
        *[(["text", "--data", str(_text(tmp_path)), "--metrics", metrics, "--cluster", "site"],
           "site", "uid d2") for metrics in ("answer_relevance", "rouge,answer_relevance", "bleu")],
        ([*pw, "--cluster", "site"], "site", "question proj2_uml_class-general"),
    ]  # fmt: skip
    with FakeChatServer(responder=scripted_judge()) as srv:
        for args, column, first in cases:
            model = ["--judge" if args[0] == "pairwise" else "--model", srv.spec()]
            r = runner.invoke(app, [*args, *ci, *model, "--no-cache", "--quiet"])
            assert r.exit_code == 2, (args, r.output)
            lines = r.output.strip().splitlines()
            assert len(lines) == 1, r.output
            assert "--cluster" in lines[0] and f"'{column}'" in lines[0], lines[0]
            assert first in lines[0], lines[0]
            assert srv.calls == 0, (args, srv.calls)


def test_check_clusters_names_the_first_item_without_a_value_and_counts_them():
    check_clusters("site", [("uid a", "x"), ("uid b", 3.0)], "rows")
    with pytest.raises(InvalidInputError) as e:
        check_clusters("site", [("uid a", "x"), ("uid b", None), ("uid c", float("nan"))], "rows")
    assert e.value.record == "uid b" and e.value.field == "site"
    assert "2 of 3 rows" in str(e.value) and e.value.source == "--cluster"


def test_the_pairwise_task_keeps_by_as_the_task_contract_says_and_checks_clusters_itself():
    """``LLMTask.by`` is a tuple (regression: the pairwise task kept a list); the library
    call refuses a question without a cluster as the CLI does, before any call."""
    t = make_table(["quality"] * 3, {"m1": [1, 2, 3], "ref": [2] * 3})
    t["topic"], t["site"] = ["x", "y", "x"], ["a", None, "b"]
    kw = {"models": ["m1"], "reference_model": "ref", "num_bootstrap": 10}
    assert PairwiseTask(t, by="topic", **kw).by == ("topic",)
    assert PairwiseTask(t, by=["topic", "site"], **kw).by == ("topic", "site")
    with pytest.raises(InvalidInputError) as e:
        PairwiseTask(t, ci=0.9, cluster="site", **kw)
    assert e.value.record == "question proj1_uml_class-general" and e.value.field == "site"
