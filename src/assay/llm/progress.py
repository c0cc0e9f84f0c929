"""The runner's progress bar (on a terminal) and its one-line summary."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console

from assay.llm.policy import RunStats

__all__ = ["Progress", "summary_line"]


def summary_line(s: RunStats) -> str:
    rate = s.calls / s.elapsed if s.elapsed > 0 else 0.0
    return (
        f"{s.items} items: {s.ok} ok, {s.errors} errors, {s.cached} cached; "
        f"{s.calls} calls ({s.retries} retries, {rate:.1f} calls/s) in {s.elapsed:.1f} s; "
        f"tokens: {s.prompt_tokens} prompt + {s.completion_tokens} completion = {s.total_tokens}"
    )


class Progress:
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

    def __enter__(self) -> Progress:
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
