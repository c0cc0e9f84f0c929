"""Fixtures for the pairwise tests: a scripted judge on a real loopback server, isolated homes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import scripted_judge

DEVBENCH = Path(__file__).resolve().parents[1] / "data" / "devbench"


@pytest.fixture
def judge_server() -> Iterator[Callable[..., FakeChatServer]]:
    """Factory: ``judge_server(**kw)`` starts a FakeChatServer answering as the scripted judge."""
    started: list[FakeChatServer] = []

    def make(**kw) -> FakeChatServer:  # type: ignore[no-untyped-def]
        kw.setdefault("hang_seconds", 5.0)
        kw.setdefault("responder", scripted_judge())
        srv = FakeChatServer(**kw).start()
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
