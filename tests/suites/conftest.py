"""Fixtures of the LLM suite tests: a scripted loopback chat server, an isolated store and cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.testing.llm import FakeChatServer


@pytest.fixture
def chat_server() -> Iterator[Callable[..., FakeChatServer]]:
    """Factory: ``chat_server(plan=..., responder=..., latency=...)`` on 127.0.0.1."""
    started: list[FakeChatServer] = []

    def make(plan: Any = None, **kw: Any) -> FakeChatServer:
        kw.setdefault("hang_seconds", 5.0)
        srv = FakeChatServer(plan, **kw).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture(autouse=True)
def _isolated_assay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's store or cache."""
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "assay-home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.delenv("ASSAY_LLM_CACHE", raising=False)
    monkeypatch.delenv("ASSAY_MODEL", raising=False)
