"""Retry timing, rate limiting and the counters of a run.

Example:
    >>> import random
    >>> p = RetryPolicy(backoff_base=1.0, backoff_max=8.0)
    >>> 2.0 <= p.delay(3, None, random.Random(0)) <= 4.0
    True
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.items import Record

__all__ = ["RetryPolicy", "RunStats", "summarize", "RateLimiter"]


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

    def __post_init__(self) -> None:
        for name in ("max_retries", "backoff_base", "backoff_max", "max_retry_after"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0:
                raise InvalidInputError(f"must be >= 0, got {value!r}", source="retry", field=name)

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
        >>> from assay.llm.models.base import Usage
        >>> ok = Record("a", True, "x", usage=Usage(3, 2), attempts=2)
        >>> s = summarize([ok, Record("b", False, error_kind="http")])
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


class RateLimiter:
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
