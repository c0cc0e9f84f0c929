"""A run's units: the evaluator's declared state, kept with the run so its tallies can be
rebuilt later (``assay compare`` pairs two runs on them).

What is kept is not the tally itself (its ``values`` are a closure) but what makes it:
the evaluator's class (an ``assay.`` class deriving from
:class:`~assay.evaluator.Evaluator`) and its :meth:`~assay.evaluator.Evaluator.state`,
configuration included. :func:`rebuild` gives the evaluator back with
``from_state()``, and its ``tally()`` the tallies: any evaluator that gains a ``tally()``
is kept and compared with no change here.

The codec: the state's arrays in one ``.npy`` stream each (numbers, booleans, text;
never a pickle: an object array of text is kept as text, any other object array as the
JSON of its values), framed by a small JSON header, the whole compressed with zstandard
(level 3). A 10^6-datum binary classification run takes about 10 bytes a datum (see
``benchmarks/store_units.py`` and docs/store.md).

Example:
    >>> import numpy as np
    >>> blob = pack_state({"config": np.array("{}"), "x": np.arange(3),
    ...                    "uid": np.array(["a", 1], dtype=object)})
    >>> back = unpack_state(blob)
    >>> back["x"].tolist(), back["uid"].tolist(), str(back["config"])
    ([0, 1, 2], ['a', 1], '{}')
"""

from __future__ import annotations

import importlib
import io
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.results import to_jsonable

__all__ = ["CODEC", "pack_state", "unpack_state", "evaluator_path", "rebuild", "keeps_units"]

#: The name of the format written in ``assay_units.codec``.
CODEC = "npy+zstd/1"
_LEVEL = 3


def _plain(name: str, a: np.ndarray) -> tuple[np.ndarray, str]:
    """The array as one ``np.save`` can write without pickling, and how it was kept."""
    if a.dtype != object:
        return a, "npy"
    flat = a.ravel().tolist()
    if all(isinstance(v, str) for v in flat):
        return np.asarray(flat, dtype=str).reshape(a.shape), "text"
    return np.asarray(json.dumps(to_jsonable(flat)), dtype=str), "json"


def pack_state(state: Mapping[str, Any]) -> bytes:
    """The state's named arrays as one compressed blob (see the module)."""
    import zstandard

    header, body = [], io.BytesIO()
    for name, value in state.items():
        value = np.asarray(value)
        a, how = _plain(name, value)
        start = body.tell()
        np.save(body, a, allow_pickle=False)
        size = body.tell() - start
        header.append({"name": name, "how": how, "shape": list(value.shape), "bytes": size})
    head = json.dumps(header).encode()
    raw = len(head).to_bytes(8, "little") + head + body.getvalue()
    return bytes(zstandard.ZstdCompressor(level=_LEVEL).compress(raw))


def unpack_state(blob: bytes) -> dict[str, np.ndarray]:
    """The named arrays :func:`pack_state` kept."""
    import zstandard

    try:
        raw = zstandard.ZstdDecompressor().decompress(blob)
        size = int.from_bytes(raw[:8], "little")
        header = json.loads(raw[8 : 8 + size])
        out, at = {}, 8 + size
        for h in header:
            a = np.load(io.BytesIO(raw[at : at + h["bytes"]]), allow_pickle=False)
            at += h["bytes"]
            if h["how"] == "text":
                a = a.astype(object)
            elif h["how"] == "json":
                values = json.loads(str(a[()]))
                a = np.empty(len(values), dtype=object)
                a[:] = values
                a = a.reshape(h["shape"])
            out[h["name"]] = a
    except (zstandard.ZstdError, ValueError, KeyError, TypeError) as e:
        raise InvalidInputError(f"the stored units cannot be read ({e})", source="store") from None
    return out


def evaluator_path(ev: Any) -> str:
    """``module:Class`` of an evaluator."""
    return f"{type(ev).__module__}:{type(ev).__qualname__}"


def keeps_units(ev: Any) -> bool:
    """Whether ``ev`` is an assay evaluator with a per-unit tally (so its units are kept)."""
    from assay.evaluator import Evaluator

    return isinstance(ev, Evaluator) and callable(getattr(ev, "tally", None)) and not ev.is_empty


def rebuild(path: str, blob: bytes, *, evaluation: Any = None) -> Any:
    """The evaluator kept as ``path`` (``module:Class``, an assay evaluator) and ``blob``."""
    from assay.evaluator import Evaluator

    where = f"evaluation {evaluation}" if evaluation is not None else None
    module, _, name = path.partition(":")
    if not module.startswith("assay.") or not name:
        raise InvalidInputError(
            f"the units name {path!r}, not an assay evaluator", source="store", record=where
        )
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise InvalidInputError(
            f"the units were kept by {path}, which this assay does not have",
            source="store",
            record=where,
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Evaluator)):
        raise InvalidInputError(f"{path} is not an evaluator", source="store", record=where)
    return cls.from_state(unpack_state(blob))
