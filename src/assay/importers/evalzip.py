"""Reading the members of an Inspect ``.eval`` log (a zip archive) without Inspect AI.

Inspect writes each member zstd-compressed (zip method 93) since 2025; older logs use
deflate. The standard library's :mod:`zipfile` reads zstd members only from Python 3.14,
so a zstd member is read here from its raw bytes (after the member's local header) and
decompressed with the ``zstandard`` package (every frame, as Inspect may write several);
its CRC-32 is then checked as :mod:`zipfile` would. Any other method goes through
:mod:`zipfile` itself.

A file that is not a zip archive, or one cut short (its central directory, at the end, is
missing), is refused with :class:`~assay.errors.InvalidInputError` naming the file.

Example:
    >>> import io, os, tempfile, zipfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.eval")
    >>> with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
    ...     z.writestr("header.json", '{"version": 2}')
    >>> with EvalZip(p) as z:
    ...     z.names(), z.json("header.json")
    (['header.json'], {'version': 2})
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError

__all__ = ["EvalZip", "ZSTD"]

#: the zip compression method number of zstd (APPNOTE 4.4.5)
ZSTD = 93
_LOCAL_HEADER = 30


class EvalZip:
    """An open ``.eval`` archive: member names and their JSON."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._zip = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, EOFError):
            raise InvalidInputError(
                "not a zip archive, or a truncated one (an Inspect .eval log is a zip)",
                source=str(self.path),
            ) from None

    def __enter__(self) -> EvalZip:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()

    def names(self) -> list[str]:
        return self._zip.namelist()

    def read(self, name: str) -> bytes:
        """The member's bytes, decompressed and CRC-checked."""
        info = self._zip.getinfo(name)
        try:
            if info.compress_type == ZSTD:
                data = self._zstd_member(info)
            else:
                data = self._zip.read(info)
        except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as e:
            raise InvalidInputError(
                f"damaged member ({e})", source=str(self.path), record=f"member {name}"
            ) from None
        if zlib.crc32(data) != info.CRC:
            raise InvalidInputError(
                "damaged member (CRC mismatch)", source=str(self.path), record=f"member {name}"
            )
        return data

    def json(self, name: str) -> Any:
        """The member parsed as JSON (errors name the file and the member)."""
        data = self.read(name)
        try:
            return json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InvalidInputError(
                f"invalid JSON ({e})", source=str(self.path), record=f"member {name}"
            ) from None

    def _zstd_member(self, info: zipfile.ZipInfo) -> bytes:
        try:
            import zstandard
        except ImportError:  # pragma: no cover - a dependency of assay
            raise InvalidInputError(
                "this .eval log is zstd-compressed: install the zstandard package",
                source=str(self.path),
            ) from None
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            head = fh.read(_LOCAL_HEADER)
            if len(head) < _LOCAL_HEADER or head[:4] != b"PK\x03\x04":
                raise zipfile.BadZipFile("bad local file header")
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            fh.seek(info.header_offset + _LOCAL_HEADER + name_len + extra_len)
            raw = fh.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise zipfile.BadZipFile("member cut short")
        reader = zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(raw), read_across_frames=True
        )
        try:
            return reader.read()
        except zstandard.ZstdError as e:
            raise zipfile.BadZipFile(f"zstd: {e}") from None
