"""LLM runtime tests: warm the HTTP stack once (the chat_server factory is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from assay.testing.llm import FakeChatServer


@pytest.fixture(scope="session", autouse=True)
def _warm_http_client() -> None:
    """Pay the openai SDK's and HTTP stack's one-time lazy imports before any timed call."""
    import asyncio

    from assay.llm.models import load_model

    with FakeChatServer() as srv:
        model = load_model(srv.spec())
        asyncio.run(model.chat([{"role": "user", "content": "warm-up"}]))
