"""A :class:`~assay.llm.models.base.ChatModel` for any OpenAI-compatible endpoint.

Built on the ``openai`` SDK's ``AsyncOpenAI`` with its own retries switched off: the
runner owns retries, so every attempt is counted and every failure is classified into a
:class:`~assay.llm.models.base.CallError`. Works with hosted APIs and with servers that
speak the chat-completions format (vLLM, llama.cpp's server, Ollama, ``assay serve-model``).

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
from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.models.base import CallError, ChatResponse, LoglikResponse, Message, Usage

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
            means the SDK default (``OPENAI_BASE_URL`` or api.openai.com).
        api_key: the key; by default read from ``api_key_env`` or, if that is not
            given, from ``ASSAY_LLM_API_KEY`` then ``OPENAI_API_KEY``; local servers need none.
        api_key_env: the environment variable holding the key.
        timeout: seconds for one attempt (the runner also enforces its own timeout).
        max_connections: size of the HTTP connection pool (keep it >= the runner's
            ``max_concurrency``).
        http_backend: ``"aiohttp"`` (the SDK's aiohttp transport, about half the CPU per
            call), ``"httpx"`` (the SDK's default transport), or ``"auto"``: aiohttp when
            it is installed.
        default_headers: headers sent with every request (e.g. the ``Authorization``
            header made from credentials in a URL spec; it replaces the API key's).
        loglik: how the server is asked for log-likelihoods (:meth:`loglik`):
            ``"completions"`` (``/v1/completions`` with ``echo``: any continuation),
            ``"chat"`` (``top_logprobs`` of the first reply token: single-token labels
            only), or ``None``: not asked (answer modes that need them are refused).

    Connection pools belong to an event loop; a model used from a new loop (each
    ``Runner.run`` is one ``asyncio.run``) gets a fresh client for it, so pooled
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
        if http_backend not in ("auto", "aiohttp", "httpx"):
            raise InvalidInputError(
                f"must be 'auto', 'aiohttp' or 'httpx', not {http_backend!r}",
                source="OpenAIChatModel",
                field="http_backend",
            )
        self._default_headers = dict(default_headers or {})
        self.name = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.timeout = float(timeout)
        self.spec = spec or (f"{self.base_url}#{model}" if self.base_url else f"openai:{model}")
        self.max_connections = max_connections
        self.http_backend = _pick_backend(http_backend)
        self._api_key = _api_key(api_key, api_key_env)
        self._client = self._new_client()
        self._client_loop: Any = None
        self._response_type = _httpx_module().Response

    def _new_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self._default_headers or None,
            http_client=_http_client(self.max_connections, self.timeout, self.http_backend),
        )

    def _loop_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client_loop is not loop:
            if self._client_loop is not None:  # used before, from a loop that is gone
                self._client = self._new_client()
            self._client_loop = loop
        return self._client

    @property
    def identity(self) -> str:
        """``base_url#model``: answers are cached per endpoint and model."""
        return f"{self.base_url or str(self._client.base_url).rstrip('/')}#{self.name}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.identity!r})"

    async def chat(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """One chat-completions request; raises :class:`CallError` on any failure."""
        body_json: dict[str, Any] = {k: v for k, v in params.items() if v is not None}
        body_json["model"] = self.name
        body_json["messages"] = [dict(m) for m in messages]
        body, latency = await self._post("/chat/completions", body_json)
        return parse_completion(body, latency)

    async def loglik(
        self, messages: Sequence[Message], continuations: Sequence[str], *, prefix: str = ""
    ) -> LoglikResponse:
        """Each continuation's log-likelihood after the conversation, as the model option
        ``loglik`` says (see :mod:`assay.llm.models.openai_loglik`); one request."""
        from assay.llm.models import openai_loglik as ll

        if self.loglik_mode == "completions":
            prompt = ll.plain_prompt(messages) + prefix
            body = ll.completions_body(self.name, prompt, continuations)
            content, latency = await self._post("/completions", body)
            return ll.parse_completions(content, prompt, continuations, latency)
        if self.loglik_mode == "chat" and not prefix:
            content, latency = await self._post(
                "/chat/completions", ll.chat_body(self.name, messages)
            )
            return ll.parse_chat(content, continuations, latency)
        why = "a reply prefix" if self.loglik_mode == "chat" else "log-likelihoods"
        raise CallError("model", f"{self.spec}: loglik={self.loglik_mode} cannot score {why}")

    async def _post(self, path: str, body_json: dict[str, Any]) -> tuple[bytes, float]:
        """POST ``body_json`` to ``base_url + path``: the answer's body and latency, or a
        :class:`CallError` (HTTP status, timeout, connection)."""
        import openai

        t0 = time.perf_counter()
        try:
            # The SDK's documented route for raw requests: its auth, headers, connection
            # pool and error mapping, without re-validating the params or building
            # pydantic models (we parse the JSON ourselves and keep it as the raw answer).
            client = self._loop_client()
            response = await client.post(path, body=body_json, cast_to=self._response_type)
            body = response.content
        except openai.APIConnectionError as e:  # includes APITimeoutError
            if _is_timeout(e):
                raise CallError(
                    "timeout", f"no answer within {self.timeout:g} s", retryable=True
                ) from e
            raise CallError("connection", _describe(e), retryable=True) from e
        except openai.APIStatusError as e:
            status = e.status_code
            raise CallError(
                "http",
                _status_message(e),
                status=status,
                retryable=CallError.status_is_retryable(status),
                retry_after=parse_retry_after(e.response.headers),
            ) from e
        except openai.APIError as e:  # anything else the SDK raises while reading the answer
            raise CallError("bad_response", _describe(e), retryable=True) from e
        return body, time.perf_counter() - t0

    async def aclose(self) -> None:
        """Close the HTTP connection pool (of the running event loop)."""
        if self._client_loop is None or self._client_loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = self._new_client()
        self._client_loop = None


def _pick_backend(choice: str) -> str:
    if choice != "auto":
        return choice
    try:
        import aiohttp  # noqa: F401
        import openai

        openai.DefaultAioHttpClient  # noqa: B018  (the SDK version has the aiohttp transport)
        return "aiohttp"
    except (ImportError, AttributeError):
        return "httpx"


def _http_client(max_connections: int, timeout: float, backend: str = "httpx") -> Any:
    import openai

    httpx = _httpx_module()
    kwargs = {
        "limits": httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
        "timeout": httpx.Timeout(timeout, connect=min(timeout, 10.0)),
    }
    if backend == "aiohttp":
        return openai.DefaultAioHttpClient(**kwargs)
    return openai.DefaultAsyncHttpxClient(**kwargs)


def _httpx_module() -> Any:
    """The HTTP library the installed openai SDK is built on (``httpx`` or ``httpx2``)."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # older SDKs
        import httpx

        return httpx


def _chain(e: BaseException) -> list[BaseException]:
    out, seen = [e], {id(e)}
    while True:
        nxt = out[-1].__cause__ or out[-1].__context__
        if nxt is None or id(nxt) in seen:
            return out
        seen.add(id(nxt))
        out.append(nxt)


def _transport_cause(e: BaseException) -> BaseException | None:
    """The first exception below the SDK's and the HTTP library's wrappers."""
    for x in _chain(e)[1:]:
        if not type(x).__module__.startswith(("openai", "httpx", "httpcore")):
            return x
    return None


def _is_timeout(e: BaseException) -> bool:
    """Timeout or connection failure? Decided by the transport's own exception: the
    aiohttp transport reports every refused or dropped connection as a "ConnectTimeout",
    so the SDK's exception type alone misleads."""
    import openai

    cause = _transport_cause(e)
    if cause is not None:
        if isinstance(cause, TimeoutError) or "Timeout" in type(cause).__name__:
            return True
        if isinstance(cause, OSError) or type(cause).__module__.startswith("aiohttp"):
            return False
    return isinstance(e, openai.APITimeoutError)


def _describe(e: BaseException) -> str:
    cause = _transport_cause(e) or e.__cause__ or e.__context__
    text = str(e)
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({type(cause).__name__}: {cause})"
    return text


def _status_message(e: Any) -> str:
    try:
        body = e.response.json()
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    except Exception:
        pass
    text = getattr(e.response, "text", "") or str(e)
    return text[:500]


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
        data = json.loads(body)
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
