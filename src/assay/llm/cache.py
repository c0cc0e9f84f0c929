"""The LLM response cache: SQLite in WAL mode, keyed by a hash of model, params and messages.

:meth:`ResponseCache.put` commits an answer before it returns. The runner instead
stages each answer as it arrives (:meth:`~ResponseCache.stage`) and commits the staged
ones (:meth:`~ResponseCache.flush`) in one transaction at most :data:`FLUSH_INTERVAL`
seconds later (one commit per answer cost more client CPU than the HTTP call itself at
high concurrency). A run killed even with SIGKILL loses only the calls in flight and
the answers of its last ``FLUSH_INTERVAL`` seconds; the re-run finds every other answer
here and calls the model only for the rest. Errors are not cached; a re-run tries them
again. Several processes may share one cache file.

Example:
    >>> import tempfile, os
    >>> from assay.llm.models.base import ChatResponse, Usage
    >>> c = ResponseCache(os.path.join(tempfile.mkdtemp(), "c.sqlite"))
    >>> k = cache_key("m", [{"role": "user", "content": "hi"}], {"temperature": 0})
    >>> c.put(k, "m", ChatResponse("hello", Usage(2, 1), 0.1))
    >>> c.get(k).text, len(c)
    ('hello', 1)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from assay.errors import InvalidInputError
from assay.io.files import check_database_file
from assay.llm.models.base import ChatResponse, Message, Usage

__all__ = ["ResponseCache", "cache_key", "FLUSH_INTERVAL"]

#: Seconds the runner lets staged answers wait before committing them in one transaction.
FLUSH_INTERVAL = 0.05

_encode_raw = msgspec.json.Encoder(enc_hook=str).encode

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency REAL NOT NULL,
    raw TEXT,
    created REAL NOT NULL
)
"""
_COLUMNS = "key, model, text, prompt_tokens, completion_tokens, latency, raw, created"


def cache_key(model_identity: str, messages: Sequence[Message], params: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``{model, params, messages}``.

    Parameters set to ``None`` are dropped, so ``{"seed": None}`` and ``{}`` share a key.
    Use a distinct parameter (e.g. ``seed``) to get independent samples of one prompt.

    Example:
        >>> cache_key("m", [{"role": "user", "content": "x"}], {"a": 1, "b": None}) == \\
        ...     cache_key("m", [{"content": "x", "role": "user"}], {"a": 1})
        True
    """
    payload = {
        "model": model_identity,
        "params": {k: v for k, v in params.items() if v is not None},
        "messages": [dict(m) for m in messages],
    }
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """A SQLite (WAL) file of successful answers, safe to share between processes.

    Args:
        path: the SQLite file (created with its folder if missing).
        source: how the file was named, for error messages (``--cache FILE``,
            ``$ASSAY_LLM_CACHE FILE``; default: the path).

    Raises:
        InvalidInputError: the file exists but is not SQLite, or is SQLite with a
            ``responses`` table that is not this cache's; the file is left as it was.
    """

    def __init__(self, path: str | Path, *, source: str | None = None) -> None:
        self.path = check_database_file(Path(path).expanduser(), what="response cache")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit, except where flush() opens a transaction for a batch.
        self._db = sqlite3.connect(
            str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.Lock()
        self._staged: list[tuple[Any, ...]] = []
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.execute(f"SELECT {_COLUMNS} FROM responses LIMIT 0")
        except sqlite3.DatabaseError as e:  # not SQLite, or another program's database
            self._db.close()
            raise _not_a_cache(e, source or str(self.path)) from None

    @staticmethod
    def check(path: str | Path, *, source: str | None = None) -> None:
        """Refuse, writing nothing, a file that exists but is not a response cache.

        Example:
            >>> import tempfile, os
            >>> p = os.path.join(tempfile.mkdtemp(), "notes.txt")
            >>> _ = open(p, "w").write("my notes")
            >>> ResponseCache.check(p, source="--cache notes.txt")
            Traceback (most recent call last):
            ...
            assay.errors.InvalidInputError: --cache notes.txt: not an assay response cache ...
        """
        p = Path(path).expanduser()
        if p.is_dir():
            raise InvalidInputError("is a directory, expected a file", source=source or str(p))
        if not p.is_file():
            return  # made on first use
        try:
            db = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as e:
            raise _not_a_cache(e, source or str(p)) from None
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            if "responses" in tables:
                db.execute(f"SELECT {_COLUMNS} FROM responses LIMIT 0")
        except sqlite3.DatabaseError as e:
            raise _not_a_cache(e, source or str(p)) from None
        finally:
            db.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def __len__(self) -> int:
        with self._lock:
            self._flush_locked()
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    @staticmethod
    def _row_to_response(row: tuple[Any, ...]) -> ChatResponse:
        text, p, c, latency, raw = row
        return ChatResponse(
            text=text, usage=Usage(p, c), latency=latency, raw=json.loads(raw) if raw else None
        )

    def get(self, key: str) -> ChatResponse | None:
        """The cached answer for ``key``, or ``None``."""
        with self._lock:
            self._flush_locked()
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, latency, raw"
                " FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        return None if row is None else self._row_to_response(row)

    def get_many(self, keys: Iterable[str]) -> dict[str, ChatResponse]:
        """Cached answers for the keys that have one."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, ChatResponse] = {}
        with self._lock:
            self._flush_locked()
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for row in self._db.execute(
                    "SELECT key, text, prompt_tokens, completion_tokens, latency, raw"
                    f" FROM responses WHERE key IN ({marks})",
                    chunk,
                ):
                    found[row[0]] = self._row_to_response(row[1:])
        return found

    def put(self, key: str, model_identity: str, response: ChatResponse) -> None:
        """Store an answer (committed before this returns, with anything staged)."""
        self.stage(key, model_identity, response)
        self.flush()

    def stage(self, key: str, model_identity: str, response: ChatResponse) -> None:
        """Queue an answer for the next :meth:`flush` (reads see it: they flush first)."""
        row = (
            key,
            model_identity,
            response.text,
            response.usage.prompt_tokens,
            response.usage.completion_tokens,
            response.latency,
            _raw_text(response.raw),
            time.time(),
        )
        with self._lock:
            self._staged.append(row)

    @property
    def staged(self) -> int:
        """How many answers wait for :meth:`flush`."""
        return len(self._staged)

    def flush(self) -> int:
        """Commit every staged answer in one transaction; returns how many."""
        with self._lock:
            return self._flush_locked()

    def _flush_locked(self) -> int:
        rows = self._staged
        if not rows:
            return 0
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")  # the rows stay staged for the next flush
            raise
        self._staged = []
        return len(rows)

    def close(self) -> None:
        """Commit what is staged and close the file."""
        with self._lock:
            try:
                self._flush_locked()
            finally:
                self._db.close()


def _raw_text(raw: Any) -> str | None:
    if raw is None:
        return None
    try:
        return _encode_raw(raw).decode("utf-8")
    except (TypeError, ValueError, OverflowError):  # what msgspec cannot encode (NaN is null)
        return json.dumps(raw, ensure_ascii=False, default=str)


def _not_a_cache(error: Exception, source: str) -> InvalidInputError:
    return InvalidInputError(
        f"not an assay response cache (SQLite): {error}; name another file or use --no-cache",
        source=source,
    )
