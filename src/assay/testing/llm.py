"""A loopback OpenAI-compatible chat server with scripted faults, for tests and benchmarks.

:class:`FakeChatServer` speaks ``POST /v1/chat/completions`` on 127.0.0.1 (a small ASGI
app under uvicorn, in a background thread) and answers ``"echo: <last user message>"``.
A *plan* scripts what successive attempts for a given prompt get:

============================  ===============================================================
outcome                       the server...
============================  ===============================================================
``ok``                        answers normally (after ``latency`` seconds)
``429`` / ``429:S``           answers 429, with ``Retry-After: S`` when ``S`` is given
``500``, ``503``, ``400``...  answers that HTTP status with an OpenAI-style error body
``hang``                      sends nothing for ``hang_seconds`` (past the client's timeout)
``drop``                      starts the answer, then closes the connection mid-body
``malformed``                 answers 200 with a body that is not JSON
``empty``                     answers 200 with JSON that has no choices
============================  ===============================================================

After its plan is used up a prompt gets ``ok``. With ``answer_limit=N`` the server answers
N calls and then lets every further call hang (to kill a client mid-run). Counters:
``calls`` (requests received), ``answered`` (ok answers sent), ``per_prompt`` (calls
per prompt), ``log`` (prompt and outcome of every call), ``max_in_flight``, and
``authorizations`` (the ``Authorization`` header of every call, or None) and ``requests``
(the JSON body of every call).

Every answer names its model in ``model``, as servers do: the name the request asked for,
or, for a name in ``aliases``, the full name it stands for, as a server that accepts a
short name for the model it loaded reports the loaded one (``aliases={"smollm2":
"smollm2-135m-instruct"}`` answers requests for ``smollm2`` as ``smollm2-135m-instruct``).

It also answers ``POST /v1/completions`` with ``echo`` and ``logprobs``, and chat
requests with ``logprobs: true`` get the first reply token's ``top_logprobs``, scripted by
``token_logprobs(text)`` and ``top_logprobs(messages)``. What an answer holds is
:mod:`assay.testing.llm_answers`; killing a run at a known point,
:mod:`assay.testing.llm_resume`.

(This module was ``assay.llm.testing``, removed in 0.2.0.)

Example:
    >>> with FakeChatServer(plan={"q": ["500", "ok"]}) as srv:   # doctest: +SKIP
    ...     srv.url
    'http://127.0.0.1:40123/v1'

Run ``python -m assay.testing.llm --latency 0.05`` to serve one from the command line
(it prints its URL and serves until killed).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.errors import InvalidInputError
from assay.testing.llm_answers import (
    chat_completion,
    chat_logprobs,
    text_completion,
    toy_token_logprobs,
)

__all__ = [
    "FakeChatServer",
]


_JSON = [(b"content-type", b"application/json")]


class FakeChatServer:
    """See the module docstring.

    Args:
        plan: prompt (last user message) -> outcomes of its successive attempts.
        latency: seconds before each ``ok`` answer.
        hang_seconds: how long ``hang`` waits (ends early when the server stops).
        answer_limit: answer this many calls, then hang every further one.
        model: the model name reported in answers to requests that name none.
        aliases: names the server also answers to -> the full name it reports for them.
        port: 0 picks a free port.
        responder: scripts the text of every ``ok`` answer: called with the request's
            ``messages`` (a list of ``{"role", "content"}``), returns the answer text. The
            default answers ``"echo: <last user message>"``. Tests of LLM evaluations use
            it to answer per prompt (e.g. "pick the option whose text contains X").
    """

    def __init__(
        self,
        plan: Mapping[str, Sequence[str]] | None = None,
        *,
        latency: float = 0.0,
        hang_seconds: float = 30.0,
        answer_limit: int | None = None,
        model: str = "fake-model",
        aliases: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        responder: Callable[[list[dict[str, Any]]], str] | None = None,
        token_logprobs: Callable[[str], list[tuple[str, float]]] | None = None,
        top_logprobs: Callable[[list[dict[str, Any]]], list[tuple[str, float]]] | None = None,
    ) -> None:
        self.responder = responder
        self.token_logprobs = token_logprobs or toy_token_logprobs
        self.top_logprobs = top_logprobs
        self.plan = {k: list(v) for k, v in (plan or {}).items()}
        self.latency = latency
        self.hang_seconds = hang_seconds
        self.answer_limit = answer_limit
        self.model = model
        self.aliases = dict(aliases or {})
        self.host = host
        self.port = port
        self.calls = 0
        self.answered = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.per_prompt: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []
        self.authorizations: list[str | None] = []
        self.requests: list[dict[str, Any]] = []
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    # -- lifecycle --------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL to give an OpenAI client: ``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def spec(self) -> str:
        """A model spec for this server: ``http://127.0.0.1:PORT/v1#fake-model``."""
        return f"{self.url}#{self.model}"

    def reset(self) -> None:
        """Zero the counters (the plan stays)."""
        self.calls = 0
        self.answered = 0
        self.max_in_flight = 0
        self.per_prompt = Counter()
        self.log = []
        self.authorizations = []
        self.requests = []

    def start(self) -> FakeChatServer:
        import uvicorn

        config = uvicorn.Config(
            self._app,
            host=self.host,
            port=self.port,
            log_level="critical",
            access_log=False,
            lifespan="off",
            interface="asgi3",
            timeout_graceful_shutdown=2,
            backlog=4096,
        )
        self._server = uvicorn.Server(config)
        ready = threading.Event()

        def serve() -> None:
            async def main() -> None:
                self._loop = asyncio.get_running_loop()
                self._stopping = asyncio.Event()
                task = asyncio.create_task(self._server.serve())
                while not self._server.started and not task.done():
                    await asyncio.sleep(0.005)
                ready.set()
                await task

            asyncio.run(main())
            ready.set()

        self._thread = threading.Thread(target=serve, name="fake-chat-server", daemon=True)
        self._thread.start()
        ready.wait(30)
        if not self._server.started:
            raise RuntimeError("fake chat server did not start")
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(15)
        self._server = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- the ASGI app -----------------------------------------------------------------

    def _outcome(self, prompt: str) -> str:
        steps = self.plan.get(prompt)
        if steps:
            return steps.pop(0)
        return "ok"

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        path = scope["path"].rstrip("/")
        if scope["method"] == "POST" and path.endswith("/v1/completions"):
            await self._completions(body, send)
            return
        if scope["method"] != "POST" or not path.endswith("/chat/completions"):
            await _send(
                send, 404, {"error": {"message": f"no route {scope['path']}", "type": "not_found"}}
            )
            return
        try:
            req = json.loads(body)
            messages = req["messages"]
            prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        except (ValueError, KeyError, TypeError):
            await _send(
                send,
                400,
                {"error": {"message": "bad request body", "type": "invalid_request_error"}},
            )
            return
        self.calls += 1
        self.requests.append(req)
        self.per_prompt[prompt] += 1
        auth = dict(scope.get("headers") or []).get(b"authorization")
        self.authorizations.append(None if auth is None else auth.decode("latin-1"))
        if self.answer_limit is not None and self.answered >= self.answer_limit:
            outcome = "hang"
        else:
            outcome = self._outcome(prompt)
        self.log.append((prompt, outcome))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self._respond(outcome, prompt, req, send)
        finally:
            self.in_flight -= 1

    async def _respond(self, outcome: str, prompt: str, req: dict[str, Any], send: Any) -> None:
        code, _, arg = outcome.partition(":")
        if code == "ok":
            if self.latency:
                await asyncio.sleep(self.latency)
            if self.answer_limit is not None and self.answered >= self.answer_limit:
                await self._hang()
                return
            self.answered += 1
            await _send(send, 200, self._completion(prompt, req))
        elif code.isdigit():
            status = int(code)
            headers = [(b"retry-after", arg.encode())] if arg else []
            await _send(
                send,
                status,
                {"error": {"message": f"injected {status}", "type": "injected"}},
                headers,
            )
        elif code == "hang":
            await self._hang()
        elif code == "drop":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [*_JSON, (b"content-length", b"1000")],
                }
            )
            await send(
                {"type": "http.response.body", "body": b'{"id": "chatcmpl-', "more_body": True}
            )
            raise ConnectionAbortedError(
                "injected connection drop"
            )  # uvicorn closes the connection
        elif code == "malformed":
            await _send_raw(send, 200, b'{"id": "x", "choices": [{"message": {"content": "trunc')
        elif code == "empty":
            await _send(send, 200, {"id": "x", "object": "chat.completion", "choices": []})
        else:
            raise InvalidInputError(f"unknown outcome {outcome!r}", source="plan")

    async def _completions(self, body: bytes, send: Any) -> None:
        """``/v1/completions`` with ``echo`` and ``logprobs`` (every prompt token scored)."""
        try:
            req = json.loads(body)
            prompts = req["prompt"] if isinstance(req["prompt"], list) else [req["prompt"]]
            if not req.get("echo") or not req.get("logprobs"):
                raise KeyError("echo")
        except (ValueError, KeyError, TypeError):
            await _send(send, 400, {"error": {"message": "needs prompt, echo and logprobs"}})
            return
        self.calls += 1
        self.requests.append(req)
        self.answered += 1
        answer = text_completion(
            prompts, model=self.served(req), token_logprobs=self.token_logprobs
        )
        await _send(send, 200, answer)

    def served(self, req: Mapping[str, Any]) -> str:
        """The model name an answer to ``req`` reports: the full name of an alias."""
        asked = req.get("model")
        name = asked if isinstance(asked, str) and asked else self.model
        return self.aliases.get(name, name)

    async def _hang(self) -> None:
        assert self._stopping is not None
        try:
            await asyncio.wait_for(self._stopping.wait(), self.hang_seconds)
        except TimeoutError:
            pass

    def _completion(self, prompt: str, req: dict[str, Any]) -> dict[str, Any]:
        messages = list(req.get("messages", []))
        text = self.responder(messages) if self.responder is not None else f"echo: {prompt}"
        logprobs = None
        if req.get("logprobs"):
            tops = self.top_logprobs(messages) if self.top_logprobs is not None else None
            logprobs = chat_logprobs(text, tops)
        return chat_completion(
            text, messages, model=self.served(req), number=self.calls, logprobs=logprobs
        )


async def _send(
    send: Any, status: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await _send_raw(send, status, json.dumps(payload).encode(), headers)


async def _send_raw(
    send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    hdrs = [*_JSON, (b"content-length", str(len(body)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a fake chat endpoint until killed; prints its URL on the first line."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    srv = FakeChatServer(latency=args.latency, port=args.port).start()
    print(srv.url, flush=True)
    try:
        while True:
            line = sys.stdin.readline()
            if not line:  # stdin closed: the parent is gone or done
                break
            if line.strip() == "stats":
                print(json.dumps({"calls": srv.calls, "answered": srv.answered}), flush=True)
            elif line.strip() == "reset":
                srv.reset()
                print("ok", flush=True)
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
