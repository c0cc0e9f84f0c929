"""The runner's progress: a bar on a terminal, a plain line every few seconds elsewhere
(CI logs, ``make demo`` piped to a file), and its one-line summary.

Off a terminal, a line such as ``LLM calls: 40/120 done, 1 errors, 2.1 calls/s, ETA 38 s``
is printed when a call finishes at least ``ASSAY_PROGRESS_INTERVAL`` seconds (default 5)
after the previous line; a run shorter than that prints nothing.

Example:
    >>> progress_line(40, 120, 1, 20.0)
    'LLM calls: 40/120 done, 1 errors, 2.0 calls/s, ETA 40 s'
    >>> progress_line(2, 6, 0, 20.0)
    'LLM calls: 2/6 done, 0 errors, 10.0 s/call, ETA 40 s'
"""

from __future__ import annotations

import os
import time
from typing import Any

from rich.console import Console

from assay.llm.policy import RunStats

__all__ = ["Progress", "summary_line", "progress_line"]

#: Seconds between two progress lines off a terminal (``$ASSAY_PROGRESS_INTERVAL``).
DEFAULT_INTERVAL = 5.0


def _interval() -> float:
    try:
        return max(0.0, float(os.environ.get("ASSAY_PROGRESS_INTERVAL", DEFAULT_INTERVAL)))
    except ValueError:
        return DEFAULT_INTERVAL


def _duration(seconds: float) -> str:
    s = round(seconds)
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


def progress_line(done: int, total: int, errors: int, elapsed: float) -> str:
    """One progress line: done/total, errors, rate (seconds per call below one a second), ETA.

    Example:
        >>> progress_line(3, 10, 0, 30.0)
        'LLM calls: 3/10 done, 0 errors, 10.0 s/call, ETA 1 min 10 s'
    """
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = _duration((total - done) / rate) if rate > 0 else "unknown"
    speed = f"{rate:.1f} calls/s" if rate >= 1 or rate == 0 else f"{1 / rate:.1f} s/call"
    return f"LLM calls: {done}/{total} done, {errors} errors, {speed}, ETA {eta}"


def summary_line(s: RunStats) -> str:
    rate = s.calls / s.elapsed if s.elapsed > 0 else 0.0
    return (
        f"{s.items} items: {s.ok} ok, {s.errors} errors, {s.cached} cached; "
        f"{s.calls} calls ({s.retries} retries, {rate:.1f} calls/s) in {s.elapsed:.1f} s; "
        f"tokens: {s.prompt_tokens} prompt + {s.completion_tokens} completion = {s.total_tokens}"
    )


class Progress:
    """A rich progress bar on a terminal, plain timed lines elsewhere; nothing when disabled.

    ``printed`` counts the plain lines written (the runner then also prints its summary).
    """

    def __init__(self, console: Console, total: int, *, enabled: bool) -> None:
        self.enabled = enabled and total > 0
        self.total = total
        self._t0 = time.perf_counter()
        self._bar: Any = None
        self._console = console
        self._lines = self.enabled and not console.is_terminal
        self._interval = _interval()
        self._last = self._t0
        self._done = 0
        self.printed = 0
        if self.enabled and not self._lines:
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

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, stats: RunStats) -> None:
        self._done += 1
        if self._lines:
            now = time.perf_counter()
            if now - self._last >= self._interval or (self.printed and self._done == self.total):
                self._last = now
                line = progress_line(self._done, self.total, stats.errors, now - self._t0)
                print(line, file=self._console.file, flush=True)
                self.printed += 1
            return
        if self._bar is None:
            return
        dt = time.perf_counter() - self._t0
        self._bar.update(
            self._task, advance=1, errors=stats.errors, rate=stats.calls / dt if dt > 0 else 0.0
        )
