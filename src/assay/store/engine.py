"""Connecting to the store's database: SQLite (WAL, ``BEGIN IMMEDIATE``) or PostgreSQL.

A store opened for reading (``create=False``) is opened read-only and changes nothing on
disk, so a store in a read-only folder (an archive, a shared folder, another user's
store) can be listed, compared and reported.

Every failure to reach the database is a :class:`StoreError` naming the store (with any
password hidden): a folder where the SQLite file should be, a file where its folder
should be, a driver that is not installed, a server that refuses.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import StaticPool

from assay.errors import AssayError
from assay.io.files import is_special_file
from assay.io.urls import mask_credentials
from assay.store.config import sqlite_path

__all__ = [
    "StoreError",
    "open_engines",
    "display_url",
    "short_error",
]


class StoreError(AssayError):
    """The evaluation store cannot be reached or refused an operation."""


def display_url(url: str) -> str:
    """The URL with any password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return mask_credentials(url) or ""


def short_error(e: BaseException) -> str:
    """The first line of a database error, passwords masked."""
    text = str(getattr(e, "orig", None) or e).strip().splitlines()
    return mask_credentials(text[0]) or "" if text else type(e).__name__


def open_engines(url: str, *, create: bool) -> tuple[Engine, Engine]:
    """(write engine, read engine). SQLite: WAL, busy timeout, BEGIN IMMEDIATE for writes.

    With ``create=False`` the store is opened for reading only, and nothing on disk
    changes: a SQLite file that does not exist is a :class:`StoreError` (no folder, no
    empty database is made), the file is opened read-only (:func:`_read_only_uri`; its
    journal mode is left as it is), and both engines are that read-only one. A
    PostgreSQL session is then read-only too.
    """
    if not url.startswith("sqlite"):
        args = {} if create else {"options": "-c default_transaction_read_only=on"}
        try:
            eng = create_engine(url, pool_pre_ping=True, connect_args=args)
        except ImportError as e:
            raise StoreError(
                f"cannot open the evaluation store at {display_url(url)}: its database "
                f"driver is not installed ({e.name or e})"
            ) from None
        return eng, eng
    path = sqlite_path(url)
    if path is None:
        eng = create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
        _sqlite_events(eng, begin="BEGIN", wal=True)
        return eng, eng
    _check_sqlite_path(path, create=create)
    if not create:
        uri = _read_only_uri(path)
        read = create_engine(
            url, creator=lambda: sqlite3.connect(uri, uri=True, timeout=60, check_same_thread=False)
        )
        _sqlite_events(read, begin="BEGIN", wal=False)
        return read, read
    write = create_engine(url, connect_args={"timeout": 60})
    read = create_engine(url, connect_args={"timeout": 60})
    _sqlite_events(write, begin="BEGIN IMMEDIATE", wal=True)
    _sqlite_events(read, begin="BEGIN", wal=True)
    return write, read


def _read_only_uri(path: Path) -> str:
    """A SQLite URI opening ``path`` read-only: ``mode=ro``; ``immutable=1`` where SQLite
    could not keep its shared-memory file beside it (a read-only folder: an archive, a
    shared or another user's folder), unless a write-ahead log there holds pages that
    ``immutable`` would skip."""
    folder_writable = os.access(path.parent, os.W_OK)
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    live_wal = wal.exists() and wal.stat().st_size > 0 and shm.exists()
    flag = "mode=ro" if folder_writable or live_wal else "immutable=1"
    return f"file:{quote(str(path.resolve()))}?{flag}"


def _check_sqlite_path(path: Path, *, create: bool) -> None:
    where = f"evaluation store {path}"
    if path.is_dir():
        raise StoreError(f"{where}: is a directory, expected a SQLite file")
    if is_special_file(path):  # /dev/null, a FIFO: SQLite cannot keep a database there
        raise StoreError(f"{where}: not a regular file; a SQLite database needs one")
    if not create:
        if not path.exists():
            raise StoreError(f"{where}: no such store (nothing has been saved there yet)")
        return
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StoreError(f"{where}: {parent} is a file, not a folder")
            break
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"{where}: cannot create its folder ({e.strerror})") from None


def _sqlite_events(engine: Engine, *, begin: str, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _rec: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 60000")
        if wal:  # a writer's choice, kept in the file: a reader never changes it
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)
