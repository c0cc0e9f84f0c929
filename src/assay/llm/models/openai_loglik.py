"""Log-likelihoods from an OpenAI-compatible server: the request bodies and their parsing.

Two ways to ask, chosen by the model option ``loglik`` (:func:`~assay.llm.models.spec.
load_model`):

* ``completions`` (vLLM, llama.cpp's server, any server with ``echo``): one
  ``POST /v1/completions`` with every option as one prompt (``prompt + continuation``),
  ``echo: true``, ``logprobs: 1``, ``max_tokens: 1``, ``temperature: 0``, as
  lm-evaluation-harness asks. The server returns the log-probability of every prompt
  token; an option's log-likelihood is the sum over the tokens whose ``text_offset`` is
  at or after the end of the prompt and before the end of the option (the one generated
  token is left out). A token that starts inside the prompt counts as prompt. The
  completions endpoint applies no chat template, so the prompt is the messages' contents
  joined by a blank line, then the assistant ``prefix`` (lm-eval's plain-text prompt).
* ``chat`` (chat-only servers): one chat request with ``logprobs: true``,
  ``top_logprobs: 20``, ``max_tokens: 1``. Only single-token *labels* can be scored: a
  label's log-probability is that of the first reply token, summed (log-sum-exp) over
  the returned tokens that equal the label once surrounding whitespace is stripped
  (``"H"`` and ``" H"``). A label that is not among the 20 returned gets the smallest
  returned log-probability, an upper bound, and its :class:`OptionScore` says
  ``bound=True`` (the parsed results and the item rows keep it).

Example:
    >>> body = completions_body("m", "Q: 2+2? A:", [" 4", " 5"])
    >>> body["prompt"], body["echo"]
    (['Q: 2+2? A: 4', 'Q: 2+2? A: 5'], True)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from assay.llm.models.base import CallError, LoglikResponse, Message, OptionScore, Usage

__all__ = [
    "LOGLIK_MODES",
    "plain_prompt",
    "completions_body",
    "parse_completions",
    "chat_body",
    "parse_chat",
]

#: The values of the model option ``loglik`` -> what they can score.
LOGLIK_MODES = {"completions": "full", "chat": "labels"}
TOP_LOGPROBS = 20


def plain_prompt(messages: Sequence[Message]) -> str:
    """The messages' contents joined by a blank line (no chat template).

    Example:
        >>> plain_prompt([{"role": "system", "content": "Be brief."},
        ...               {"role": "user", "content": "Hi?"}])
        'Be brief.\\n\\nHi?'
    """
    return "\n\n".join(str(m.get("content", "")) for m in messages)


def completions_body(model: str, prompt: str, continuations: Sequence[str]) -> dict[str, Any]:
    """The ``/v1/completions`` request scoring every continuation after ``prompt``."""
    return {
        "model": model,
        "prompt": [prompt + c for c in continuations],
        "echo": True,
        "logprobs": 1,
        "max_tokens": 1,
        "temperature": 0,
    }


def _load(body: bytes | str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise CallError("bad_response", f"answer is not JSON ({e})", retryable=True) from None
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise CallError("bad_response", "answer has no choices")
    return data


def _usage(data: dict[str, Any]) -> Usage:
    u = data.get("usage")
    try:
        return Usage.from_dict(u if isinstance(u, dict) else None)
    except (TypeError, ValueError):
        return Usage()


def parse_completions(
    body: bytes | str, prompt: str, continuations: Sequence[str], latency: float
) -> LoglikResponse:
    """One :class:`OptionScore` per continuation from an echoed completions answer."""
    data = _load(body)
    by_index = {c.get("index", i): c for i, c in enumerate(data["choices"]) if isinstance(c, dict)}
    start = len(prompt)
    out = []
    for i, cont in enumerate(continuations):
        lp = (by_index.get(i) or {}).get("logprobs")
        if not isinstance(lp, dict) or not all(
            isinstance(lp.get(k), list) for k in ("token_logprobs", "text_offset")
        ):
            raise CallError("bad_response", f"choice {i} has no echoed token_logprobs")
        end = start + len(cont)
        tops = lp.get("top_logprobs") or [None] * len(lp["token_logprobs"])
        total, n, greedy = 0.0, 0, True
        for value, offset, top in zip(lp["token_logprobs"], lp["text_offset"], tops):
            if offset < start or offset >= end:
                continue
            if value is None:
                raise CallError("bad_response", f"choice {i}: a continuation token has no logprob")
            total += float(value)
            n += 1
            if isinstance(top, dict) and top:
                greedy = greedy and float(value) >= max(float(v) for v in top.values()) - 1e-9
        out.append(OptionScore(total, n, len(cont.encode("utf-8")), greedy))
    return LoglikResponse(tuple(out), _usage(data), latency, data)


def chat_body(model: str, messages: Sequence[Message]) -> dict[str, Any]:
    """The chat request asking for the first reply token's ``top_logprobs``."""
    return {
        "model": model,
        "messages": [dict(m) for m in messages],
        "logprobs": True,
        "top_logprobs": TOP_LOGPROBS,
        "max_tokens": 1,
        "temperature": 0,
    }


def parse_chat(body: bytes | str, labels: Sequence[str], latency: float) -> LoglikResponse:
    """One :class:`OptionScore` per single-token label from a chat answer's ``top_logprobs``."""
    data = _load(body)
    try:
        first = data["choices"][0]["logprobs"]["content"][0]
        tops = [(str(t["token"]), float(t["logprob"])) for t in first["top_logprobs"]]
        chosen = str(first["token"])
    except (KeyError, IndexError, TypeError, ValueError):
        raise CallError("bad_response", "answer has no logprobs.content[0].top_logprobs") from None
    if not tops:
        raise CallError("bad_response", "answer has an empty top_logprobs")
    floor = min(v for _, v in tops)
    out = []
    for label in labels:
        hits = [v for t, v in tops if t.strip() == label.strip()]
        if hits:
            top = max(hits)
            value = top + math.log(sum(math.exp(v - top) for v in hits))
            greedy = chosen.strip() == label.strip()
            out.append(OptionScore(value, 1, len(label.encode("utf-8")), greedy))
        else:
            out.append(OptionScore(floor, 1, len(label.encode("utf-8")), False, bound=True))
    return LoglikResponse(tuple(out), _usage(data), latency, data)
