"""Fixtures every test shares: an isolated assay home, and a loopback chat server factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.testing.llm import FakeChatServer


@pytest.fixture(autouse=True)
def _isolated_assay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the user's store, cache or default model: each gets its own home."""
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "assay-home"))
    for name in ("ASSAY_DATABASE_URL", "ASSAY_LLM_CACHE", "ASSAY_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(params=["compiled", "pure"])
def native_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test twice: with assay's compiled COCO kernels (:mod:`assay.io.native`) and
    with ``ASSAY_NO_NATIVE=1`` (its pure path). Use it through
    ``pytestmark = pytest.mark.usefixtures("native_path")`` in a module whose tests run the
    code in-process (CliRunner), where the variable reaches it."""
    if request.param == "pure":
        monkeypatch.setenv("ASSAY_NO_NATIVE", "1")
    else:
        monkeypatch.delenv("ASSAY_NO_NATIVE", raising=False)
    return str(request.param)


@pytest.fixture
def chat_server() -> Iterator[Callable[..., FakeChatServer]]:
    """Factory: ``chat_server(plan=..., responder=..., latency=...)`` on 127.0.0.1.

    Every server it starts is stopped when the test ends; a hung reply gives up after 5 s.
    """
    started: list[FakeChatServer] = []

    def make(plan: Any = None, **kw: Any) -> FakeChatServer:
        kw.setdefault("hang_seconds", 5.0)
        srv = FakeChatServer(plan, **kw).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()
