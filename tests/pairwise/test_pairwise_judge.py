"""``assay pairwise judge`` against a scripted judge on a real loopback HTTP server."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.pairwise import judge_items
from assay.llm.pairwise.table import build_comparisons, read_table
from assay.testing.pairwise import make_table

REF = "ref"


def _judge(srv, table, tmp_path, *extra, models="m1", nopt=2):
    data = tmp_path / "table.csv"
    table.to_csv(data, index=False)
    out_dir = tmp_path / "runs"
    args = [
        "pairwise",
        "judge",
        "--data",
        str(data),
        "--models",
        models,
        "--reference-model",
        REF,
        "--judge",
        srv.spec(),
        "--nopt",
        str(nopt),
        "--out-dir",
        str(out_dir),
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--quiet",
        "--num-bootstrap",
        "20",
        *extra,
    ]
    result = CliRunner().invoke(app, args)
    folders = sorted(out_dir.iterdir()) if out_dir.exists() else []
    return result, folders


def _comparisons(folder):
    return [json.loads(line) for line in (folder / "comparisons.jsonl").read_text().splitlines()]


def _get(records, type, **params):
    found = [
        r
        for r in records
        if r["type"] == type and all(r["parameters"].get(k) == v for k, v in params.items())
    ]
    assert len(found) == 1, (type, params, found)
    return found[0]


@pytest.mark.parametrize(
    "nopt, rules, consistent, win_both_good",
    [
        # m1 is better on q0; a first-position judge on q1 is inconsistent.
        (2, ["quality", "first", "second"], 2, 1.0),
        # both good on q1 (C, C) is consistent; q0 a win.
        (3, ["quality", "both", "first"], 4, 1.0),
        # neither good (D, D) is consistent, and neither a win nor "both good".
        (4, ["quality", "neither", "both"], 6, 4 / 6),
    ],
)
def test_every_option_count(judge_server, tmp_path, nopt, rules, consistent, win_both_good):
    srv = judge_server()
    table = make_table(rules, {"m1": [3, 3, 3], REF: [1, 1, 1]})
    result, (folder,) = _judge(srv, table, tmp_path, nopt=nopt)
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert srv.calls == 2 * len(rules)
    assert _get(records, "ConsistencyRate")["parameters"]["consistent"] == consistent
    wb = _get(records, "WinRate", counting="win+bothgood", task="Overall-lang", model="m1")
    assert wb["value"] == pytest.approx(win_both_good)
    log = (folder / "log.txt").read_text()
    assert f"Total comparisons: {2 * len(rules)}. Non exact matches:  {2 * len(rules)}" in log
    assert (f"{consistent} out of {2 * len(rules)} answers are consistent" in log) == (
        consistent < 2 * len(rules)
    )
    record_tsv = pd.read_csv(folder / f"record_fake-model_{nopt}.tsv", sep="\t")
    assert list(record_tsv.columns)[-1] == "fake-model" and len(record_tsv) == 2 * len(rules)


def test_tie_rule_in_the_new_win_rates(judge_server, tmp_path):
    srv = judge_server()
    table = make_table(["quality", "first"], {"m1": [3, 3], REF: [1, 1]})
    result, _ = _judge(srv, table, tmp_path)
    records = json.loads(result.stdout)
    with_tie = _get(records, "WinRateWithTie", model="m1", opponent=REF, metric="general")
    without = _get(records, "WinRateWithoutTie", model="m1", opponent=REF, metric="general")
    # q0: two wins (both orders); q1 inconsistent: a tie on both orders. tot = 4.
    assert with_tie["value"] == pytest.approx((2 + 0.5 * 2) / 4)
    assert without["value"] == pytest.approx(2 / 2)
    debiased = _get(records, "WinRate", counting="debiased", model="m1", opponent=REF)
    assert debiased["value"] == pytest.approx(0.75)


def test_extraction_failures_are_counted_not_guessed(judge_server, tmp_path):
    srv = judge_server()
    table = make_table(["quality", "garbage", "letter:C"], {"m1": [3] * 3, REF: [1] * 3})
    result, (folder,) = _judge(srv, table, tmp_path)
    assert result.exit_code == 0, result.output
    ext = _get(json.loads(result.stdout), "ExtractionRate")
    assert (ext["parameters"]["extracted"], ext["parameters"]["compared"]) == (2, 6)
    rows = _comparisons(folder)
    reasons = sorted({r["reason"] for r in rows if r["status"] == "unparsed"})
    assert reasons == [
        "no 'Choice: X' in the reply",
        "option C is not one of the 2 options offered",
    ]
    assert (
        "Extracted 2 answers from the responses (extraction success rate 33.33%)"
        in (folder / "log.txt").read_text()
    )


def test_identical_answers_are_exact_matches_and_never_sent(judge_server, tmp_path):
    srv = judge_server()
    table = make_table(["quality", "quality"], {"m1": [3, 3], REF: [1, 1]})
    table.loc[1, f"answer-{REF}"] = "  " + table.loc[1, "answer-m1"] + "\n"
    result, (folder,) = _judge(srv, table, tmp_path)
    assert result.exit_code == 0, result.output
    assert srv.calls == 2
    rows = _comparisons(folder)
    assert [r["status"] for r in rows].count("em") == 2
    tsv = pd.read_csv(folder / "record_fake-model_2.tsv", sep="\t")
    assert list(tsv["fake-model"].iloc[-2:]) == ["EM", "EM"]  # exact matches last
    assert "Non exact matches:  2" in (folder / "log.txt").read_text()


@pytest.mark.parametrize("seed", [2680, 7, -7])
def test_random_mode_orders_follow_the_seed_as_the_original(judge_server, tmp_path, seed):
    srv = judge_server()
    n = 12
    table = make_table(["quality"] * n, {"m1": [3] * n, "m2": [2] * n, REF: [1] * n})
    result, (folder,) = _judge(
        srv, table, tmp_path, "--mode", "random", "--seed", str(seed), models="m1,m2"
    )
    assert result.exit_code == 0, result.output
    assert srv.calls == 2 * n
    rows = _comparisons(folder)
    for model in ("m1", "m2"):
        draws = np.random.RandomState(abs(seed)).random_sample(n)
        first, second = (model, REF) if seed < 0 else (REF, model)
        expected = [(first, second) if u < 0.5 else (second, first) for u in draws]
        got = [(r["model_a"], r["model_b"]) for r in rows if model in (r["model_a"], r["model_b"])]
        assert got == expected
    again, folders = _judge(
        srv, table, tmp_path, "--mode", "random", "--seed", str(seed), models="m1,m2"
    )
    assert again.exit_code == 0 and len(folders) == 2  # a new folder; the first is kept
    assert srv.calls == 2 * n  # everything came from the cache


def test_failed_calls_are_reported_and_retried_on_the_next_run(judge_server, tmp_path):
    table = make_table(["quality"], {"m1": [3], REF: [1]})
    t = read_table(table, models=["m1"], reference_model=REF)
    items = judge_items(build_comparisons(t, ["m1"], REF), nopt=2)
    first_prompt = items[0].messages[-1]["content"]
    srv = judge_server(plan={first_prompt: ["400"]})  # a non-retryable error, once
    result, (folder,) = _judge(srv, table, tmp_path)
    assert result.exit_code == 1
    assert "Failed to response: 1" in (folder / "log.txt").read_text()
    assert [r["status"] for r in _comparisons(folder)].count("failed") == 1
    srv.reset()
    again, _ = _judge(srv, table, tmp_path)
    assert again.exit_code == 0, again.output
    assert srv.calls == 1 and srv.per_prompt[first_prompt] == 1  # only the failed one again


def test_devbench_input_table_gives_the_original_comparison_counts(judge_server, tmp_path):
    """The original's run on this table: 80 comparisons, 72 not exact matches (the reference
    was also in its --model list, so its 8 comparisons with itself are exact matches)."""
    from pathlib import Path

    data = (
        Path(__file__).resolve().parents[1] / "data" / "devbench" / "DevBench_projects_example.xlsx"
    )
    models = [c[len("answer-") :] for c in pd.read_excel(data).columns if c.startswith("answer-")]
    srv = judge_server()
    result = CliRunner().invoke(
        app,
        [
            "pairwise",
            "judge",
            "--data",
            str(data),
            "--models",
            ",".join(models),
            "--reference-model",
            "gpt-3.5-turbo-1106",
            "--judge",
            srv.spec(),
            "--quiet",
            "--out-dir",
            str(tmp_path / "runs"),
            "--cache",
            str(tmp_path / "c.sqlite"),
            "--num-bootstrap",
            "10",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = list((tmp_path / "runs").iterdir())
    log = (folder / "log.txt").read_text()
    assert "Total comparisons: 80. Non exact matches:  72" in log
    assert srv.calls == 72
    assert folder.name == "DevBench_projects_example_record0_fake-model_2"


def test_python_api_as_documented(judge_server):
    from assay.llm import Runner, load_model
    from assay.llm.pairwise import PairwiseEvaluator, judged_rows

    srv = judge_server()
    table = read_table(
        make_table(["quality", "first"], {"m1": [3, 3], "m2": [1, 5], REF: [2, 2]}),
        models=["m1", "m2"],
        reference_model=REF,
    )
    comparisons = build_comparisons(table, ["m1", "m2"], REF, mode="dual")
    items = judge_items(comparisons, nopt=2)
    records = Runner(load_model(srv.spec()), cache=None, quiet=True).run(items)
    rows = judged_rows(comparisons, records, judge="fake-model", nopt=2)
    ms = PairwiseEvaluator(reference_model=REF, nopt=2, num_bootstrap=20).add(rows).compute()
    ranks = {m.parameters["model"]: m.parameters["rank"] for m in ms.filter("BradleyTerryRating")}
    assert set(ranks) == {"m1", "m2", REF} and srv.calls == 8
    wr = ms.get("WinRate", counting="debiased", model="m1", opponent=REF)
    assert wr.value == pytest.approx(0.75)  # a win on q0, a position-bias tie on q1
