"""Killing a run mid-way at a known point, for resume tests: :func:`kill_when_cached`;
and the signal state Ctrl-C tests need (:func:`shell_signals`, :func:`ctrl_c_ready`).

A :class:`~assay.testing.llm.FakeChatServer` with ``answer_limit=N`` answers N calls and
holds the rest; :func:`kill_when_cached` SIGKILLs the command once the response cache
holds those N answers, so exactly N calls were paid when it dies.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["cached_responses", "ctrl_c_ready", "kill_when_cached", "shell_signals"]

_STOP = (signal.SIGINT, signal.SIGTERM)


def shell_signals() -> None:
    """``preexec_fn`` for a command a test signals: SIGINT and SIGTERM as a process started
    from an interactive shell has them (default action, not blocked). A child inherits an
    ignored or blocked signal from the test process, where a library may have left one."""
    for s in _STOP:
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP)


@contextmanager
def ctrl_c_ready() -> Iterator[None]:
    """Python's own SIGINT handler, SIGINT unblocked, for a test that raises SIGINT in its
    own process; the previous handler and mask are put back after."""
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, handler)


def cached_responses(path: str | Path) -> int:
    """How many answers a response cache file holds (0 while it does not exist yet)."""
    p = Path(path)
    if not p.exists():
        return 0
    try:
        with sqlite3.connect(str(p), timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # table not created yet
        return 0


def kill_when_cached(
    cmd: Sequence[str],
    cache: str | Path,
    answered: int,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
) -> int:
    """Run ``cmd``, SIGKILL it once ``cache`` holds ``answered`` answers; its return code.

    For resume tests: a :class:`FakeChatServer` with ``answer_limit=answered`` answers that
    many calls and holds the rest, so the kill lands mid-run with exactly ``answered`` paid.
    """
    proc = subprocess.Popen(list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + timeout
        while cached_responses(cache) < answered:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise AssertionError(f"the run ended before the kill: {err}")
            if time.monotonic() > deadline:
                raise AssertionError("the answered calls were never cached")
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode
