"""Ctrl-C stops a run whatever SIGINT handler the process had, except one ignoring it on
purpose; the handlers the run replaced are put back after it."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from assay.llm.interrupt import RunInterrupted, run_interruptible
from assay.llm.items import Item
from assay.llm.models.base import ChatResponse, Usage
from assay.llm.runner import Runner
from assay.testing.llm_resume import ctrl_c_ready


class SelfInterrupting:
    """Answers with the prompt; raises SIGINT in this process at its third call."""

    name = identity = "self-interrupting"

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, messages: Any, **params: Any) -> ChatResponse:
        self.calls += 1
        if self.calls == 3:
            signal.raise_signal(signal.SIGINT)
        await asyncio.sleep(0)
        return ChatResponse(str(messages[-1]["content"]), Usage(1, 1), 0.0)


ITEMS = [Item.from_prompt(f"q{i}", f"prompt {i}") for i in range(8)]


@pytest.fixture
def restore_sigint() -> Iterator[None]:
    with ctrl_c_ready():  # SIGINT unblocked (a library may have left it blocked); put back
        yield


def _runner(model: SelfInterrupting, concurrency: int = 1) -> Runner:
    return Runner(model, cache=None, quiet=True, max_concurrency=concurrency)


def test_a_foreign_sigint_handler_does_not_swallow_ctrl_c(restore_sigint: None) -> None:
    """A library's handler that only takes note (and would let the run go on) is replaced
    for the run: the run stops, and the library's handler is back afterwards."""
    seen: list[int] = []

    def foreign(signum: int, frame: Any) -> None:
        seen.append(signum)

    signal.signal(signal.SIGINT, foreign)
    model = SelfInterrupting()
    with pytest.raises(RunInterrupted) as stop:
        run_interruptible(_runner(model), ITEMS)
    assert stop.value.signum == signal.SIGINT
    assert 2 <= stop.value.finished < len(ITEMS) and model.calls < len(ITEMS)
    assert seen == [] and signal.getsignal(signal.SIGINT) is foreign


def test_a_sigint_ignored_on_purpose_stays_ignored(restore_sigint: None) -> None:
    """As a shell's background job: SIG_IGN is the process's choice, the run goes on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    model = SelfInterrupting()
    records = run_interruptible(_runner(model), ITEMS)
    assert [r.text for r in records] == [f"prompt {i}" for i in range(8)]
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_the_default_handler_is_put_back(restore_sigint: None) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    term = signal.getsignal(signal.SIGTERM)
    with pytest.raises(RunInterrupted):
        run_interruptible(_runner(SelfInterrupting()), ITEMS)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is term


def test_a_signal_inside_a_call_leaves_no_task_holding_it(
    restore_sigint: None, caplog: pytest.LogCaptureFixture
) -> None:
    """The signal lands while a call's own code runs (not while the loop waits): the run's
    tasks are cancelled from the loop, so asyncio has no "exception was never retrieved"
    traceback to print when the tasks are collected."""
    import gc
    import logging

    signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupted() -> int:
        try:
            run_interruptible(_runner(SelfInterrupting(), concurrency=2), ITEMS)
        except RunInterrupted as stop:
            return stop.signum
        return 0

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        assert interrupted() == signal.SIGINT
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
