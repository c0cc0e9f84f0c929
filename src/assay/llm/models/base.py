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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
