"""Log-likelihood answers on the real embedded model: equal to llama.cpp's own
log-probabilities of the chat-rendered prompt, and every suite answer valid."""

from __future__ import annotations

import asyncio
from importlib import resources

import pytest

from assay.llm import RunOptions, evaluate
from assay.llm.suites import CATSuite, FairnessSuite, LanguageSuite, load_fairness_data

pytestmark = pytest.mark.slow

SHIPPED = resources.files("assay.llm.suites").joinpath("data")


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("llama_cpp")
    from assay.llm import load_model

    return load_model("embedded", n_ctx=4096)


def test_embedded_loglik_equals_llamacpp_own_logprobs_of_the_chat_prompt(model):
    import llama_cpp

    msgs = [{"role": "user", "content": "Which city is the capital of France?"}]
    conts = [" Paris.", " Rome, I think.", ""]
    got = asyncio.run(model.loglik(msgs, conts, prefix="The capital is"))
    prompt = (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nWhich city is the capital of France?<|im_end|>\n"
        "<|im_start|>assistant\nThe capital is"
    )
    assert model.render(msgs) + "The capital is" == prompt  # the GGUF's own template
    ref = llama_cpp.Llama(
        model_path=str(model.model_path), n_ctx=1024, n_threads=1, logits_all=True, verbose=False
    )
    ctx = ref.tokenize(prompt.encode(), add_bos=True, special=True)
    for cont, score in zip(conts, got.options):
        whole = ref.tokenize((prompt + cont).encode(), add_bos=True, special=True)
        ref.reset()
        ref.eval(whole)
        lp = type(ref).logits_to_logprobs(ref.scores[: len(whole)])
        direct = sum(float(lp[i - 1, whole[i]]) for i in range(len(ctx), len(whole)))
        assert score.logprob == pytest.approx(direct, abs=1e-6)
        assert score.n_tokens == len(whole) - len(ctx)
    assert got.options[0].logprob > got.options[1].logprob


def _all_valid(run, n: int) -> None:
    assert run.status == "finished" and len(run.calls) == n
    assert run.paid_calls == n  # one call per item, no retry
    assert all(c.record.ok and c.parsed is not None for c in run.calls)


def test_cat_sample_in_loglik_mode_every_answer_valid(model, tmp_path):
    opts = RunOptions(cache=tmp_path / "c.sqlite", timeout=600)
    with resources.as_file(SHIPPED.joinpath("cat_dev.sample.json")) as path:
        run = evaluate(CATSuite(str(path)), model, opts)
        assert run.parameters["answer_mode"] == "loglik"  # the embedded model's default
        _all_valid(run, 16)
        counts = run.metrics.get("CATCounts", scope="general").value
        assert counts["other"] == 0 and counts["errors"] == 0  # valid-answer rate 100%
        again = evaluate(CATSuite(str(path)), model, opts)
    assert again.paid_calls == 0 and again.metrics == run.metrics


def test_pisa_sample_in_loglik_mode_every_answer_valid(model, tmp_path):
    data = load_fairness_data("pisa", sample=True)
    run = evaluate(FairnessSuite(data, max_queries=2), model, RunOptions(cache=False, timeout=900))
    _all_valid(run, 4)  # two rows and their counterfactuals, one round
    for m in run.metrics.filter("ResponseCounts"):
        assert m.value == {"valid": 2, "invalid": 0, "errors": 0}


def test_exam_sample_in_loglik_mode_every_answer_valid(model, tmp_path):
    with resources.as_file(SHIPPED.joinpath("exam.sample.csv")) as path:
        run = evaluate(LanguageSuite(str(path)), model, RunOptions(cache=False, timeout=600))
    _all_valid(run, 16)
    assert run.metrics.get("FormatErrorRate", language="all").value == 0.0
    counts = run.metrics.get("LanguageCounts", language="all").value
    assert counts["invalid"] == 0 and counts["correct"] + counts["incorrect"] == 16
