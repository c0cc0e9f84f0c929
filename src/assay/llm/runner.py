"""Run many chat calls: concurrent, rate-limited, retried, cached, resumable, none dropped.

Items go in (id, messages, generation params); exactly one :class:`Record` per item comes
out, in input order: ``ok`` with the raw text, or an error with its kind, HTTP status and
message. Parsing answers is the caller's job.

* ``max_concurrency`` calls in flight at most; optional ``rpm`` (requests per minute)
  paces every attempt, retries included.
* Each attempt has a ``timeout``, counted from when the model starts on the call: a
  model that queues calls (the embedded model runs one at a time) stops the clock while
  a call waits its turn (:func:`~assay.llm.models.clock.untimed`). 429 (honouring
  ``Retry-After``), 408, 5xx, timeouts, dropped connections and garbled (non-JSON)
  answers are retried with exponential backoff and jitter (:class:`RetryPolicy`); 400,
  401, 403, 404, 422 are recorded at once.
* Successful answers go into a :class:`~assay.llm.cache.ResponseCache` as they arrive
  (committed in one transaction per :data:`~assay.llm.cache.FLUSH_INTERVAL`, 50 ms), so
  a re-run never pays twice and a killed run resumes where it stopped. Items with the
  same model, params and messages share one call.
* A rich progress bar (done/total, errors, calls/s, ETA) on a terminal; silent with
  ``quiet=True``; off a terminal, a plain progress line every few seconds instead of the
  bar (:mod:`assay.llm.progress`). Token totals are printed at the end.

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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.llm.cache import FLUSH_INTERVAL, ResponseCache, cache_key
from assay.llm.items import Item, Record, check_unique_ids
from assay.llm.models.base import CallError, ChatModel, ChatResponse, ask
from assay.llm.models.clock import attempt_clock
from assay.llm.policy import RateLimiter, RetryPolicy, RunStats
from assay.llm.progress import Progress, summary_line

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "Runner",
    "open_cache",
]


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
        console: where progress goes (default: stderr): a bar on a terminal, a plain
            line every few seconds otherwise.
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
        self.cache = open_cache(cache)
        self.quiet = quiet
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        self.console = console
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

        progress = Progress(self.console, len(batch), enabled=not self.quiet)
        for r in records:
            if r is not None:
                self._finish(r, stats, progress)

        queue = deque(groups.items())
        limiter = RateLimiter(self.rpm) if self.rpm else None
        rng = random.Random(self.seed)
        writer = _Writer(self.cache) if self.cache is not None else None

        async def worker() -> None:
            while queue:
                key, idxs = queue.popleft()
                first = batch[idxs[0]]
                rec = await self._call(first, limiter, rng, stats)
                if rec.ok and writer is not None:
                    writer.stage(key, identity, _response_of(rec))
                for n, i in enumerate(idxs):
                    if n == 0:
                        r = rec if batch[i].id == rec.id else _replace_id(rec, batch[i].id)
                    else:  # same prompt and params as the first: shares its answer
                        r = _replace_id(rec, batch[i].id, attempts=0, cached=rec.ok)
                    records[i] = r
                    self._finish(r, stats, progress)

        try:
            with progress:
                n_workers = min(self.max_concurrency, len(queue))
                await asyncio.gather(*(worker() for _ in range(n_workers)))
        finally:  # also when cancelled (Ctrl-C): every answer received is committed
            if writer is not None:
                writer.close()
        stats.elapsed = time.perf_counter() - t0
        if not self.quiet and (self.console.is_terminal or progress.printed):
            self.console.print(summary_line(stats), highlight=False, soft_wrap=True)
        out = [r for r in records if r is not None]
        if len(out) != len(batch):  # cannot happen unless a worker died; never return a short list
            raise RuntimeError(f"runner finished {len(out)} of {len(batch)} items")
        return out

    # -- internals --------------------------------------------------------------------

    def _finish(self, r: Record, stats: RunStats, progress: Progress) -> None:
        stats.ok += r.ok
        stats.errors += not r.ok
        stats.cached += r.cached
        stats.prompt_tokens += r.usage.prompt_tokens or 0
        stats.completion_tokens += r.usage.completion_tokens or 0
        progress.advance(stats)
        if self.on_record is not None:
            self.on_record(r)

    async def _call(
        self, item: Item, limiter: RateLimiter | None, rng: random.Random, stats: RunStats
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
                async with attempt_clock(self.timeout):  # a model may stop it while queued
                    resp = await ask(self.model, item.messages, params)  # chat or loglik
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


class _Writer:
    """Stages answers in the cache and commits them in one transaction per
    :data:`~assay.llm.cache.FLUSH_INTERVAL` (or per 1,000 answers, whichever comes first).

    A failed commit (disk full, a lock held too long) fails the run at the next answer,
    as a failed write always did; the answers stay staged for the final commit.
    """

    MAX_STAGED = 1000

    def __init__(self, cache: ResponseCache) -> None:
        self.cache = cache
        self.loop = asyncio.get_running_loop()
        self.handle: asyncio.TimerHandle | None = None
        self.error: BaseException | None = None

    def stage(self, key: str, identity: str, response: ChatResponse) -> None:
        if self.error is not None:
            raise self.error
        self.cache.stage(key, identity, response)
        if self.cache.staged >= self.MAX_STAGED:
            self.flush()
        elif self.handle is None:
            self.handle = self.loop.call_later(FLUSH_INTERVAL, self.flush)

    def flush(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        try:
            self.cache.flush()
        except Exception as e:  # raised in the run by the next stage() or by close()
            self.error = e

    def close(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.cache.flush()


def open_cache(cache: ResponseCache | str | Path | bool | None) -> ResponseCache | None:
    """The response cache a runner uses: ``True`` the default file, a path, or none.

    Example:
        >>> open_cache(False) is None
        True
    """
    if cache is None or cache is False:
        return None
    if isinstance(cache, ResponseCache):
        return cache
    path, source = cache_file(cache)
    return ResponseCache(path, source=source)


def cache_file(cache: str | Path | bool) -> tuple[Path, str]:  # True or a path
    """The file of a ``cache`` option (``True``: the default one) and how it was named.

    Example:
        >>> cache_file("c.sqlite")
        (PosixPath('c.sqlite'), '--cache c.sqlite')
    """
    if isinstance(cache, bool):
        import os

        from assay.paths import CACHE_ENV, default_cache_path

        path = default_cache_path()
        return path, (f"${CACHE_ENV} {path}" if os.environ.get(CACHE_ENV) else str(path))
    return Path(cache), f"--cache {cache}"


def check_cache(cache: ResponseCache | str | Path | bool | None) -> None:
    """Refuse, before any call and writing nothing, a cache file that is not a cache."""
    if cache is None or cache is False or isinstance(cache, ResponseCache):
        return
    path, source = cache_file(cache)
    ResponseCache.check(path, source=source)


def _as_items(items: Iterable[Item | Mapping[str, Any]]) -> list[Item]:
    out = [
        it.checked(pos) if isinstance(it, Item) else Item.from_dict(it, position=pos)
        for pos, it in enumerate(items, start=1)
    ]
    check_unique_ids(out)
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
    return replace(rec, id=id, **changes)
