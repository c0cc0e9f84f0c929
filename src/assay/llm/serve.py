"""``assay serve-model``: the embedded model behind an OpenAI-compatible endpoint.

Uses llama-cpp-python's own server (FastAPI under uvicorn), so a team can point several
runs, or other tools, at one local model: ``--model http://127.0.0.1:8000/v1#smollm2-135m-instruct``.
Listens on 127.0.0.1 unless told otherwise.

That server scores one prompt per ``/v1/completions`` request (a list of several fails with
HTTP 500 and an empty message), while OpenAI's API, vLLM and llama.cpp's own server take a
list, and assay's ``--loglik completions`` sends every option of an item as one list. So the
app is wrapped: a request with a list of prompts is answered prompt by prompt by the server
underneath and the answers are joined into one (``choices[i]`` for ``prompt[i]``, usage
summed), as those servers answer it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.models.embedded import EMBEDDED_NAME, default_gguf_path

__all__ = ["serve", "build_app", "PromptLists"]


def build_app(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    model_path: Path | None = None,
    n_ctx: int = 2048,
    alias: str | None = None,
):  # type: ignore[no-untyped-def]
    """The llama-cpp-python server app for a GGUF file (default: SmolLM2-135M-Instruct)."""
    try:
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError:
        raise InvalidInputError(
            "serve-model needs llama-cpp-python's server: pip install 'assay[local]'",
            source="serve-model",
        ) from None
    path = Path(model_path) if model_path is not None else default_gguf_path()
    if not path.is_file():
        raise InvalidInputError("no such GGUF file", source=str(path))
    name = alias or (EMBEDDED_NAME if model_path is None else path.stem)
    app = create_app(
        server_settings=ServerSettings(host=host, port=port),
        model_settings=[
            ModelSettings(model=str(path), model_alias=name, n_ctx=n_ctx, verbose=False)
        ],
    )
    return PromptLists(app)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class PromptLists:
    """An ASGI app answering a ``/v1/completions`` request with a list of prompts by
    asking ``app`` once per prompt (see the module docstring); anything else passes through."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if not (
            scope["type"] == "http"
            and scope.get("method") == "POST"
            and path.endswith("/completions")
            and not path.endswith("/chat/completions")
        ):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        try:
            request = json.loads(body)
            prompts = request["prompt"]
        except (ValueError, TypeError, KeyError):
            prompts = None
        if not isinstance(prompts, list) or len(prompts) < 2 or request.get("stream"):
            await self.app(scope, _replay(body, receive), send)
            return
        answers = []
        for prompt in prompts:
            status, headers, out = await self._ask(scope, receive, {**request, "prompt": prompt})
            if status != 200:  # the first failure is the answer, as the server gave it
                await _respond(send, status, out, headers)
                return
            answers.append(json.loads(out))
        await _respond(send, 200, json.dumps(_joined(answers)).encode())

    async def _ask(
        self, scope: Scope, receive: Receive, request: dict[str, Any]
    ) -> tuple[int, Any, bytes]:
        body = json.dumps(request).encode()
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        sub = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        got: dict[str, Any] = {"status": 500, "headers": [], "body": b""}

        async def collect(message: Message) -> None:
            if message["type"] == "http.response.start":
                got["status"], got["headers"] = message["status"], message.get("headers", [])
            elif message["type"] == "http.response.body":
                got["body"] += message.get("body", b"")

        await self.app(sub, _replay(body, receive), collect)
        return got["status"], got["headers"], got["body"]


def _joined(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """One completions answer from one answer per prompt: their choices in prompt order."""
    out = dict(answers[0])
    out["choices"] = [
        {**choice, "index": i} for i, a in enumerate(answers) for choice in a.get("choices", [])
    ]
    usage: dict[str, int] = {}
    for a in answers:
        for k, v in (a.get("usage") or {}).items():
            if isinstance(v, int):
                usage[k] = usage.get(k, 0) + v
    out["usage"] = usage
    return out


async def _read_body(receive: Receive) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def _replay(body: bytes, then: Receive) -> Receive:
    """The request's body, already read, then the client's own messages (a disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await then()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _respond(send: Send, status: int, body: bytes, headers: Any = None) -> None:
    kept = [(k, v) for k, v in headers or [] if k.lower() not in (b"content-length",)]
    if not any(k.lower() == b"content-type" for k, _ in kept):
        kept.append((b"content-type", b"application/json"))
    kept.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": kept})
    await send({"type": "http.response.body", "body": body})


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    model_path: Path | None = None,
    n_ctx: int = 2048,
    alias: str | None = None,
) -> None:
    """Serve until interrupted; prints the model spec clients should use."""
    import uvicorn
    from rich.console import Console

    app = build_app(host=host, port=port, model_path=model_path, n_ctx=n_ctx, alias=alias)
    name = alias or (EMBEDDED_NAME if model_path is None else Path(model_path).stem)
    Console(stderr=True, highlight=False).print(
        f"serving [bold]{name}[/]: use --model http://{host}:{port}/v1#{name}"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
