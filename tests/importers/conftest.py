"""Real Inspect AI logs, made once per test session by inspect-ai itself (offline, no
model call: see make_inspect_logs.py), and a store per test."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def made_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("inspect_ai")
    out = tmp_path_factory.mktemp("inspect_logs")
    subprocess.run(
        [sys.executable, str(HERE / "make_inspect_logs.py"), str(out)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return out


@pytest.fixture
def logs(made_logs: Path, tmp_path: Path) -> Path:
    """A fresh copy of the made logs (a test may damage its own)."""
    dest = tmp_path / "logs"
    shutil.copytree(made_logs, dest)
    return dest


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"
