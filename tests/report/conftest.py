"""Report fixtures: one store with real runs of every kind (built once per module), and
Debian's chromium driven over CDP by playwright (never a downloaded browser)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reportkit
from reportkit import CHROMIUM, CHROMIUM_ARGS

from assay.testing.llm import FakeChatServer


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict]]:
    """``(url, {kind: [ids]})``: every kind, LLM kinds through a scripted loopback server."""
    tmp = tmp_path_factory.mktemp("report-store")
    url = f"sqlite:///{tmp / 'store.db'}"
    started: list[FakeChatServer] = []

    def server(plan: Any = None, **kw: Any) -> FakeChatServer:
        srv = FakeChatServer(plan, hang_seconds=5.0, **kw).start()
        started.append(srv)
        return srv

    try:
        ids = reportkit.fill(url, server, tmp)
    finally:
        for srv in started:
            srv.stop()
    yield url, ids


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian chromium over CDP (``make test`` installs it when missing)."""
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"{CHROMIUM} not installed (make test installs Debian's chromium package)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install 'assay[dev]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()
