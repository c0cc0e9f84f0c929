"""The HTTP transport of :class:`~assay.llm.models.openai_compat.OpenAIChatModel`.

One POST of a ready JSON body, one answer back as ``(status, headers, body bytes)``;
nothing else. Failures below HTTP become a :class:`~assay.llm.models.base.CallError`:
``timeout`` (no complete answer in time) or ``connection`` (refused, reset, dropped
mid-answer), both retryable. HTTP statuses are returned, not raised: the model decides
what a status means.

Two well-kept clients do the work, picked by ``backend``: ``aiohttp`` (the default: the
least CPU per call, and a connection pool that stays cheap with hundreds of calls in
flight) and ``httpx``. A transport belongs to the event loop it was opened in.

Example:
    >>> import asyncio
    >>> async def refused():
    ...     t = open_transport("aiohttp", headers={}, max_connections=4, timeout=2.0)
    ...     try:
    ...         await t.post("http://127.0.0.1:9/v1/chat/completions", b"{}")
    ...     except CallError as e:
    ...         return e.kind, e.retryable
    ...     finally:
    ...         await t.aclose()
    >>> asyncio.run(refused())
    ('connection', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from assay.errors import InvalidInputError
from assay.llm.models.base import CallError

__all__ = ["BACKENDS", "Transport", "env_proxy", "open_transport"]

BACKENDS = ("aiohttp", "httpx")


class Transport(Protocol):
    """POSTs a body; returns ``(status, headers, body)`` or raises :class:`CallError`."""

    async def post(self, url: str, body: bytes) -> tuple[int, Mapping[str, str], bytes]: ...

    async def aclose(self) -> None: ...


def open_transport(
    backend: str, *, headers: Mapping[str, str], max_connections: int, timeout: float
) -> Transport:
    """A connection pool sending ``headers`` with every request (call inside an event loop).

    ``timeout`` bounds one whole request (connecting: at most 10 s of it).
    """
    if backend == "aiohttp":
        return _Aiohttp(headers, max_connections, timeout)
    if backend == "httpx":
        return _Httpx(headers, max_connections, timeout)
    raise InvalidInputError(
        f"must be one of {', '.join(BACKENDS)}, not {backend!r}",
        source="transport",
        field="backend",
    )


def env_proxy(url: str) -> str | None:
    """The proxy ``HTTP_PROXY``/``HTTPS_PROXY`` (minus ``NO_PROXY``) set for ``url``, if any."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _timeout(timeout: float) -> CallError:
    return CallError("timeout", f"no answer within {timeout:g} s", retryable=True)


def _connection(e: BaseException) -> CallError:
    text = str(e) or type(e).__name__
    return CallError("connection", f"{type(e).__name__}: {text}", retryable=True)


class _Aiohttp:
    def __init__(self, headers: Mapping[str, str], max_connections: int, timeout: float) -> None:
        import aiohttp

        self._errors = (aiohttp.ClientError, OSError)
        self.timeout = timeout
        self._proxies: dict[str, str | None] = {}
        # trust_env=False: with it aiohttp looks up .netrc and the proxy variables in a
        # worker thread on every request; the proxy is looked up once per URL instead.
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max_connections, limit_per_host=0),
            headers=dict(headers),
            timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=min(timeout, 10.0)),
            trust_env=False,
        )

    def _proxy(self, url: str) -> str | None:
        if url not in self._proxies:
            self._proxies[url] = env_proxy(url)
        return self._proxies[url]

    async def post(self, url: str, body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        try:
            async with self._session.post(url, data=body, proxy=self._proxy(url)) as resp:
                return resp.status, resp.headers, await resp.read()
        except TimeoutError:  # aiohttp's own timeouts are TimeoutErrors too
            raise _timeout(self.timeout) from None
        except self._errors as e:
            raise _connection(e) from None

    async def aclose(self) -> None:
        await self._session.close()


class _Httpx:
    def __init__(self, headers: Mapping[str, str], max_connections: int, timeout: float) -> None:
        import httpx

        self._timeout_errors = (httpx.TimeoutException, TimeoutError)
        self._errors = (httpx.HTTPError, OSError)
        self.timeout = timeout
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        self._client: Any = httpx.AsyncClient(
            headers=dict(headers),
            limits=limits,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        )

    async def post(self, url: str, body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        try:
            r = await self._client.post(url, content=body)
        except self._timeout_errors:
            raise _timeout(self.timeout) from None
        except self._errors as e:
            raise _connection(e) from None
        return r.status_code, r.headers, r.content

    async def aclose(self) -> None:
        await self._client.aclose()
