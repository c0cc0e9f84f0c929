"""Log-likelihoods of options on the embedded model against llama.cpp's own log-probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from assay.llm.models.llama_loglik import LlamaLoglik, log_softmax_at

pytestmark = pytest.mark.slow

PROMPT = (
    "<|im_start|>user\nWhich city is the capital of France? Options: Paris, Rome."
    "<|im_end|>\n<|im_start|>assistant\nThe answer is:"
)
OPTIONS = [" Paris", " Rome", " Berlin, of course, the big city", ""]


@pytest.fixture(scope="module")
def llamas():
    llama_cpp = pytest.importorskip("llama_cpp")
    from assay.llm.models.embedded import default_gguf_path

    path = str(default_gguf_path())
    mine = llama_cpp.Llama(model_path=path, n_ctx=1024, n_threads=1, verbose=False)
    ref = llama_cpp.Llama(model_path=path, n_ctx=1024, n_threads=1, verbose=False, logits_all=True)
    return mine, ref


def _reference(ref, prompt: str, option: str) -> float:
    """llama.cpp's own logits of every position (logits_all), its own log-softmax."""
    whole = ref.tokenize((prompt + option).encode(), add_bos=True, special=True)
    ctx = ref.tokenize(prompt.encode(), add_bos=True, special=True)
    ref.reset()
    ref.eval(whole)
    lp = type(ref).logits_to_logprobs(ref.scores[: len(whole)])
    return sum(float(lp[i - 1, whole[i]]) for i in range(len(ctx), len(whole)))


def test_option_logprobs_equal_llamacpp_own(llamas):
    mine, ref = llamas
    got = LlamaLoglik(mine).score(PROMPT, OPTIONS)
    for option, score in zip(OPTIONS, got):
        assert score.logprob == pytest.approx(_reference(ref, PROMPT, option), abs=1e-6)
        assert score.n_bytes == len(option.encode())
    assert got[3].n_tokens == 0 and got[3].logprob == 0.0
    assert got[2].n_tokens > 3 and got[0].logprob > got[2].logprob


def test_reused_prefix_gives_the_same_numbers_in_any_order(llamas):
    mine, _ = llamas
    scorer = LlamaLoglik(mine)
    first = [s.logprob for s in scorer.score(PROMPT, OPTIONS)]
    other = PROMPT.replace("France", "Italy")
    scorer.score(other, OPTIONS)  # the context now holds another prompt
    again = [s.logprob for s in scorer.score(PROMPT, OPTIONS[::-1])][::-1]
    assert again == pytest.approx(first, abs=1e-9)


def test_log_softmax_at_matches_a_direct_computation():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=50).astype(np.float32)
    v, top = log_softmax_at(logits, 7)
    x = logits.astype(np.float64)
    assert v == pytest.approx(x[7] - np.log(np.exp(x).sum()), abs=1e-12)
    assert top == (int(np.argmax(x)) == 7)
