"""Files a command reads are never files it writes: the store, the response cache, the inputs.

A command names what it must not overwrite (:func:`protected`, a context manager the CLI
opens around every command); :func:`refuse_protected` is asked before anything is
written or computed (``--out``), and again by every atomic write (:mod:`assay.io.files`),
which covers files a command derives from its options (the tables under ``--out-dir``).

Two paths are the same file when they resolve to the same path (a file not created yet:
a new store that ``--save`` is about to create) or when the operating system says so
(:func:`os.path.samefile`: a hard link, a link through another folder). A Parquet
dataset given as a folder or a glob protects each of its files.

Example:
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> data = os.path.join(d, "g.csv")
    >>> open(data, "w").close()
    >>> os.link(data, os.path.join(d, "h.csv"))
    >>> with protected({"the input --groundtruths": data}):
    ...     refuse_protected(os.path.join(d, "h.csv"), option="--out")
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: --out .../h.csv: is the same file as the input ...
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from assay.errors import InvalidInputError

__all__ = ["protected", "refuse_protected", "same_file"]

#: what -> path, for the command running now (empty outside a command)
_PROTECTED: dict[str, Path] = {}


def same_file(a: str | Path, b: str | Path) -> bool:
    """``a`` and ``b`` are one file: the same resolved path, or the same inode and device."""
    if Path(a).resolve() == Path(b).resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def _expand(what: str, path: Path) -> dict[str, Path]:
    """A Parquet dataset named by a folder or a glob pattern stands for its files."""
    text = str(path)
    if path.is_dir():
        files = [f for f in path.rglob("*") if f.suffix.lower() in (".parquet", ".pq")]
    elif not path.exists() and set("*?[") & set(text):
        files = [Path(f) for f in glob.glob(text, recursive=True)]
    else:
        return {what: path}
    return {f"{what} ({f})": f for f in sorted(files)}


def _special(path: str | Path) -> bool:
    """Standard output, a device or a FIFO: written in place, it replaces no file."""
    if str(path) in ("-", "/dev/stdout", "/dev/stderr"):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextmanager
def protected(files: Mapping[str, str | Path | None]) -> Iterator[None]:
    """While the block runs, :func:`refuse_protected` refuses each of ``files``
    (``{what it is: path}``; None entries skipped)."""
    previous = dict(_PROTECTED)
    _PROTECTED.clear()
    for what, path in files.items():
        if path is not None:
            _PROTECTED.update(_expand(what, Path(path)))
    try:
        yield
    finally:
        _PROTECTED.clear()
        _PROTECTED.update(previous)


def refuse_protected(path: str | Path | None, *, option: str | None = None) -> None:
    """Raise :class:`InvalidInputError` when writing ``path`` would replace a protected file
    (one line: which option, which file it is); nothing when ``path`` is None or ``-``."""
    if path is None or _special(path):
        return
    for what, kept in _PROTECTED.items():
        if same_file(path, kept):
            where = f"{option} {path}" if option else str(path)
            raise InvalidInputError(
                f"is the same file as {what}; refusing to overwrite it (nothing was written)",
                source=where,
            )
