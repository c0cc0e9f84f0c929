"""Judge test fixtures: the scripted judge (tests/judge/judgekit.py) on a loopback server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judgekit import ScriptedJudge


@pytest.fixture(scope="module")
def _server() -> Iterator[ScriptedJudge]:
    j = ScriptedJudge()
    with j.server:
        yield j


@pytest.fixture()
def scripted(_server: ScriptedJudge) -> Iterator[ScriptedJudge]:
    _server.reset()
    yield _server
    _server.reset()
