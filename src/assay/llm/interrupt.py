"""Stopping a run cleanly on Ctrl-C (SIGINT) or SIGTERM.

:func:`run_interruptible` runs items through a :class:`~assay.llm.runner.Runner`; when
the process is asked to stop it cancels the calls in flight, closes the response cache
(every answer received so far is already committed there), and raises
:class:`RunInterrupted` carrying one record per item: the finished ones as they are,
the others with ``error_kind="interrupted"``. Running the same items again resumes: the
cached answers are not paid for twice.

The bound after ``kill -9`` (which cannot be caught): answers are committed to the cache
in one transaction at most 50 ms after they arrive, so only the calls in flight and the
answers of the last 50 ms before the kill can be paid again on resume.

Example:
    >>> from assay.llm.models.base import ChatResponse, Usage
    >>> class Echo:
    ...     name = identity = "echo"
    ...     async def chat(self, messages, **params):
    ...         return ChatResponse(messages[-1]["content"], Usage(1, 1), 0.0)
    >>> from assay.llm.runner import Runner
    >>> from assay.llm.items import Item
    >>> [r.text for r in run_interruptible(Runner(Echo(), cache=None, quiet=True),
    ...                                    [Item.from_prompt("a", "hi")])]
    ['hi']
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Sequence
from typing import Any

from assay.llm.items import Item, Record
from assay.llm.models.base import INTERRUPTED

__all__ = ["RunInterrupted", "run_interruptible", "interrupted_record"]


class RunInterrupted(Exception):
    """The run was stopped by a signal; ``records`` has one record per item."""

    def __init__(self, records: list[Record], signum: int) -> None:
        self.records = records
        self.signum = signum
        self.finished = sum(r.error_kind != INTERRUPTED for r in records)
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}: {self.finished} of {len(records)} items finished")


def interrupted_record(item_id: str, signum: int) -> Record:
    """The record of an item the run did not finish."""
    name = signal.Signals(signum).name
    return Record(
        item_id,
        False,
        error_kind=INTERRUPTED,
        error=f"not finished: the run was stopped by {name}; run it again to resume",
    )


def run_interruptible(runner: Any, items: Sequence[Item]) -> list[Record]:
    """``runner.run(items)``, turning SIGINT/SIGTERM into :class:`RunInterrupted`.

    On the main thread both signals go to this run's own handler while it runs (the
    previous handlers are put back after), so a handler some library left behind cannot
    swallow Ctrl-C; a SIGINT ignored on purpose (``SIG_IGN``) stays ignored."""
    done: dict[str, Record] = {}
    previous = runner.on_record

    def on_record(r: Record) -> None:
        done[r.id] = r
        if previous is not None:
            previous(r)

    received: list[int] = []

    def on_term(signum: int, frame: Any) -> None:
        received.append(signum)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the run's loop is not running (yet, or any more)
            raise KeyboardInterrupt from None
        if len(received) > 1:
            raise KeyboardInterrupt  # asked again: stop at once
        loop.call_soon_threadsafe(_cancel_every_task, loop)

    old = _install(on_term) if threading.current_thread() is threading.main_thread() else {}
    runner.on_record = on_record
    try:
        return runner.run(items)
    except (KeyboardInterrupt, asyncio.CancelledError) as stop:
        if isinstance(stop, asyncio.CancelledError) and not received:
            raise
        signum = received[0] if received else int(signal.SIGINT)
        if runner.cache is not None:
            runner.cache.close()
        records = [done.get(it.id) or interrupted_record(it.id, signum) for it in items]
        raise RunInterrupted(records, signum) from None
    finally:
        runner.on_record = previous
        for signum, handler in old.items():
            signal.signal(signum, handler)


def _cancel_every_task(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the run's tasks from inside its loop, as ``asyncio.run`` does on Ctrl-C: the
    calls in flight end, ``finally`` blocks commit what was received, and the run ends with
    ``CancelledError`` (no task is left holding a ``KeyboardInterrupt`` nobody reads)."""
    for task in asyncio.all_tasks(loop):
        task.cancel()


def _install(handler: Any) -> dict[int, Any]:
    """Our handler for SIGTERM and SIGINT for the run; the handlers it replaced.

    SIGINT is taken over too, so Ctrl-C stops a run the same way whatever handler a
    library left in the process; only a SIGINT the process ignores on purpose (``SIG_IGN``,
    as a shell does for a background job) stays ignored."""
    replaced = {int(signal.SIGTERM): signal.signal(signal.SIGTERM, handler)}
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        replaced[int(signal.SIGINT)] = signal.signal(signal.SIGINT, handler)
    return replaced
