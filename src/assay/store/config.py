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

__all__ = ["assay_home", "default_database_url", "default_cache_path", "normalize_database_url"]

HOME_ENV = "ASSAY_HOME"
DATABASE_ENV = "ASSAY_DATABASE_URL"
CACHE_ENV = "ASSAY_LLM_CACHE"


def assay_home() -> Path:
    """The folder for assay's files (not created here)."""
    explicit = os.environ.get(HOME_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "assay"


def default_database_url() -> str:
    """``$ASSAY_DATABASE_URL`` or the SQLite file ``$ASSAY_HOME/assay.db``."""
    url = os.environ.get(DATABASE_ENV)
    if url:
        return normalize_database_url(url)
    return f"sqlite:///{assay_home() / 'assay.db'}"


def default_cache_path() -> Path:
    """``$ASSAY_LLM_CACHE`` or ``$ASSAY_HOME/llm-cache.sqlite``."""
    explicit = os.environ.get(CACHE_ENV)
    return Path(explicit).expanduser() if explicit else assay_home() / "llm-cache.sqlite"


def normalize_database_url(url: str) -> str:
    """Use psycopg 3 for plain ``postgresql://``/``postgres://`` URLs; a bare path means SQLite."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://") :]
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    return url
