"""A :class:`~assay.llm.models.base.ChatModel` for any OpenAI-compatible endpoint.

Works with hosted APIs and with servers that speak the chat-completions format (vLLM,
llama.cpp's server, Ollama, ``assay serve-model``). One attempt per call: the runner owns
retries, so every attempt is counted and every failure is classified into a
:class:`~assay.llm.models.base.CallError`.

It speaks the protocol itself, over a lean HTTP transport (:mod:`assay.llm.models.http`,
aiohttp by default) with msgspec for JSON: a request is one prepared body POSTed with
headers built once, an answer is parsed straight from the bytes. (Through the ``openai``
SDK the same call cost about three times the client CPU, mostly in building the request
objects; see ``benchmarks/runner.py``.) What the SDK did and this keeps: the key as
``Authorization: Bearer``, ``OpenAI-Organization``/``OpenAI-Project`` from
``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID``, ``OPENAI_BASE_URL`` for ``openai:`` specs, the
``Retry-After`` of 429/5xx answers, proxies from the environment.

Example:
    >>> m = OpenAIChatModel("gpt-4o-mini", base_url="http://127.0.0.1:8000/v1", api_key="unused")
    >>> m.identity
    'http://127.0.0.1:8000/v1#gpt-4o-mini'
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from assay.errors import InvalidInputError
from assay.llm.models.base import CallError, ChatResponse, LoglikResponse, Message, Usage
from assay.llm.models.http import BACKENDS, Transport, open_transport

__all__ = ["OpenAIChatModel", "parse_retry_after"]

#: The API key is read from the first of these variables that is set.
API_KEY_ENV = ("ASSAY_LLM_API_KEY", "OPENAI_API_KEY")


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date).

    Example:
        >>> parse_retry_after({"retry-after": "2"})
        2.0
        >>> parse_retry_after({"retry-after-ms": "150"})
        0.15
        >>> parse_retry_after({}) is None
        True
    """
    if headers is None:
        return None
    get = headers.get
    ms = get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _api_key(explicit: str | None, env: str | None) -> str:
    if explicit is not None:
        return explicit
    for name in (env,) if env else API_KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value
    # Local servers (llama.cpp, vLLM, Ollama) accept any key; the SDK insists on one.
    return "no-key"


class OpenAIChatModel:
    """One model behind an OpenAI-compatible chat-completions endpoint.

    Args:
        model: the model name the endpoint expects (``"gpt-4o-mini"``).
        base_url: the endpoint's base URL, ending in ``/v1`` for most servers; ``None``
            means ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``.
        api_key: the key; by default read from ``api_key_env`` or, if that is not
            given, from ``ASSAY_LLM_API_KEY`` then ``OPENAI_API_KEY``; local servers need
            none (without one, ``Bearer no-key`` is sent, as the SDK did).
        api_key_env: the environment variable holding the key.
        timeout: seconds for one attempt (the runner also enforces its own timeout).
        max_connections: size of the HTTP connection pool (keep it >= the runner's
            ``max_concurrency``).
        http_backend: ``"aiohttp"`` (the least CPU per call), ``"httpx"``, or ``"auto"``
            (aiohttp).
        default_headers: headers sent with every request (e.g. the ``Authorization``
            header made from credentials in a URL spec; it replaces the API key's).

    Connection pools belong to an event loop; a model used from a new loop (each
    ``Runner.run`` is one ``asyncio.run``) opens a fresh pool for it, so pooled
    connections of a finished loop are never reused.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        max_connections: int = 512,
        http_backend: str = "auto",
        spec: str | None = None,
        default_headers: dict[str, str] | None = None,
        loglik: str | None = None,
    ) -> None:
        from assay.llm.models.openai_loglik import LOGLIK_MODES

        if loglik is not None and loglik not in LOGLIK_MODES:
            raise InvalidInputError(
                f"must be 'completions' or 'chat', not {loglik!r}",
                source="model option",
                field="loglik",
            )
        self.loglik_mode = loglik
        self.loglik_support = LOGLIK_MODES.get(loglik or "")
        if http_backend != "auto" and http_backend not in BACKENDS:
            raise InvalidInputError(
                f"must be 'auto', 'aiohttp' or 'httpx', not {http_backend!r}",
                source="OpenAIChatModel",
                field="http_backend",
            )
        self.name = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.timeout = float(timeout)
        self.spec = spec or (f"{self.base_url}#{model}" if self.base_url else f"openai:{model}")
        self.max_connections = max_connections
        self.http_backend = "aiohttp" if http_backend == "auto" else http_backend
        endpoint = self.base_url or _default_base_url()
        self._endpoint = endpoint
        self._url = f"{endpoint}/chat/completions"
        self._headers = _headers(_api_key(api_key, api_key_env), default_headers or {})
        self._transport: Transport | None = None
        self._transport_loop: Any = None

    def _loop_transport(self) -> Transport:
        loop = asyncio.get_running_loop()
        if self._transport is None or self._transport_loop is not loop:
            # (a pool of a loop that is gone is dropped: its sockets went with that loop)
            self._transport = open_transport(
                self.http_backend,
                headers=self._headers,
                max_connections=self.max_connections,
                timeout=self.timeout,
            )
            self._transport_loop = loop
        return self._transport

    @property
    def identity(self) -> str:
        """``base_url#model``: answers are cached per endpoint and model."""
        return f"{self._endpoint}#{self.name}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.identity!r})"

    async def chat(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """One chat-completions request; raises :class:`CallError` on any failure."""
        body: dict[str, Any] = {k: v for k, v in params.items() if v is not None}
        body["model"] = self.name
        body["messages"] = [m if type(m) is dict else dict(m) for m in messages]
        content, latency = await self._post(self._url, body)
        return parse_completion(content, latency)

    async def loglik(
        self, messages: Sequence[Message], continuations: Sequence[str], *, prefix: str = ""
    ) -> LoglikResponse:
        """Each continuation's log-likelihood after the conversation, as the model option
        ``loglik`` says (see :mod:`assay.llm.models.openai_loglik`); one request."""
        import assay.llm.models.openai_loglik as ll

        if self.loglik_mode == "completions":
            prompt = ll.plain_prompt(messages) + prefix
            body = ll.completions_body(self.name, prompt, continuations)
            content, latency = await self._post(f"{self._endpoint}/completions", body)
            return ll.parse_completions(content, prompt, continuations, latency)
        if self.loglik_mode == "chat" and not prefix:
            content, latency = await self._post(self._url, ll.chat_body(self.name, messages))
            return ll.parse_chat(content, continuations, latency)
        why = "a reply prefix" if self.loglik_mode == "chat" else "log-likelihoods"
        raise CallError("model", f"{self.spec}: loglik={self.loglik_mode} cannot score {why}")

    async def _post(self, url: str, body: dict[str, Any]) -> tuple[bytes, float]:
        """POST ``body`` as JSON to ``url``: the answer's content and latency, or a
        :class:`CallError` (HTTP status; the transport raises timeouts and connection
        failures as theirs)."""
        try:
            data = _encode(body)
        except (TypeError, ValueError) as e:
            raise CallError("model", f"the request is not JSON: {e}") from None
        transport = self._loop_transport()
        t0 = time.perf_counter()
        status, headers, content = await transport.post(url, data)
        latency = time.perf_counter() - t0
        if not 200 <= status < 300:
            raise CallError(
                "http",
                _status_message(status, content),
                status=status,
                retryable=CallError.status_is_retryable(status),
                retry_after=parse_retry_after(headers),
            )
        return content, latency

    async def aclose(self) -> None:
        """Close the HTTP connection pool (of the running event loop)."""
        transport, loop = self._transport, self._transport_loop
        self._transport = self._transport_loop = None
        if transport is not None and loop is asyncio.get_running_loop():
            await transport.aclose()


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _default_base_url() -> str:
    return (os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")


def _headers(api_key: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The headers of every request; ``extra`` replaces any of them (case-insensitively)."""
    out = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "assay",
    }
    for env, name in (
        ("OPENAI_ORG_ID", "OpenAI-Organization"),
        ("OPENAI_PROJECT_ID", "OpenAI-Project"),
    ):
        if os.environ.get(env):
            out[name] = os.environ[env]
    for name, value in extra.items():
        for old in [k for k in out if k.lower() == name.lower()]:
            del out[old]
        out[name] = value
    return out


def _status_message(status: int, content: bytes) -> str:
    """What a failed call stores: the ``error.message`` of an OpenAI-style error body (when
    it says something), then always the status and the body's start, so that an answer
    with an empty message (llama-cpp-python's HTTP 500) still says what the server sent.

    Example:
        >>> _status_message(500, b'{"error": {"message": "", "type": "internal_server_error"}}')
        'HTTP 500: {"error": {"message": "", "type": "internal_server_error"}}'
        >>> _status_message(401, b'{"error": {"message": "bad key"}}')
        'bad key (HTTP 401: {"error": {"message": "bad key"}})'
        >>> _status_message(502, b"")
        'HTTP 502 (empty body)'
    """
    message = ""
    try:
        body = json.loads(content)
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict) and err.get("message"):
            message = str(err["message"])
        elif isinstance(err, str):
            message = err
    except (ValueError, UnicodeDecodeError):
        pass
    text = content[:500].decode("utf-8", "replace").strip()
    raw = f"HTTP {status}: {text}" if text else f"HTTP {status} (empty body)"
    return f"{message} ({raw})" if message else raw


def parse_completion(body: bytes | str, latency: float) -> ChatResponse:
    """Turn a chat-completions JSON body into a :class:`ChatResponse`.

    Raises :class:`CallError` (``bad_response``): retryable when the body is not JSON (a
    truncated or garbled answer), not retryable when it is JSON without message content.

    Example:
        >>> r = parse_completion('{"choices": [{"message": {"content": "hi"}}], '
        ...                      '"usage": {"prompt_tokens": 3, "completion_tokens": 1}}', 0.1)
        >>> r.text, r.usage.total_tokens
        ('hi', 4)
    """
    try:
        data = _decode(body)
    except msgspec.DecodeError:
        data = None
    try:
        data = json.loads(body) if data is None else data  # NaN, Infinity: JSON's extensions
    except (ValueError, UnicodeDecodeError) as e:
        snippet = body[:80] if isinstance(body, str) else body[:80].decode("utf-8", "replace")
        raise CallError(
            "bad_response", f"answer is not JSON ({e}): {snippet!r}", retryable=True
        ) from None
    if not isinstance(data, dict):
        raise CallError("bad_response", "answer is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise CallError("bad_response", "answer has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise CallError("bad_response", "answer has no message content")
    usage = data.get("usage")
    try:
        u = Usage.from_dict(usage if isinstance(usage, dict) else None)
    except (TypeError, ValueError):
        u = Usage()
    return ChatResponse(text=content, usage=u, latency=latency, raw=data)
