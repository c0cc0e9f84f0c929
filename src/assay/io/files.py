"""Writing files safely: atomically, readable like any other tool's files, inside their folder.

* :func:`write_atomic` writes one file through a temporary file and a rename, so a reader
  never sees it half-written; the file gets the mode a plain ``open(path, "w")`` would
  (``0666 & ~umask``, 0644 under the usual umask 022), not ``mkstemp``'s private 0600.
* :func:`write_files_atomic` writes several files into one folder so that they appear
  together or not at all: every file is staged first, and only when all were staged are
  they renamed into place. A failure while staging leaves the folder untouched.
* :func:`safe_filename` turns a user-supplied name (a column, a label) into one path
  component, so data can never steer a write outside the folder it was given.

Atomic replacement is for regular files and new paths only. A path that names a special
file (a character device such as ``/dev/null``, a FIFO, a socket) or leads into ``/proc``
(``/dev/stdout``, ``/dev/fd/3``) is opened and written in place: renaming over it
would replace the device for every program on the machine. ``-`` (and ``/dev/stdout``)
means standard output. A symbolic link to a regular file is followed: its target is
replaced, the link stays. :func:`check_database_file` refuses a special file where a SQLite
database (the evaluation store, the response cache) is wanted.

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
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from assay.errors import InvalidInputError
from assay.io.protect import refuse_protected

__all__ = [
    "write_atomic",
    "write_files_atomic",
    "safe_filename",
    "check_writable_file",
    "check_database_file",
    "is_special_file",
    "file_mode",
]

STDOUT = "-"
_STREAMS = {STDOUT: "stdout", "/dev/stdout": "stdout", "/dev/stderr": "stderr"}

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


def _through_proc(text: str) -> bool:
    """``text`` is in ``/proc``, or reaches it through its folder or its own link."""
    inside = ("/proc/", "/proc")
    if os.path.abspath(text).startswith(inside):
        return True
    if os.path.realpath(os.path.dirname(os.path.abspath(text))).startswith(inside):
        return True
    if os.path.islink(text):
        target = os.path.join(os.path.dirname(os.path.abspath(text)), os.readlink(text))
        return os.path.abspath(target).startswith(inside)
    return False


def is_special_file(path: str | Path) -> bool:
    """True when ``path`` must be written in place, never replaced by a rename.

    That is ``-`` (standard output), an existing file that is neither a regular file nor a
    folder (a character or block device, a FIFO, a socket; links followed), and a path
    into ``/proc`` (``/dev/stdout`` and ``/dev/fd/3`` are links to a process's open files,
    which may be regular files: replacing one would cut the link, not write the file).

    Example:
        >>> is_special_file("/dev/null"), is_special_file("-"), is_special_file("/tmp/x.json")
        (True, True, False)
    """
    text = str(path)
    if text in _STREAMS or _through_proc(text):
        return True
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_writable_file(
    path: str | Path, *, option: str | None = None, new_folders: bool = False
) -> Path:
    """``path`` if a file can be written there: not a directory, its parent not a file.

    Checked before any work is done, so a bad ``--out`` costs nothing. ``-`` (standard
    output) and special files (``/dev/null``, a FIFO) need write permission on themselves,
    not on their folder: they are written in place. The file's folder must exist (a typo in
    ``--out`` never makes folders) unless ``new_folders`` (an ``--out-dir``, the cache), when
    the missing folders are made on writing.
    """
    p = Path(path)
    where = option or str(p)
    if str(path) in _STREAMS:
        return p
    if p.is_dir():
        raise InvalidInputError(f"{p} is a directory, expected a file path", source=where)
    if p.exists() and is_special_file(p):
        if not os.access(p, os.W_OK):
            raise InvalidInputError(f"no permission to write {p}", source=where)
        return p
    if not new_folders and not p.parent.exists():
        raise InvalidInputError(
            f"the folder {p.parent} does not exist (create it first; nothing was written)",
            source=where,
        )
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InvalidInputError(f"{parent} is a file, not a folder", source=where)
            if not os.access(parent, os.W_OK):
                raise InvalidInputError(f"no permission to write in {parent}", source=where)
            break
    return p


def check_database_file(path: str | Path, *, what: str) -> Path:
    """``path`` if a SQLite database can live there: a regular file or a new path.

    A device, a FIFO or a stream cannot hold a database (SQLite would also
    create ``-wal`` and ``-shm`` files beside it); ``what`` names it in the error.

    Example:
        >>> check_database_file("/dev/null", what="cache")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: cache: /dev/null is not a regular file; a SQLite ...
    """
    p = Path(path)
    if is_special_file(p):
        raise InvalidInputError(
            f"{p} is not a regular file; a SQLite database needs one", source=what
        )
    return p


def _write_in_place(path: str | Path, data: str | bytes) -> None:
    """Write to standard output/error, or open a special file and write into it."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    stream = _STREAMS.get(str(path))
    if stream is not None:
        out = getattr(sys, stream)
        out.flush()
        buffer = getattr(out, "buffer", None)
        if buffer is None:  # a text-only stream (a test's capture)
            out.write(raw.decode("utf-8"))
        else:
            buffer.write(raw)
            buffer.flush()
        return
    with open(path, "wb") as fh:
        fh.write(raw)


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
    import tempfile  # (and random with it) only when a file is written

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
    ``-`` and special files (:func:`is_special_file`) are written in place instead; a
    symbolic link's target is replaced, not the link.
    """
    p = check_writable_file(path, new_folders=True)
    refuse_protected(p)  # never a file the running command reads (assay.io.protect)
    if is_special_file(p):
        _write_in_place(path, data)
        return p
    target = Path(os.path.realpath(p)) if p.is_symlink() else p
    _mkdir(target.parent)
    tmp = _stage(target.parent, target.name, data)
    try:
        os.replace(tmp, target)
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
    for name in files:
        refuse_protected(d / name)
    _mkdir(d)
    staged: list[tuple[str, Path]] = []
    in_place = {name: data for name, data in files.items() if is_special_file(d / name)}
    try:
        for name, data in files.items():
            if name not in in_place:
                staged.append((_stage(d, name, data), d / name))
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, final in staged:
        os.replace(tmp, final)
    for name, data in in_place.items():  # a FIFO or a device the user put there
        _write_in_place(d / name, data)
    return [d / name for name in files]
