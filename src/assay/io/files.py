"""Writing files safely: atomically, readable like any other tool's files, inside their folder.

* :func:`write_atomic` writes one file through a temporary file and a rename, so a reader
  never sees it half-written; the file gets the mode a plain ``open(path, "w")`` would
  (``0666 & ~umask``, 0644 under the usual umask 022), not ``mkstemp``'s private 0600.
* :func:`write_files_atomic` writes several files into one folder so that they appear
  together or not at all: every file is staged first, and only when all were staged are
  they renamed into place. A failure while staging leaves the folder untouched.
* :func:`safe_filename` turns a user-supplied name (a column, a label) into one path
  component, so data can never steer a write outside the folder it was given.

Errors that the user can fix (the target is a directory, the folder is a file, no
permission) raise :class:`~assay.errors.InvalidInputError` naming the path.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_files_atomic(d, {safe_filename("eval_by_x/../../PWNED") + ".csv": "a\\n"})
    [PosixPath('.../eval_by_x_.._.._PWNED.csv')]
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from assay.errors import InvalidInputError

__all__ = [
    "write_atomic",
    "write_files_atomic",
    "safe_filename",
    "check_writable_file",
    "file_mode",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def file_mode() -> int:
    """The mode a new file gets from ``open()`` under the current umask (0o666 & ~umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def safe_filename(name: str) -> str:
    """One safe path component made of ``name``: separators and unusual characters become ``_``.

    Example:
        >>> safe_filename("eval_by_x/../../PWNED")
        'eval_by_x_.._.._PWNED'
        >>> safe_filename("..")
        '_..'
    """
    out = _UNSAFE.sub("_", str(name)).strip() or "_"
    if out.startswith("."):
        out = "_" + out
    return out


def check_writable_file(path: str | Path, *, option: str | None = None) -> Path:
    """``path`` if a file can be written there: not a directory, its parent not a file.

    Checked before any work is done, so a bad ``--out`` costs nothing.
    """
    p = Path(path)
    where = option or str(p)
    if p.is_dir():
        raise InvalidInputError(f"{p} is a directory, expected a file path", source=where)
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InvalidInputError(f"{parent} is a file, not a folder", source=where)
            if not os.access(parent, os.W_OK):
                raise InvalidInputError(f"no permission to write in {parent}", source=where)
            break
    return p


def _mkdir(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InvalidInputError(
            f"cannot create folder {folder}: a file is in the way", source=str(folder)
        ) from None
    except PermissionError:
        raise InvalidInputError(
            f"no permission to create folder {folder}", source=str(folder)
        ) from None


def _stage(folder: Path, name: str, data: str | bytes) -> str:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file and a rename: never half-written.

    Parent folders are created. The file's mode follows the umask like ``open()``'s.
    """
    p = check_writable_file(path)
    _mkdir(p.parent)
    tmp = _stage(p.parent, p.name, data)
    try:
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p


def write_files_atomic(folder: str | Path, files: Mapping[str, str | bytes]) -> list[Path]:
    """Write ``{name: data}`` into ``folder`` so that all appear, or none change.

    Names must be single path components (use :func:`safe_filename` on anything derived
    from data); a name with a separator raises ``InvalidInputError``.
    """
    d = Path(folder)
    if d.exists() and not d.is_dir():
        raise InvalidInputError(f"{d} is a file, expected a folder", source=str(d))
    for name in files:
        if name != Path(name).name or name in ("", ".", ".."):
            raise InvalidInputError(f"{name!r} is not a plain file name", source=str(d))
    _mkdir(d)
    staged: list[tuple[str, Path]] = []
    try:
        for name, data in files.items():
            staged.append((_stage(d, name, data), d / name))
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, final in staged:
        os.replace(tmp, final)
    return [final for _, final in staged]
