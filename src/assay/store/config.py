"""Where assay keeps its files: the evaluation store and the LLM response cache.

* ``ASSAY_HOME``: the folder for both; default ``$XDG_DATA_HOME/assay`` or
  ``~/.local/share/assay``.
* ``ASSAY_DATABASE_URL``: the evaluation store; default ``sqlite:///$ASSAY_HOME/assay.db``.
  A PostgreSQL URL (``postgresql://user:pass@host/db``) uses psycopg 3.
* ``ASSAY_LLM_CACHE``: the LLM response cache (always SQLite); default
  ``$ASSAY_HOME/llm-cache.sqlite``.

Example:
    >>> import os
    >>> os.environ["ASSAY_HOME"] = "/tmp/assay-doc"
    >>> default_database_url()
    'sqlite:////tmp/assay-doc/assay.db'
    >>> normalize_database_url("postgresql://u@127.0.0.1:5432/db")
    'postgresql+psycopg://u@127.0.0.1:5432/db'
    >>> del os.environ["ASSAY_HOME"]
"""

from __future__ import annotations

import os
from pathlib import Path

# The folder and the cache path live in the leaf module assay.paths (the LLM runner uses
# them too, without importing the store); they are re-exported here.
from assay.paths import DATABASE_ENV, assay_home

__all__ = [
    "default_database_url",
    "normalize_database_url",
    "sqlite_path",
    "store_file",
]


def default_database_url() -> str:
    """``$ASSAY_DATABASE_URL`` or the SQLite file ``$ASSAY_HOME/assay.db``."""
    url = os.environ.get(DATABASE_ENV)
    if url:
        return normalize_database_url(url)
    return f"sqlite:///{assay_home() / 'assay.db'}"


def normalize_database_url(url: str) -> str:
    """Use psycopg 3 for plain ``postgresql://``/``postgres://`` URLs; a bare path means SQLite."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://") :]
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    return url


def sqlite_path(url: str) -> Path | None:
    """The database file of a ``sqlite:///`` URL (None for other URLs and in-memory)."""
    if not url.startswith("sqlite"):
        return None
    database = url.split(":///", 1)[1] if ":///" in url else ""
    database = database.split("?", 1)[0]
    if database in ("", ":memory:"):
        return None
    return Path(database).expanduser()


def store_file(url: str | None) -> Path | None:
    """The SQLite file of the store ``--db URL`` names (default: the environment's store);
    None for PostgreSQL and in-memory stores."""
    return sqlite_path(normalize_database_url(url) if url else default_database_url())
