"""A call's timeout counts from when the model starts on it, not while it waits its turn.

The runner gives every attempt ``timeout`` seconds. A model that runs fewer calls at once
than the runner sends (the embedded model runs one) queues the others; that wait is not
the call's time. Inside ``async with untimed():`` the running attempt's clock is
stopped, and when the block ends the attempt gets its whole ``timeout`` from then on.
Outside a runner attempt (a model called directly) ``untimed()`` does nothing.

Example:
    >>> import asyncio
    >>> async def attempt():
    ...     async with attempt_clock(0.05):
    ...         async with untimed():
    ...             await asyncio.sleep(0.1)  # waiting for a slot: longer than the timeout
    ...         await asyncio.sleep(0.02)  # the call itself: within it
    ...     return "answered"
    >>> asyncio.run(attempt())
    'answered'
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["attempt_clock", "untimed"]

_CLOCK: ContextVar[tuple[asyncio.Timeout, float] | None] = ContextVar(
    "assay_llm_attempt_clock", default=None
)


class attempt_clock:  # noqa: N801  (used as a function: ``async with attempt_clock(s):``)
    """``asyncio.timeout(seconds)`` that :func:`untimed` can stop and restart (the runner's)."""

    __slots__ = ("_cm", "_seconds", "_token")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._cm = asyncio.timeout(seconds)

    async def __aenter__(self) -> None:
        await self._cm.__aenter__()
        self._token = _CLOCK.set((self._cm, self._seconds))

    async def __aexit__(self, *exc: Any) -> None:
        _CLOCK.reset(self._token)
        await self._cm.__aexit__(*exc)  # raises TimeoutError when the time ran out


@asynccontextmanager
async def untimed() -> AsyncIterator[None]:
    """Stop the running attempt's clock for the block; restart it, in full, after it."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    cm, seconds = clock
    if not cm.expired():
        cm.reschedule(None)
    try:
        yield
    finally:
        if not cm.expired():
            cm.reschedule(asyncio.get_running_loop().time() + seconds)
