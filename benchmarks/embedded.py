"""The embedded model on the suites: assay's calls against llama-cpp-python's own, same run.

For CAT, PISA (LLM fairness) and the language exams, on the samples shipped with assay,
in each answer mode:

* **assay**: the suite run through the one driver (``assay.llm.evaluate``, no cache), the
  embedded model (SmolLM2-135M-Instruct) with ``--threads`` threads;
* **llama.cpp**: the same prompts through ``llama_cpp.Llama`` called directly in a loop,
  one instance with the same threads: ``create_chat_completion`` with the same
  parameters for ``generate``; for ``loglik``, each option by ``create_completion(prompt
  + option, echo=True, logprobs=1, max_tokens=1)`` (llama-cpp-python's own route to
  log-probabilities, what its server answers on ``/v1/completions``; it needs
  ``logits_all=True``), the option's log-likelihood summed over its echoed tokens.

Printed per suite and mode: items, seconds per item, prompt tokens/s (prompt tokens the
calls read, over wall time: reused prefixes count, as they are what a prompt costs
without reuse), generated tokens/s, wall and CPU seconds, and for loglik how many picks
agree between the two. A thread section first times one 200-token prompt decode at 1 and
2 threads (``n_threads`` and ``n_threads_batch``), the measurement behind the default.

    python benchmarks/embedded.py [--threads 1] [--cat 8] [--pisa 1] [--exam 8]
        [--suites cat,pisa,exam] [--modes generate,loglik] [--no-threads-section]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

from assay.llm import RunOptions, evaluate, load_model
from assay.llm.models.base import LOGLIK_PARAM
from assay.llm.models.embedded import EMBEDDED_DEFAULTS, default_gguf_path
from assay.llm.suites import CATSuite, FairnessSuite, LanguageSuite, load_fairness_data
from assay.llm.suites.base import Suite

DATA = resources.files("assay.llm.suites").joinpath("data")


def clocked(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def threads_section(path: str) -> None:
    import llama_cpp

    print("prompt decode, 200 tokens (n_threads = n_threads_batch):")
    for n in (1, 2, 1, 2):
        llm = llama_cpp.Llama(
            model_path=path, n_ctx=512, n_threads=n, n_threads_batch=n, verbose=False
        )
        toks = llm.tokenize(b"The quick brown fox jumps over the lazy dog. " * 25)[:200]
        llm.eval(toks[:8])
        llm.reset()
        _, wall, cpu = clocked(lambda llm=llm, toks=toks: llm.eval(toks))
        print(f"  threads={n}: {len(toks) / wall:7.1f} tok/s  wall {wall:5.2f} s  cpu {cpu:5.2f} s")
        del llm


def suites(args: argparse.Namespace) -> dict[str, Callable[[str], Suite]]:
    with resources.as_file(DATA.joinpath("cat_dev.sample.json")) as p:
        cat = str(p)
    with resources.as_file(DATA.joinpath("exam.sample.csv")) as p:
        exam = str(p)
    pisa = load_fairness_data("pisa", sample=True)
    return {
        "cat": lambda mode: CATSuite(cat, max_queries=args.cat, answer_mode=mode),
        "pisa": lambda mode: FairnessSuite(pisa, max_queries=args.pisa, answer_mode=mode),
        "exam": lambda mode: LanguageSuite(exam, max_queries=args.exam, answer_mode=mode),
    }


def peer_generate(llm: Any, calls: list[Any]) -> tuple[int, int]:
    p = c = 0
    for call in calls:
        params = {**EMBEDDED_DEFAULTS, **call.item.params}
        out = llm.create_chat_completion(messages=[dict(m) for m in call.item.messages], **params)
        p += out["usage"]["prompt_tokens"]
        c += out["usage"]["completion_tokens"]
    return p, c


def peer_loglik(llm: Any, render: Callable[[Any], str], calls: list[Any]) -> tuple[int, int]:
    """Every option scored by llama-cpp-python's echo route; returns (prompt tokens, picks
    that agree with assay's)."""
    tokens = agree = 0
    for call in calls:
        spec = call.item.params[LOGLIK_PARAM]
        prompt = render(call.item.messages) + spec["prefix"]
        scores = []
        n_prompt = len(llm.tokenize(prompt.encode(), special=True))
        for cont in spec["continuations"]:
            out = llm.create_completion(
                prompt + cont, max_tokens=1, echo=True, logprobs=1, temperature=0
            )
            tokens += out["usage"]["prompt_tokens"]
            # the option's tokens: lm-eval's split, counted in tokens (llama-cpp-python's
            # text_offset skips the chat template's special tokens, so offsets cannot say)
            # and its lists leave those tokens out: count from the end, before the
            # generated token if there is one (none when the model stops at once)
            k = len(llm.tokenize((prompt + cont).encode(), special=True)) - n_prompt
            values = out["choices"][0]["logprobs"]["token_logprobs"]
            end = len(values) - out["usage"]["completion_tokens"]
            scores.append(float(sum(values[end - k : end])))
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        agree += best == max(range(len(scores)), key=lambda i: (call.parsed["logprobs"][i], -i))
    return tokens, agree


def line(who: str, n: int, wall: float, cpu: float, p: int, c: int, extra: str = "") -> None:
    print(
        f"    {who:10s} {n:3d} items  {wall / max(n, 1):6.2f} s/item  prompt {p / wall:7.1f} "
        f"tok/s  generated {c / wall:6.1f} tok/s  wall {wall:6.1f} s  cpu {cpu:6.1f} s{extra}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--threads", type=int, default=None, help="default: the model's own")
    ap.add_argument("--cat", type=int, default=8)
    ap.add_argument("--pisa", type=int, default=1)
    ap.add_argument("--exam", type=int, default=8)
    ap.add_argument("--modes", default="generate,loglik")
    ap.add_argument("--suites", default="cat,pisa,exam")
    ap.add_argument("--no-threads-section", action="store_true")
    args = ap.parse_args()

    import llama_cpp

    path = str(default_gguf_path())
    if not args.no_threads_section:
        threads_section(path)
    model = load_model("embedded", n_threads=args.threads).load()  # type: ignore[attr-defined]
    n = model.n_threads
    gen = llama_cpp.Llama(
        model_path=path, n_ctx=4096, n_threads=n, n_threads_batch=n, verbose=False
    )
    echo = llama_cpp.Llama(
        model_path=path, n_ctx=2048, n_threads=n, n_threads_batch=n, logits_all=True, verbose=False
    )
    print(f"suites on {model.name}, {n} thread(s), no cache:")
    for name, make in suites(args).items():
        if name not in args.suites.split(","):
            continue
        for mode in args.modes.split(","):
            run, wall, cpu = clocked(
                lambda make=make, mode=mode: evaluate(make(mode), model, RunOptions(cache=False))
            )
            calls = [c for c in run.calls if c.record.ok]
            p = sum(c.record.usage.prompt_tokens or 0 for c in calls)
            c = sum(c.record.usage.completion_tokens or 0 for c in calls)
            print(f"  {name} / {mode}:")
            line("assay", len(run.calls), wall, cpu, p, c)
            if mode == "generate":
                (pp, pc), w2, c2 = clocked(lambda calls=calls: peer_generate(gen, calls))
                line("llama.cpp", len(calls), w2, c2, pp, pc)
            else:
                (pp, agree), w2, c2 = clocked(
                    lambda calls=calls: peer_loglik(echo, model.render, calls)
                )
                line("llama.cpp", len(calls), w2, c2, pp, 0, f"  same pick {agree}/{len(calls)}")
            print(f"    ratio      llama.cpp wall / assay wall = {w2 / wall:.2f}")


if __name__ == "__main__":
    main()
