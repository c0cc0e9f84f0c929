"""Pairwise test fixtures: the scripted judge on the shared loopback chat_server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import scripted_judge

DEVBENCH = Path(__file__).resolve().parents[1] / "data" / "devbench"


@pytest.fixture
def judge_server(chat_server: Callable[..., FakeChatServer]) -> Callable[..., FakeChatServer]:
    """Factory: ``judge_server(**kw)``, a loopback chat server answering as the scripted judge."""

    def make(**kw: Any) -> FakeChatServer:
        kw.setdefault("responder", scripted_judge())
        return chat_server(**kw)

    return make
