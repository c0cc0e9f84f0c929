"""The ``ChatModel`` protocol and the shapes every model returns or raises.

A chat model is anything with an async ``chat(messages, **params)`` that returns a
:class:`ChatResponse` (text, token usage, latency, the raw response) or raises a
:class:`CallError` saying what went wrong and whether trying again could help. The
runner (:mod:`assay.llm.runner`) adds concurrency, retries, caching and progress on top;
a model makes exactly one attempt per call.

Example:
    >>> import asyncio
    >>> class Echo:
    ...     name = "echo"
    ...     spec = "echo"
    ...     identity = "echo"
    ...     async def chat(self, messages, **params):
    ...         return ChatResponse(text=messages[-1]["content"], usage=Usage(1, 1), latency=0.0)
    >>> isinstance(Echo(), ChatModel)
    True
    >>> asyncio.run(Echo().chat([{"role": "user", "content": "hi"}])).text
    'hi'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from assay.errors import InvalidInputError

__all__ = [
    "Message",
    "Usage",
    "ChatResponse",
    "CallError",
    "ChatModel",
    "ERROR_KINDS",
    "GENERATION_PARAMS",
    "OptionScore",
    "LoglikResponse",
    "LOGLIK_PARAM",
    "loglik_support",
    "require_loglik",
    "ask",
]

#: One chat message, OpenAI style: ``{"role": "user", "content": "..."}``.
Message = Mapping[str, Any]

#: Generation parameters every model understands; others are passed through to the
#: endpoint as they are (OpenAI-compatible servers) or rejected (embedded model).
GENERATION_PARAMS = (
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
)

#: The ``kind`` of a failed call, as recorded by the runner.
#:
#: * ``http``: the endpoint answered with an HTTP error status (``status`` says which).
#: * ``timeout``: no complete answer within the per-call timeout.
#: * ``connection``: the connection failed or was dropped mid-answer.
#: * ``bad_response``: the endpoint answered 2xx but not with a usable chat completion
#:   (malformed JSON, no choices, no message content).
#: * ``model``: the model itself failed (e.g. the embedded model raised).
ERROR_KINDS = ("http", "timeout", "connection", "bad_response", "model")

#: The ``error_kind`` of an item a run did not finish because it was stopped (Ctrl-C,
#: SIGTERM): not a call error; running the items again resumes.
INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Usage:
    """Token counts of one call (``None`` where the endpoint did not report them)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        """``prompt_tokens + completion_tokens`` when both are known."""
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int | None]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Usage:
        if not d:
            return cls()
        p, c = d.get("prompt_tokens"), d.get("completion_tokens")
        return cls(int(p) if p is not None else None, int(c) if c is not None else None)


@dataclass(frozen=True)
class ChatResponse:
    """The answer of one successful call.

    Attributes:
        text: the assistant message's content.
        usage: token counts.
        latency: seconds from sending the request to having the whole answer.
        raw: the raw response as plain JSON (the chat-completion object), for audit.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    raw: dict[str, Any] | None = None


class CallError(Exception):
    """One failed call to a model.

    Attributes:
        kind: one of :data:`ERROR_KINDS`.
        message: what happened, for people.
        status: the HTTP status for ``kind == "http"``, else ``None``.
        retryable: whether another attempt may succeed (429, 5xx, timeouts, dropped
            connections, malformed answers) or not (400, 401, 403, 404, 422, ...).
        retry_after: seconds the server asked us to wait (``Retry-After``), if any.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise InvalidInputError(
                f"unknown error kind {kind!r}; expected one of {', '.join(ERROR_KINDS)}",
                source="CallError",
                field="kind",
            )
        self.kind = kind
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(f"{kind}{f' {status}' if status is not None else ''}: {message}")

    @staticmethod
    def status_is_retryable(status: int) -> bool:
        """429 (rate limited), 408 (request timeout) and every 5xx are worth retrying."""
        return status in (408, 429) or 500 <= status <= 599


@runtime_checkable
class ChatModel(Protocol):
    """An async chat model: messages in, :class:`ChatResponse` out (or :class:`CallError`).

    Attributes:
        name: a short name (``"gpt-4o-mini"``, ``"smollm2-135m-instruct"``).
        spec: the display name: the model spec as it may be shown and stored
            (``"http://me:***@host/v1#m"``: credentials masked); what the store, the
            progress line and error messages name the model by.
        identity: a stable string that identifies the model *and endpoint* for the
            response cache (two models with the same identity share cached answers).
    """

    name: str
    spec: str

    @property
    def identity(self) -> str: ...

    async def chat(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """Make exactly one attempt; raise :class:`CallError` on failure."""
        ...


# -- log-likelihood answers (an optional capability) ----------------------------------

#: The item parameter that makes an item a log-likelihood request (the runner then calls
#: ``model.loglik`` instead of ``model.chat``): ``{"continuations": [...], "prefix": "..."}``.
LOGLIK_PARAM = "loglik"


@dataclass(frozen=True)
class OptionScore:
    """The log-likelihood of one continuation after a prompt.

    Attributes:
        logprob: ``sum_i log P(token_i | prompt, token_<i)`` (natural log).
        n_tokens: how many tokens the continuation has after the prompt.
        n_bytes: its length in UTF-8 bytes.
        greedy: every token was the model's most likely one (lm-eval's ``is_greedy``).
        bound: ``logprob`` is only an upper bound: the option was not among the
            ``top_logprobs`` a chat endpoint returned (``loglik=chat``), so it got the
            smallest log-probability returned.
    """

    logprob: float
    n_tokens: int
    n_bytes: int
    greedy: bool
    bound: bool = False


@dataclass(frozen=True)
class LoglikResponse:
    """The answer of one log-likelihood call: one :class:`OptionScore` per continuation.

    Example:
        >>> r = LoglikResponse((OptionScore(-0.5, 1, 1, True), OptionScore(-2.0, 1, 1, False)))
        >>> LoglikResponse.from_text(r.to_chat().text).options == r.options
        True
    """

    options: tuple[OptionScore, ...]
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    raw: dict[str, Any] | None = None

    def to_chat(self) -> ChatResponse:
        """As the runner records and caches it: the scores as JSON text."""
        text = json.dumps({"options": [asdict(o) for o in self.options]}, separators=(",", ":"))
        return ChatResponse(text, self.usage, self.latency, self.raw)

    @classmethod
    def from_text(cls, text: str) -> LoglikResponse:
        """The scores back from a record's text (:meth:`to_chat`)."""
        return cls(tuple(OptionScore(**o) for o in json.loads(text)["options"]))


def loglik_support(model: Any) -> str | None:
    """What log-likelihoods ``model`` gives: ``"full"`` (any continuation: the embedded
    model, ``/v1/completions`` with ``echo``), ``"labels"`` (single-token labels only: a
    chat endpoint's ``top_logprobs``) or ``None`` (none: it cannot score options)."""
    support = getattr(model, "loglik_support", None)
    return support if support in ("full", "labels") else None


def require_loglik(model: Any, *, labels_only: bool, who: str) -> None:
    """Refuse, before any call, a model that cannot score what ``who`` needs.

    Raises:
        InvalidInputError: the model gives no log-probabilities, or only of single-token
            labels while ``who`` scores longer continuations.
    """
    support = loglik_support(model)
    name = getattr(model, "spec", None) or getattr(model, "name", "the model")
    if support is None:
        raise InvalidInputError(
            f"{name} gives no log-probabilities; use --answer-mode generate, or an "
            "OpenAI-compatible server with the model option loglik=completions|chat",
            source="--answer-mode",
        )
    if support == "labels" and not labels_only:
        raise InvalidInputError(
            f"{who} scores whole option texts, and {name} (loglik=chat) scores only "
            "single-token labels; use loglik=completions or --answer-mode generate",
            source="--answer-mode",
        )


async def ask(model: Any, messages: Sequence[Message], params: Mapping[str, Any]) -> ChatResponse:
    """One attempt of one item: ``model.chat(messages, **params)``, or, for an item whose
    params hold :data:`LOGLIK_PARAM` (``{"continuations": [...], "prefix": "..."}``),
    ``model.loglik(...)`` as a :class:`ChatResponse` whose text is the scores' JSON.

    Example:
        >>> import asyncio
        >>> class Fixed:
        ...     loglik_support = "full"
        ...     async def loglik(self, messages, continuations, prefix=""):
        ...         return LoglikResponse(tuple(OptionScore(-1.0, 1, len(c), True)
        ...                                     for c in continuations))
        >>> r = asyncio.run(ask(Fixed(), [], {"loglik": {"continuations": ["a"]}}))
        >>> LoglikResponse.from_text(r.text).options[0].logprob
        -1.0
    """
    spec = params.get(LOGLIK_PARAM)
    if spec is None:
        return await model.chat(messages, **params)
    conts = spec.get("continuations") if isinstance(spec, Mapping) else None
    prefix = spec.get("prefix", "") if isinstance(spec, Mapping) else None
    if (
        len(params) != 1
        or not isinstance(conts, list)
        or not conts
        or not all(isinstance(c, str) for c in conts)
        or not isinstance(prefix, str)
    ):
        raise CallError(
            "model",
            "a loglik item's params are only {'loglik': {'continuations': [strings], "
            "'prefix': string}}",
        )
    if loglik_support(model) is None:
        raise CallError("model", "the model gives no log-probabilities")
    resp = await model.loglik(messages, conts, prefix=prefix)
    return resp.to_chat()
