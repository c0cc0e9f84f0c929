"""Fixtures for the LLM runtime tests: a real loopback chat-completions server with faults."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from assay.testing.llm import FakeChatServer


@pytest.fixture
def chat_server() -> Iterator[Callable[..., FakeChatServer]]:
    """Factory: ``chat_server(plan={...}, latency=...)`` starts a FakeChatServer on 127.0.0.1."""
    started: list[FakeChatServer] = []

    def make(plan=None, **kw) -> FakeChatServer:  # type: ignore[no-untyped-def]
        kw.setdefault("hang_seconds", 5.0)
        srv = FakeChatServer(plan, **kw).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture(autouse=True)
def _isolated_assay_home(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """Never touch the user's store or cache."""
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "assay-home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.delenv("ASSAY_LLM_CACHE", raising=False)
    monkeypatch.delenv("ASSAY_MODEL", raising=False)


@pytest.fixture(scope="session", autouse=True)
def _warm_http_client() -> None:
    """Pay the openai SDK's and HTTP stack's one-time lazy imports before any timed call."""
    import asyncio

    from assay.llm.models import load_model

    with FakeChatServer() as srv:
        model = load_model(srv.spec())
        asyncio.run(model.chat([{"role": "user", "content": "warm-up"}]))
