"""What :class:`~assay.testing.llm.FakeChatServer` answers: the JSON bodies, as pure functions.

The server (:mod:`assay.testing.llm`) decides *whether* and *when* a call is answered
(its plan of faults, latency, counters); this module says *what* an answer holds, in
the shapes OpenAI-compatible servers send: a chat completion (with the first reply
token's ``top_logprobs`` when asked), and a text completion with ``echo`` and
``logprobs`` (every prompt token scored, as vLLM and llama.cpp's server do). The
log-probabilities come from a toy tokenizer and language model,
:func:`toy_token_logprobs`, unless a test scripts its own.

Example:
    >>> body = chat_completion("hi there", [{"role": "user", "content": "hello"}],
    ...                        model="m", number=1)
    >>> body["model"], body["choices"][0]["message"]["content"], body["usage"]["total_tokens"]
    ('m', 'hi there', 3)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["toy_token_logprobs", "chat_completion", "chat_logprobs", "text_completion"]

#: ``text -> [(token, logprob), ...]``: how a prompt is split and scored.
TokenLogprobs = Callable[[str], list[tuple[str, float]]]


def toy_token_logprobs(text: str) -> list[tuple[str, float]]:
    """A toy tokenizer and language model: words with their leading whitespace, each with a
    fixed log-probability from its CRC-32 (in [-5.9, -1.0]).

    Example:
        >>> toy_token_logprobs("Hi there")[1][0]
        ' there'
    """
    import re
    import zlib

    tokens = re.findall(r"\s*\S+|\s+$", text)
    return [(t, -1.0 - (zlib.crc32(t.encode("utf-8")) % 50) / 10.0) for t in tokens]


def chat_logprobs(text: str, tops: list[tuple[str, float]] | None = None) -> dict[str, Any]:
    """The ``logprobs`` of a chat reply's first token: its ``top_logprobs`` are ``tops``
    (default: the reply's first word and two others); the chosen token is the likeliest.

    Example:
        >>> chat_logprobs("Yes", [("Yes", -0.2), ("No", -1.9)])["content"][0]["token"]
        'Yes'
    """
    first = text.split()[0] if text.split() else text
    if tops is None:
        tops = [(first, -0.1), (" " + first, -2.5), ("\n", -4.0)]
    chosen = max(tops, key=lambda tv: tv[1])[0] if tops else first
    entries = [{"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in tops]
    top_value = max((v for _, v in tops), default=0.0)
    return {"content": [{"token": chosen, "logprob": top_value, "top_logprobs": entries}]}


def chat_completion(
    text: str,
    messages: Sequence[dict[str, Any]],
    *,
    model: str,
    number: int,
    logprobs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` answering ``messages`` with ``text`` (``number`` names it:
    ``chatcmpl-<number>``); token counts are word counts."""
    p = sum(len(str(m.get("content", "")).split()) for m in messages)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": p,
            "completion_tokens": len(text.split()),
            "total_tokens": p + len(text.split()),
        },
    }


def text_completion(
    prompts: Sequence[str], *, model: str, token_logprobs: TokenLogprobs = toy_token_logprobs
) -> dict[str, Any]:
    """A ``text_completion`` with ``echo`` and ``logprobs``: each prompt echoed with every
    token's log-probability and ``text_offset`` (none for the first token, as servers
    answer), then one generated token (``" <gen>"``).

    Example:
        >>> c = text_completion(["Hi there"], model="m")["choices"][0]
        >>> c["text"], c["logprobs"]["tokens"], c["logprobs"]["token_logprobs"][0]
        ('Hi there <gen>', ['Hi', ' there', ' <gen>'], None)
    """
    choices = []
    for i, prompt in enumerate(prompts):
        pairs = [*token_logprobs(prompt), (" <gen>", -0.25)]  # + one generated token
        offsets = [sum(len(t) for t, _ in pairs[:k]) for k in range(len(pairs))]
        values: list[float | None] = [v for _, v in pairs]
        values[0] = None  # no log-probability for the first token, as servers answer
        tops = [None] + [{t: max(v, -1.0)} for t, v in pairs[1:]]
        logprobs = {
            "tokens": [t for t, _ in pairs],
            "token_logprobs": values,
            "text_offset": offsets,
            "top_logprobs": tops,
        }
        choices.append({"index": i, "text": prompt + " <gen>", "logprobs": logprobs})
    n = sum(len(token_logprobs(p)) for p in prompts)
    usage = {"prompt_tokens": n, "completion_tokens": len(prompts), "total_tokens": n + 1}
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "choices": choices,
        "model": model,
        "usage": usage,
    }
