"""Log-likelihood answers over HTTP (a real loopback server with known log-probabilities),
the runner's cache for them, the answer modes of the suites, and the prefix order."""

from __future__ import annotations

import asyncio
import json
import math
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.llm import RunOptions, evaluate, load_model
from assay.llm.driver import _run_ordered, prefix_order
from assay.llm.items import Item
from assay.llm.models.base import ChatResponse, LoglikResponse, Usage
from assay.llm.runner import Runner
from assay.llm.suites import CATSuite, FairnessSuite, LanguageSuite, load_fairness_data
from assay.store import Store
from assay.testing.llm_answers import toy_token_logprobs

SUITES = Path(__file__).resolve().parents[1] / "suites"
sys.path.insert(0, str(SUITES))
from suitekit import CAT_DEV, EXAM, TOY  # noqa: E402


def _direct(prompt: str, continuation: str) -> float:
    """The continuation's log-likelihood computed directly from the server's known token
    log-probabilities: the tokens of ``prompt + continuation`` past the prompt's tokens."""
    ctx = len(toy_token_logprobs(prompt))
    return sum(v for _, v in toy_token_logprobs(prompt + continuation)[ctx:])


def test_completions_loglik_equals_the_direct_sum(chat_server):
    srv = chat_server()
    model = load_model(srv.spec(), loglik="completions")
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital?"}]
    conts = [" Paris", " Rome and more words", " Berlin."]
    got = asyncio.run(model.loglik(msgs, conts, prefix="It is"))
    prompt = "Be brief.\n\nCapital?It is"
    assert srv.calls == 1 and srv.requests[0]["echo"] is True
    assert srv.requests[0]["prompt"] == [prompt + c for c in conts]
    for c, o in zip(conts, got.options):
        assert o.logprob == pytest.approx(_direct(prompt, c), abs=1e-6)
        assert o.n_tokens == len(c.split()) and o.n_bytes == len(c.encode())
        assert not o.bound
    assert got.options[0].logprob != got.options[2].logprob


def test_chat_loglik_scores_labels_from_top_logprobs_and_flags_the_bound(chat_server):
    tops = [(" H", -0.5), ("H", -1.5), ("L", -2.0), ("x", -6.0)]
    srv = chat_server(top_logprobs=lambda messages: tops)
    model = load_model(srv.spec(), loglik="chat")
    got = asyncio.run(model.loglik([{"role": "user", "content": "H or L?"}], ["L", "H", "Q"]))
    req = srv.requests[0]
    assert (req["logprobs"], req["top_logprobs"], req["max_tokens"]) == (True, 20, 1)
    low, high, missing = got.options
    assert high.logprob == pytest.approx(math.log(math.exp(-0.5) + math.exp(-1.5)), abs=1e-9)
    assert high.greedy and not high.bound
    assert low.logprob == pytest.approx(-2.0) and not low.greedy
    assert missing.bound and missing.logprob == pytest.approx(-6.0)


def test_a_model_without_logprobs_refuses_loglik_before_any_call(chat_server, tmp_path):
    srv = chat_server()
    suite = CATSuite(str(CAT_DEV), answer_mode="loglik")
    with pytest.raises(InvalidInputError, match="no log-probabilities"):
        evaluate(suite, srv.spec(), RunOptions(cache=False))
    chat_only = CATSuite(str(CAT_DEV), answer_mode="loglik")
    with pytest.raises(InvalidInputError, match="single-token labels"):
        evaluate(chat_only, srv.spec(), RunOptions(cache=False, loglik="chat"))
    with pytest.raises(InvalidInputError, match="loglik"):
        load_model(srv.spec(), loglik="logits")
    assert srv.calls == 0


def test_cat_loglik_picks_the_most_likely_sentence_and_is_never_paid_twice(chat_server, tmp_path):
    srv = chat_server()
    cache = tmp_path / "c.sqlite"
    opts = RunOptions(cache=cache, loglik="completions")
    run = evaluate(CATSuite(str(CAT_DEV), answer_mode="loglik"), srv.spec(), opts)
    assert run.status == "finished" and run.parameters["answer_mode"] == "loglik"
    assert srv.calls == len(run.calls) > 0
    for c in run.calls:
        spec = c.item.params["loglik"]
        direct = [_direct(srv_prompt(c.item, spec["prefix"]), x) for x in spec["continuations"]]
        assert c.parsed["logprobs"] == pytest.approx(direct, abs=1e-6)
        best = max(range(len(direct)), key=lambda i: (direct[i], -i))
        assert c.parsed["outcome"] == c.info["labels"][best]
    counts = run.metrics.get("CATCounts", scope="general", answer_mode="loglik").value
    assert counts["other"] == 0 and counts["errors"] == 0
    again = evaluate(CATSuite(str(CAT_DEV), answer_mode="loglik_norm"), srv.spec(), opts)
    assert srv.calls == len(run.calls)  # loglik_norm: the same calls, all from the cache
    assert all(c.record.cached for c in again.calls)
    assert again.metrics.get("LMS", scope="general").parameters["answer_mode"] == "loglik_norm"


def srv_prompt(item: Item, prefix: str) -> str:
    return "\n\n".join(m["content"] for m in item.messages) + prefix


def test_fairness_and_exams_in_loglik_mode_answer_every_call(chat_server):
    srv = chat_server(top_logprobs=lambda messages: [("Y", -0.2), ("N", -1.9)])
    data = load_fairness_data(str(TOY))
    run = evaluate(FairnessSuite(data), srv.spec(), RunOptions(cache=False, loglik="chat"))
    assert run.parameters["answer_mode"] == "loglik"  # the default, the server gives labels
    rows = [c for c in run.calls if not c.info["counterfactual"]]
    assert len(run.calls) == 2 * len(rows) == srv.calls
    assert all(c.parsed["valid"] and c.parsed["predicted"] for c in run.calls)
    counts = [m for m in run.metrics.filter("ResponseCounts")]
    assert all(m.value["invalid"] == 0 and m.value["errors"] == 0 for m in counts)
    exam = evaluate(LanguageSuite(str(EXAM)), srv.spec(), RunOptions(cache=False))
    assert exam.parameters["answer_mode"] == "generate"  # no loglik option: generate
    srv2 = chat_server()
    exam = evaluate(
        LanguageSuite(str(EXAM), answer_mode="loglik"),
        srv2.spec(),
        RunOptions(cache=False, loglik="completions"),
    )
    assert exam.metrics.get("FormatErrorRate", language="all").value == 0.0
    for c in exam.calls:  # the pick is the option whose text scores best in the reply
        spec = c.item.params["loglik"]
        direct = [_direct(srv_prompt(c.item, spec["prefix"]), x) for x in spec["continuations"]]
        best = max(range(len(direct)), key=lambda i: (direct[i], -i))
        assert c.parsed["choice"] == c.info["options"][c.info["order"][best]]


def test_cli_answer_mode_is_in_the_records_and_the_store(chat_server, tmp_path):
    srv = chat_server()
    out, db = tmp_path / "out.json", tmp_path / "s.db"
    args = ["llm", "cat", "--data", str(CAT_DEV), "--model", srv.spec(), "--no-cache",
            "--answer-mode", "loglik", "--loglik", "completions", "--out", str(out),
            "--db", str(db)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert all(r["parameters"]["answer_mode"] == "loglik" for r in json.loads(out.read_text()))
    with Store(str(db)) as store:
        (ev,) = store.list(kind="llm_cat")
        assert store.get(ev.id).parameters["answer_mode"] == "loglik"
    bad = CliRunner().invoke(app, [*args[:6], "--answer-mode", "logits"])
    assert bad.exit_code == 2 and "--answer-mode" in bad.output
    dry = CliRunner().invoke(app, [*args[:6], "--answer-mode", "loglik", "--dry-run", "1"])
    assert dry.exit_code == 0 and "scored after" in dry.output
    calls = srv.calls
    refused = CliRunner().invoke(app, [*args[:6], "--no-cache", "--answer-mode", "loglik"])
    assert refused.exit_code == 2 and "no log-probabilities" in refused.output
    assert srv.calls == calls  # refused before any call


class _Recorder:
    """A model that answers the prompt back and notes the order of its calls."""

    name = spec = identity = "recorder"

    def __init__(self) -> None:
        self.order: list[str] = []

    async def chat(self, messages, **params):
        self.order.append(messages[-1]["content"])
        return ChatResponse(messages[-1]["content"], Usage(1, 1), 0.0)


def test_prefix_order_runs_shared_prefixes_together_and_returns_records_in_item_order():
    prompts = ["b-2", "a-1", "b-1", "a-2", "c"]
    items = [Item.from_prompt(f"i{k}", p) for k, p in enumerate(prompts)]
    model = _Recorder()
    records = _run_ordered(Runner(model, cache=None, quiet=True, max_concurrency=1), items)
    assert model.order == sorted(prompts)
    assert [r.id for r in records] == [it.id for it in items]
    assert [r.text for r in records] == prompts
    assert [prompts[i] for i in prefix_order(items)] == sorted(prompts)


def test_loglik_response_round_trips_through_the_cache_text():
    from assay.llm.models.base import OptionScore

    r = LoglikResponse((OptionScore(-1.5, 2, 3, False, bound=True),), Usage(4, 0), 0.2)
    back = LoglikResponse.from_text(r.to_chat().text)
    assert back.options == r.options
