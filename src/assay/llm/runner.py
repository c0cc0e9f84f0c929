"""Run many chat calls: concurrent, rate-limited, retried, cached, resumable, never dropping an item.

Items go in (id, messages, generation params); exactly one :class:`Record` per item comes
out, in input order: ``ok`` with the raw text, or an error with its kind, HTTP status and
message. Parsing answers is the caller's job.

* ``max_concurrency`` calls in flight at most; optional ``rpm`` (requests per minute)
  paces every attempt, retries included.
* Each attempt has a ``timeout``. 429 (honouring ``Retry-After``), 408, 5xx, timeouts,
  dropped connections and garbled (non-JSON) answers are retried with exponential
  backoff and jitter (:class:`RetryPolicy`); 400, 401, 403, 404, 422 are recorded at once.
* Successful answers go into a :class:`~assay.llm.cache.ResponseCache` as they arrive, so a
  re-run never pays twice and a killed run resumes where it stopped. Items with the
  same model, params and messages share one call.
* A rich progress bar (done/total, errors, calls/s, ETA) on a terminal; silent with
  ``quiet=True`` or when stderr is not a TTY. Token totals are printed at the end.

Example:
    >>> from assay.llm.models.base import ChatResponse, Usage
    >>> class Upper:
    ...     name = identity = "upper"
    ...     async def chat(self, messages, **params):
    ...         return ChatResponse(messages[-1]["content"].upper(), Usage(1, 1), 0.0)
    >>> items = [Item.from_prompt("a", "hi"), Item.from_prompt("b", "yo")]
    >>> [r.text for r in Runner(Upper(), cache=None, quiet=True).run(items)]
    ['HI', 'YO']
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.errors import InvalidInputError
from assay.llm.cache import ResponseCache, cache_key
from assay.llm.models.base import CallError, ChatModel, ChatResponse, Usage

__all__ = ["Item", "Record", "RetryPolicy", "RunStats", "Runner", "run_items", "summarize"]


@dataclass(frozen=True)
class Item:
    """One call to make: an id, chat messages, and generation parameters.

    Example:
        >>> Item.from_prompt("q1", "2+2?", system="Answer with a number.", max_tokens=4).messages[0]["role"]
        'system'
    """

    id: str
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_prompt(cls, id: str, prompt: str, *, system: str | None = None, **params: Any) -> Item:
        """A one-turn item: an optional system message and one user message."""
        msgs: list[dict[str, Any]] = []
        if system is not None:
            msgs.append({"role": "system", "content": system})
        msgs.append({"role": "user", "content": prompt})
        return cls(str(id), tuple(msgs), dict(params))

    @classmethod
    def from_dict(
        cls, d: Mapping[str, Any], *, position: int | None = None, source: str = "items"
    ) -> Item:
        """From ``{"id", "messages" | "prompt", "system"?, "params"?}`` (a JSONL line)."""
        where = position if position is not None else d.get("id")
        if not isinstance(d, Mapping):
            raise InvalidInputError("expected an object", source=source, record=where)
        if "id" not in d:
            raise InvalidInputError("missing", source=source, record=where, field="id")
        params = d.get("params") or {}
        if not isinstance(params, Mapping):
            raise InvalidInputError(
                "expected an object", source=source, record=where, field="params"
            )
        if "messages" in d:
            item = cls(str(d["id"]), tuple(d["messages"] or ()), dict(params))
        elif "prompt" in d:
            if not isinstance(d["prompt"], str):
                raise InvalidInputError(
                    "expected a string", source=source, record=where, field="prompt"
                )
            item = cls.from_prompt(str(d["id"]), d["prompt"], system=d.get("system"), **params)
        else:
            raise InvalidInputError("needs 'messages' or 'prompt'", source=source, record=where)
        _check_messages(item, where, source)
        return item


def _check_messages(item: Item, where: Any, source: str) -> None:
    if not item.messages:
        raise InvalidInputError("no messages", source=source, record=where, field="messages")
    for m in item.messages:
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or "content" not in m:
            raise InvalidInputError(
                "each message needs a 'role' string and a 'content'",
                source=source,
                record=where,
                field="messages",
            )


@dataclass(frozen=True)
class Record:
    """The outcome of one item.

    Attributes:
        id: the item's id.
        ok: True when ``text`` holds the model's answer.
        text: the raw answer (``None`` on error).
        error_kind: one of :data:`assay.llm.models.base.ERROR_KINDS` on error.
        status: the HTTP status of the last failed attempt, if it was an HTTP error.
        error: the error message.
        attempts: calls made for this item in this run (0 when answered from the cache
            or by another item with the same prompt and params).
        latency: seconds of the last attempt (of the original call for cached answers).
        elapsed: wall seconds spent on the item in this run, backoff included.
        usage: token counts of the answer.
        cached: True when the answer came from the cache (or a duplicate item).
        raw: the raw response (the chat-completion JSON), not part of :meth:`to_dict`.
    """

    id: str
    ok: bool
    text: str | None = None
    error_kind: str | None = None
    status: int | None = None
    error: str | None = None
    attempts: int = 0
    latency: float | None = None
    elapsed: float = 0.0
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (one line of ``assay llm run`` output)."""
        return {
            "id": self.id,
            "ok": self.ok,
            "text": self.text,
            "error_kind": self.error_kind,
            "status": self.status,
            "error": self.error,
            "attempts": self.attempts,
            "latency": self.latency,
            "elapsed": self.elapsed,
            "usage": self.usage.to_dict(),
            "cached": self.cached,
        }


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a failed call again.

    The n-th retry waits ``d/2 + uniform(0, d/2)`` with ``d = min(backoff_max,
    backoff_base * 2**(n-1))`` ("equal jitter"), or, when the server sent
    ``Retry-After``, that many seconds (at most ``max_retry_after``) plus up to 10%.

    Example:
        >>> p = RetryPolicy(backoff_base=1.0, backoff_max=8.0)
        >>> rng = random.Random(0)
        >>> 2.0 <= p.delay(3, None, rng) <= 4.0, p.delay(1, 2.0, rng) >= 2.0
        (True, True)
    """

    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), self.max_retry_after)
            return wait * (1.0 + 0.1 * rng.random())
        d = min(self.backoff_max, self.backoff_base * (2.0 ** (retry - 1)))
        return d / 2.0 + rng.random() * d / 2.0


@dataclass
class RunStats:
    """Counters of one run."""

    items: int = 0
    ok: int = 0
    errors: int = 0
    cached: int = 0
    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "total_tokens": self.total_tokens}


def summarize(records: Iterable[Record]) -> RunStats:
    """Counts and token totals of a list of records (cached answers count their tokens too).

    Example:
        >>> s = summarize([Record("a", True, "x", usage=Usage(3, 2), attempts=2), Record("b", False, error_kind="http")])
        >>> s.ok, s.errors, s.total_tokens, s.calls
        (1, 1, 5, 2)
    """
    s = RunStats()
    for r in records:
        s.items += 1
        s.ok += r.ok
        s.errors += not r.ok
        s.cached += r.cached
        s.calls += r.attempts
        s.retries += max(0, r.attempts - 1)
        s.prompt_tokens += r.usage.prompt_tokens or 0
        s.completion_tokens += r.usage.completion_tokens or 0
    return s


class _RateLimiter:
    """Spaces attempt starts ``60 / rpm`` seconds apart."""

    def __init__(self, rpm: float) -> None:
        self.interval = 60.0 / float(rpm)
        self.next = 0.0

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        start = max(now, self.next)
        self.next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


class Runner:
    """Runs items against a :class:`~assay.llm.models.base.ChatModel`.

    Args:
        model: the model to call.
        max_concurrency: calls in flight at most.
        rpm: requests (attempts) per minute at most; ``None`` for no limit.
        timeout: seconds per attempt.
        retry: the :class:`RetryPolicy`.
        cache: a :class:`~assay.llm.cache.ResponseCache`, a path to one, ``True`` for the
            default file (``$ASSAY_LLM_CACHE``, see :mod:`assay.store.config`), or
            ``None``/``False`` for no cache.
        quiet: no progress bar and no summary line.
        console: where the progress bar goes (default: stderr); it is shown only if
            the console is a terminal.
        seed: seeds the backoff jitter.
        on_record: called with each record as soon as it is final.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        max_concurrency: int = 8,
        rpm: float | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | str | Path | bool | None = True,
        quiet: bool = False,
        console: Console | None = None,
        seed: int = 0,
        on_record: Callable[[Record], None] | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise InvalidInputError("must be >= 1", source="runner", field="max_concurrency")
        if rpm is not None and rpm <= 0:
            raise InvalidInputError("must be > 0", source="runner", field="rpm")
        if timeout <= 0:
            raise InvalidInputError("must be > 0", source="runner", field="timeout")
        self.model = model
        self.max_concurrency = int(max_concurrency)
        self.rpm = rpm
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy()
        self.cache = _open_cache(cache)
        self.quiet = quiet
        self.console = console or Console(stderr=True)
        self.seed = seed
        self.on_record = on_record
        self.stats = RunStats()

    # -- public API -------------------------------------------------------------------

    def run(self, items: Iterable[Item | Mapping[str, Any]]) -> list[Record]:
        """Synchronous :meth:`arun` in its own event loop (not from inside a running one).

        The model's connections opened in that loop are closed before it ends; with
        :meth:`arun` in your own loop, ``await model.aclose()`` when done.
        """
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        if in_loop:
            raise RuntimeError(
                "Runner.run() called inside an event loop; use 'await runner.arun(items)'"
            )
        return asyncio.run(self._run_and_close(items))

    async def _run_and_close(self, items: Iterable[Item | Mapping[str, Any]]) -> list[Record]:
        try:
            return await self.arun(items)
        finally:
            close = getattr(self.model, "aclose", None)
            if close is not None:
                await close()

    async def arun(self, items: Iterable[Item | Mapping[str, Any]]) -> list[Record]:
        """Run every item; one record per item, in input order."""
        t0 = time.perf_counter()
        batch = _as_items(items)
        identity = self.model.identity
        keys = [cache_key(identity, it.messages, it.params) for it in batch]
        records: list[Record | None] = [None] * len(batch)
        self.stats = stats = RunStats(items=len(batch))

        hits = self.cache.get_many(keys) if self.cache is not None else {}
        groups: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            if k in hits:
                records[i] = _ok_record(batch[i].id, hits[k], attempts=0, elapsed=0.0, cached=True)
            else:
                groups.setdefault(k, []).append(i)

        progress = _Progress(
            self.console, len(batch), enabled=not self.quiet and self.console.is_terminal
        )
        for r in records:
            if r is not None:
                self._finish(r, stats, progress)

        queue = deque(groups.items())
        limiter = _RateLimiter(self.rpm) if self.rpm else None
        rng = random.Random(self.seed)

        async def worker() -> None:
            while queue:
                key, idxs = queue.popleft()
                first = batch[idxs[0]]
                rec = await self._call(first, limiter, rng, stats)
                if rec.ok and self.cache is not None:
                    self.cache.put(key, identity, _response_of(rec))
                for n, i in enumerate(idxs):
                    if n == 0:
                        r = rec if batch[i].id == rec.id else _replace_id(rec, batch[i].id)
                    else:  # same prompt and params as the first: shares its answer
                        r = _replace_id(rec, batch[i].id, attempts=0, cached=rec.ok)
                    records[i] = r
                    self._finish(r, stats, progress)

        with progress:
            n_workers = min(self.max_concurrency, len(queue))
            await asyncio.gather(*(worker() for _ in range(n_workers)))
        stats.elapsed = time.perf_counter() - t0
        if not self.quiet and self.console.is_terminal:
            self.console.print(_summary_line(stats), highlight=False)
        out = [r for r in records if r is not None]
        if len(out) != len(batch):  # cannot happen unless a worker died; never return a short list
            raise RuntimeError(f"runner finished {len(out)} of {len(batch)} items")
        return out

    # -- internals --------------------------------------------------------------------

    def _finish(self, r: Record, stats: RunStats, progress: _Progress) -> None:
        stats.ok += r.ok
        stats.errors += not r.ok
        stats.cached += r.cached
        stats.prompt_tokens += r.usage.prompt_tokens or 0
        stats.completion_tokens += r.usage.completion_tokens or 0
        progress.advance(stats)
        if self.on_record is not None:
            self.on_record(r)

    async def _call(
        self, item: Item, limiter: _RateLimiter | None, rng: random.Random, stats: RunStats
    ) -> Record:
        t_start = time.perf_counter()
        attempts = 0
        params = dict(item.params)
        while True:
            attempts += 1
            if limiter is not None:
                await limiter.acquire()
            stats.calls += 1
            t_attempt = time.perf_counter()
            try:
                async with asyncio.timeout(self.timeout):
                    resp = await self.model.chat(item.messages, **params)
                if not isinstance(resp, ChatResponse):
                    raise CallError(
                        "model", f"model returned {type(resp).__name__}, not a ChatResponse"
                    )
                return _ok_record(
                    item.id,
                    resp,
                    attempts=attempts,
                    elapsed=time.perf_counter() - t_start,
                    cached=False,
                )
            except CallError as e:
                err = e
            except TimeoutError:
                err = CallError("timeout", f"no answer within {self.timeout:g} s", retryable=True)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a model bug must not lose the item
                err = CallError("model", f"{type(e).__name__}: {e}")
            last_latency = time.perf_counter() - t_attempt
            if not err.retryable or attempts > self.retry.max_retries:
                message = (
                    err.message if attempts == 1 else f"{err.message} (after {attempts} attempts)"
                )
                return Record(
                    item.id,
                    False,
                    error_kind=err.kind,
                    status=err.status,
                    error=message,
                    attempts=attempts,
                    latency=last_latency,
                    elapsed=time.perf_counter() - t_start,
                )
            stats.retries += 1
            await asyncio.sleep(self.retry.delay(attempts, err.retry_after, rng))


def run_items(
    model: ChatModel | str | None, items: Iterable[Item | Mapping[str, Any]], **runner_options: Any
) -> list[Record]:
    """One-call convenience: build the model from a spec if needed and run the items.

    Example:
        >>> run_items("http://127.0.0.1:9/v1#m", [], quiet=True, cache=None)
        []
    """
    from assay.llm.models.spec import load_model

    m = load_model(model) if model is None or isinstance(model, str) else model
    return Runner(m, **runner_options).run(items)


def _open_cache(cache: ResponseCache | str | Path | bool | None) -> ResponseCache | None:
    if cache is None or cache is False:
        return None
    if isinstance(cache, ResponseCache):
        return cache
    if cache is True:
        from assay.store.config import default_cache_path

        return ResponseCache(default_cache_path())
    return ResponseCache(cache)


def _as_items(items: Iterable[Item | Mapping[str, Any]]) -> list[Item]:
    out: list[Item] = []
    seen: set[str] = set()
    for pos, it in enumerate(items, start=1):
        if isinstance(it, Item):
            item = Item(str(it.id), tuple(it.messages), dict(it.params))
            _check_messages(item, it.id, "items")
        else:
            item = Item.from_dict(it, position=pos)
        if item.id in seen:
            raise InvalidInputError("duplicate id", source="items", record=pos, field="id")
        seen.add(item.id)
        out.append(item)
    return out


def _ok_record(
    id: str, resp: ChatResponse, *, attempts: int, elapsed: float, cached: bool
) -> Record:
    return Record(
        id,
        True,
        text=resp.text,
        attempts=attempts,
        latency=resp.latency,
        elapsed=elapsed,
        usage=resp.usage,
        cached=cached,
        raw=resp.raw,
    )


def _response_of(rec: Record) -> ChatResponse:
    return ChatResponse(rec.text or "", rec.usage, rec.latency or 0.0, rec.raw)


def _replace_id(rec: Record, id: str, **changes: Any) -> Record:
    from dataclasses import replace

    return replace(rec, id=id, **changes)


def _summary_line(s: RunStats) -> str:
    rate = s.calls / s.elapsed if s.elapsed > 0 else 0.0
    return (
        f"{s.items} items: {s.ok} ok, {s.errors} errors, {s.cached} cached; "
        f"{s.calls} calls ({s.retries} retries, {rate:.1f} calls/s) in {s.elapsed:.1f} s; "
        f"tokens: {s.prompt_tokens} prompt + {s.completion_tokens} completion = {s.total_tokens}"
    )


class _Progress:
    """A rich progress bar that does nothing when disabled."""

    def __init__(self, console: Console, total: int, *, enabled: bool) -> None:
        self.enabled = enabled and total > 0
        self.total = total
        self._t0 = time.perf_counter()
        self._bar: Any = None
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]LLM calls"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("errors: {task.fields[errors]}"),
                TextColumn("{task.fields[rate]:.1f} calls/s"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=False,
            )
            self._task = self._bar.add_task("calls", total=total, errors=0, rate=0.0)

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, stats: RunStats) -> None:
        if self._bar is None:
            return
        dt = time.perf_counter() - self._t0
        self._bar.update(
            self._task, advance=1, errors=stats.errors, rate=stats.calls / dt if dt > 0 else 0.0
        )
