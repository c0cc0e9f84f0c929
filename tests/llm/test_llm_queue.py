"""A timeout counts from when a call starts: calls queued behind a one-at-a-time model wait
without failing (the embedded model at concurrency > 1)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from assay.llm import ChatResponse, Item, RetryPolicy, Runner, Usage
from assay.llm.models.clock import attempt_clock, untimed
from assay.llm.models.embedded import EmbeddedChatModel


class SlowEmbedded(EmbeddedChatModel):
    """The embedded model's own queueing (``chat``) with a scripted generation: each call
    holds llama.cpp's worker thread for ``seconds`` (no weights are loaded)."""

    def __init__(self, tmp_path, seconds: float) -> None:
        gguf = tmp_path / "scripted.gguf"
        gguf.write_bytes(b"GGUF scripted")
        super().__init__(gguf)
        self.seconds = seconds
        self.inside = self.most_inside = 0
        self.started: list[float] = []
        self._count = threading.Lock()

    def _complete(self, messages, params):
        with self._count:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            self.started.append(time.perf_counter())
        time.sleep(self.seconds)
        with self._count:
            self.inside -= 1
        return ChatResponse(f"done: {messages[-1]['content']}", Usage(1, 1), self.seconds)


def test_queued_calls_wait_without_timing_out(tmp_path):
    # 8 calls of 0.2 s, one at a time, 4 sent at once: the 4th of a wave waits 0.6 s for
    # its turn, longer than the 0.5 s timeout, which is longer than one call.
    model = SlowEmbedded(tmp_path, 0.2)
    items = [Item.from_prompt(str(i), f"q{i}") for i in range(8)]
    t0 = time.perf_counter()
    recs = Runner(
        model, max_concurrency=4, timeout=0.5, cache=None, quiet=True, retry=RetryPolicy(0)
    ).run(items)
    wall = time.perf_counter() - t0
    assert [r.error for r in recs] == [None] * 8
    assert [r.text for r in recs] == [f"done: q{i}" for i in range(8)]
    assert all(r.attempts == 1 for r in recs)
    assert model.most_inside == 1  # the model still saw one call at a time
    assert max(r.elapsed for r in recs) > 0.5  # some calls did wait longer than the timeout
    assert wall >= 8 * 0.2


def test_a_started_call_still_times_out_and_frees_the_model_when_done(tmp_path):
    # the timeout still bounds the call itself; the next call starts when the model is free
    model = SlowEmbedded(tmp_path, 0.4)
    items = [Item.from_prompt(str(i), f"q{i}") for i in range(2)]
    recs = Runner(
        model, max_concurrency=2, timeout=0.25, cache=None, quiet=True, retry=RetryPolicy(0)
    ).run(items)
    assert [r.error_kind for r in recs] == ["timeout", "timeout"]
    assert model.most_inside == 1
    assert model.started[1] - model.started[0] >= 0.39  # the second waited for the first


def test_untimed_outside_a_runner_attempt_does_nothing():
    async def main() -> str:
        async with untimed():
            await asyncio.sleep(0)
        return "ok"

    assert asyncio.run(main()) == "ok"


def test_the_clock_restarts_in_full_after_the_wait():
    async def attempt(wait: float, work: float) -> None:
        async with attempt_clock(0.2):
            await asyncio.sleep(0.05)  # timed
            async with untimed():
                await asyncio.sleep(wait)  # not timed
            await asyncio.sleep(work)  # timed, with the whole 0.2 s again

    asyncio.run(attempt(0.3, 0.15))
    with pytest.raises(TimeoutError):
        asyncio.run(attempt(0.0, 0.3))
