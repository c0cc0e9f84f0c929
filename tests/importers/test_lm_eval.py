"""lm-evaluation-harness ``--log_samples`` output, imported.

lm-eval itself is not installed in the test environment (it pulls torch, transformers
and datasets), so the files are BUILT here from lm-eval's documented format and its
source, release 0.4.13: ``lm_eval/evaluator.py`` makes each sample line (``doc_id``,
``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics``,
``doc_hash``, ``prompt_hash``, ``target_hash``, then one key per metric);
``lm_eval/loggers/evaluation_tracker.py`` (``save_results_samples``) rewrites
``arguments`` as ``{"gen_args_<i>": {"arg_<j>": ...}}``, turns ``target`` into text and
names the file ``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``; the results
JSON has ``results[task]["<metric>,<filter>"]`` and ``"<metric>_stderr,<filter>"`` (lm-eval's
``mean_stderr``: the sample standard deviation over sqrt(n)). Every field assay reads is
checked against the line it came from.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.importers.lm_eval import lm_eval_run

runner = CliRunner()
DATE = "2026-03-04T05-06-07.123456"


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _mc_line(i: int, rng: np.random.Generator) -> dict:
    """A multiple-choice document (loglikelihood requests), as lm-eval 0.4.13 logs it."""
    doc = {"question": f"q{i}", "choices": ["a", "b", "c"], "label": i % 3}
    ctx = f"Question: q{i}\nAnswer:"
    lls = [float(x) for x in rng.normal(-3, 1, size=3)]
    lengths = [1, 2, 3]
    acc = float(int(np.argmax(lls)) == doc["label"])
    acc_norm = float(int(np.argmax(np.array(lls) / lengths)) == doc["label"])
    return {
        "doc_id": i,
        "doc": doc,
        "target": str(doc["label"]),
        "arguments": {
            f"gen_args_{k}": {"arg_0": ctx, "arg_1": f" {c}"} for k, c in enumerate(doc["choices"])
        },  # fmt: skip
        "resps": [[[ll, False]] for ll in lls],
        "filtered_resps": [[ll, False] for ll in lls],
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": _h(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": _h(ctx),
        "target_hash": _h(str(doc["label"])),
        "acc": acc,
        "acc_norm": acc_norm,
    }


def _gen_lines(i: int) -> list[dict]:
    """A generation document scored under two filters (one line per filter)."""
    doc = {"question": f"{i} + {i}?", "answer": str(2 * i)}
    answer = f"The answer is {2 * i if i % 3 else 0}."
    out = []
    for f, picked in (("strict-match", str(2 * i) if i % 3 else "0"), ("flexible", str(2 * i))):
        out.append({
            "doc_id": i, "doc": doc, "target": doc["answer"],
            "arguments": {"gen_args_0": {"arg_0": f"Q: {doc['question']}\nA:",
                                         "arg_1": {"until": ["\n"]}}},
            "resps": [[answer]], "filtered_resps": [picked], "filter": f,
            "metrics": ["exact_match"],
            "doc_hash": _h(json.dumps(doc, indent=2)), "prompt_hash": _h(doc["question"]),
            "target_hash": _h(doc["answer"]),
            "exact_match": float(picked == doc["answer"]),
        })  # fmt: skip
    return out


def _stats(values: list[float]) -> tuple[float, float]:
    x = np.asarray(values)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))


def _write(d: Path, mc: list[dict], gen: list[dict]) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    for task, rows in (("arc_like", mc), ("gsm_like", gen)):
        (d / f"samples_{task}_{DATE}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        )
    results: dict = {"arc_like": {"alias": "arc_like"}, "gsm_like": {"alias": "gsm_like"}}
    tasks = (("arc_like", mc, ["acc", "acc_norm"]), ("gsm_like", gen, ["exact_match"]))
    for task, rows, metrics in tasks:
        for f in dict.fromkeys(r["filter"] for r in rows):
            for m in metrics:
                mean, se = _stats([r[m] for r in rows if r["filter"] == f])
                results[task][f"{m},{f}"], results[task][f"{m}_stderr,{f}"] = mean, se
    obj = {
        "results": results,
        "configs": {"arc_like": {"metric_list": [
            {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True}]},
            "gsm_like": {"metric_list": [
            {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}]}},
        "versions": {"arc_like": 1.0, "gsm_like": 3.0},
        "n-shot": {"arc_like": 0, "gsm_like": 5},
        "config": {"model": "hf", "model_args": "pretrained=EleutherAI/pythia-70m"},
        "model_name": "EleutherAI/pythia-70m",
        "git_hash": "abc1234",
    }  # fmt: skip
    (d / f"results_{DATE}.json").write_text(json.dumps(obj, indent=2))
    return obj


@pytest.fixture
def harness(tmp_path: Path) -> tuple[Path, list[dict], list[dict], dict]:
    rng = np.random.default_rng(7)
    mc = [_mc_line(i, rng) for i in range(40)]
    gen = [line for i in range(1, 13) for line in _gen_lines(i)]
    d = tmp_path / "out" / "EleutherAI__pythia-70m"
    return d, mc, gen, _write(d, mc, gen)


def test_records_are_lm_evals_numbers_recomputed_by_assay(harness):
    d, mc, gen, res = harness
    run = lm_eval_run(d / f"samples_arc_like_{DATE}.jsonl")
    assert run.notices == []
    assert (run.kind, run.dataset, run.model) == ("lm_eval", "arc_like", "EleutherAI/pythia-70m")
    assert run.parameters["n_shot"] == 0 and run.parameters["model_args"].startswith("pretrained")
    got = {(m.type, m.parameters["scorer"]): m for m in run.metrics}
    assert set(got) == {("Mean", "acc"), ("Stderr", "acc"), ("Mean", "acc_norm"),
                        ("Stderr", "acc_norm")}  # fmt: skip
    for (typ, metric), m in got.items():
        key = f"{metric},none" if typ == "Mean" else f"{metric}_stderr,none"
        assert m.value == res["results"]["arc_like"][key] and m.parameters["log_metric"] == key
        assert m.parameters["filter"] == "none" and m.parameters["n"] == 40
        assert "assay_value" not in m.parameters  # assay's recomputation agrees (1e-12)


def test_items_keep_every_field_of_the_sample_lines(harness):
    d, mc, gen, _ = harness
    run = lm_eval_run(d / f"samples_arc_like_{DATE}.jsonl")
    assert len(run.items) == len(mc)
    for it, line in zip(run.items, mc):
        assert it["item_id"] == str(line["doc_id"]) and it["params"] == {
            "epoch": 1,
            "filter": "none",
        }
        assert it["prompt"] == line["arguments"]["gen_args_0"]["arg_0"]
        assert it["parsed"] == {"acc": line["acc"], "acc_norm": line["acc_norm"]}
        assert it["raw_answer"] is None  # loglikelihoods, no text answer
        for k in ("target", "doc", "resps", "filtered_resps", "doc_hash", "prompt_hash",
                  "target_hash"):  # fmt: skip
            assert it["info"][k] == line[k], k
    run = lm_eval_run(d / f"samples_gsm_like_{DATE}.jsonl")
    assert len(run.items) == len(gen)  # one unit per document and filter
    assert {(i["item_id"], i["params"]["filter"]) for i in run.items} == {
        (str(g["doc_id"]), g["filter"]) for g in gen
    }
    for it, line in zip(run.items, gen):
        assert it["raw_answer"] == line["filtered_resps"][0]
        assert it["parsed"] == {"exact_match": line["exact_match"]}
    filters = {m.parameters["filter"] for m in run.metrics}
    assert filters == {"strict-match", "flexible"} and run.notices == []


def test_a_differing_stderr_and_a_corpus_metric(harness):
    d, mc, _, res = harness
    res["results"]["arc_like"]["acc_stderr,none"] *= 1.5
    res["results"]["arc_like"]["bleu,none"] = 12.5
    res["configs"]["arc_like"]["metric_list"].append({"metric": "bleu", "aggregation": "bleu"})
    (d / f"results_{DATE}.json").write_text(json.dumps(res))
    rows = [{**r, "metrics": [*r["metrics"], "bleu"], "bleu": ["ref", "pred"]} for r in mc]
    (d / f"samples_arc_like_{DATE}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = lm_eval_run(d / f"samples_arc_like_{DATE}.jsonl")
    [note] = run.notices
    assert "acc_stderr,none" in note
    se = run.metrics.get("Stderr", scorer="acc")
    assert se.parameters["assay_value"] == pytest.approx(se.value / 1.5, rel=1e-12)
    bleu = run.metrics.get("bleu", scorer="bleu")
    assert bleu.value == 12.5 and bleu.parameters["recomputed"] is False


def test_samples_without_results_get_assays_numbers(harness):
    d, mc, _, res = harness
    (d / f"results_{DATE}.json").unlink()
    run = lm_eval_run(d / f"samples_arc_like_{DATE}.jsonl")
    assert run.model is None and "no results" in run.notices[0]
    mean, se = _stats([r["acc"] for r in mc])
    assert run.metrics.get("Mean", scorer="acc").value == pytest.approx(mean, rel=1e-12)
    assert run.metrics.get("Stderr", scorer="acc").value == pytest.approx(se, rel=1e-12)


def test_import_the_results_file_or_the_folder(harness, tmp_path):
    d, *_ = harness
    db = f"sqlite:///{tmp_path / 's.db'}"
    res = runner.invoke(app, ["import", str(d / f"results_{DATE}.json"), "--db", db])
    assert res.exit_code == 0, res.output
    entries = json.loads(res.stdout)
    assert sorted(e["dataset"] for e in entries) == ["arc_like", "gsm_like"]
    res = runner.invoke(app, ["import", str(tmp_path / "out"), "--db", db])
    assert res.exit_code == 0, res.output
    assert [e["status"] for e in json.loads(res.stdout)] == ["already_imported"] * 2
