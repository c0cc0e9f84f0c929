"""Store fixtures: a fresh SQLite file, and a real PostgreSQL server started for the session.

PostgreSQL comes from Debian's ``postgresql`` package (``make test`` installs it when
missing). initdb/postgres refuse to run as root, so as root they run as the
``postgres`` user. The server listens on a free port on 127.0.0.1, with its data in a
temporary folder, and is stopped and deleted when the session ends. Set
``ASSAY_SKIP_POSTGRES=1`` to skip the PostgreSQL half where it cannot be installed.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _pg_bindir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    which = shutil.which("initdb")
    return Path(which).resolve().parent if which else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on 127.0.0.1; yields its base URL (no database)."""
    bindir = _pg_bindir()
    if bindir is None:
        if os.environ.get("ASSAY_SKIP_POSTGRES"):
            pytest.skip("PostgreSQL binaries not installed and ASSAY_SKIP_POSTGRES is set")
        pytest.fail(
            "PostgreSQL binaries not found: run `make postgres` (apt-get install postgresql)"
        )
    base = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    data, log = base / "data", base / "postgres.log"
    as_root = os.geteuid() == 0
    if as_root:
        shutil.chown(base, "postgres", "postgres")

    def cmd(*args: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *args] if as_root else list(args)

    subprocess.run(
        cmd(
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        ),
        check=True,
        capture_output=True,
    )
    port = _free_port()
    opts = (
        f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    subprocess.run(
        cmd(
            str(bindir / "pg_ctl"),
            "start",
            "-w",
            "-t",
            "60",
            "-D",
            str(data),
            "-l",
            str(log),
            "-o",
            opts,
        ),
        check=True,
        capture_output=True,
    )
    try:
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(
                    f"host=127.0.0.1 port={port} user=postgres dbname=postgres", connect_timeout=2
                ).close()
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            cmd(str(bindir / "pg_ctl"), "stop", "-m", "fast", "-w", "-D", str(data)),
            capture_output=True,
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database on the session's PostgreSQL server."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{postgres_server}/{name}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty store, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("postgres_url"))
