"""Where assay keeps its files (a leaf module: the store and the LLM cache both use it).

* ``ASSAY_HOME``: the folder for assay's files; default ``$XDG_DATA_HOME/assay`` or
  ``~/.local/share/assay``.
* ``ASSAY_DATABASE_URL``: the evaluation store; default ``sqlite:///$ASSAY_HOME/assay.db``.
* ``ASSAY_LLM_CACHE``: the LLM response cache (always SQLite); default
  ``$ASSAY_HOME/llm-cache.sqlite``.

Example:
    >>> import os
    >>> os.environ["ASSAY_HOME"] = "/tmp/assay-doc"
    >>> str(default_cache_path())
    '/tmp/assay-doc/llm-cache.sqlite'
    >>> del os.environ["ASSAY_HOME"]
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["assay_home", "default_cache_path", "HOME_ENV", "DATABASE_ENV", "CACHE_ENV"]

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


def default_cache_path() -> Path:
    """``$ASSAY_LLM_CACHE`` or ``$ASSAY_HOME/llm-cache.sqlite``."""
    explicit = os.environ.get(CACHE_ENV)
    return Path(explicit).expanduser() if explicit else assay_home() / "llm-cache.sqlite"
