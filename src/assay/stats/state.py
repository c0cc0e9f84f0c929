"""Scores as plain numpy arrays, so a :class:`~assay.stats.ScoreEvaluator` can travel.

Two layouts, told apart by the 0-d string under ``"kind"``:

``"frame"`` (a :class:`~assay.stats.ScoreFrame`, the fast path)
    ``values`` float64, ``epoch`` int64, ``partial`` bool, ``sample_id``, the metadata
    columns ``meta.0``, ``meta.1``, ... (their keys in ``meta_keys``), and where the frame
    has them the raw values, per-row metadata dicts and :class:`~assay.stats.Score` fields.
``"objects"`` (a list of :class:`~assay.stats.SampleScore`)
    one entry per score: ``sample_id``, ``epoch`` (int64), ``value``, ``answer``,
    ``explanation``, ``metadata`` and ``sample_metadata``.

A numeric or string column is stored as it is; anything else (object columns, ids of
mixed types, score values that are lists or dicts, metadata dicts) as one JSON text per
entry in a string array whose key ends in ``.json``, which keeps ``1``, ``1.0``, ``True``
and ``"1"`` apart. Decoding gives back equal arrays and objects, so the rebuilt evaluator
computes exactly the same records.

Example:
    >>> from assay.stats import Score, SampleScore
    >>> arrays = encode_scores([SampleScore(Score("C", answer="4"), "q1", 2, {"t": "a"})])
    >>> sorted(k for k, v in arrays.items() if v.dtype == object)
    []
    >>> back = decode_scores(arrays)[0]
    >>> back.score, back.sample_id, back.epoch, back.sample_metadata
    (Score(value='C', answer='4', explanation=None, metadata=None), 'q1', 2, {'t': 'a'})
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.stats.frame import ScoreFrame
from assay.stats.score import SampleScore, Score

__all__ = ["decode_scores", "encode_scores"]

_SCORE_FIELDS = ("value", "answer", "explanation", "metadata")


def _default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x).__name__)


def _json_array(items: Sequence[Any], name: str) -> np.ndarray:
    try:
        texts = [json.dumps(x, default=_default) for x in items]
    except (TypeError, ValueError) as e:
        raise InvalidInputError(
            f"cannot store a value as JSON ({e})", source="ScoreEvaluator.state", field=name
        ) from None
    return np.array(texts, dtype=str) if texts else np.zeros(0, dtype="<U1")


def _from_json(texts: np.ndarray) -> np.ndarray:
    out = np.empty(len(texts), dtype=object)
    out[:] = [json.loads(t) for t in texts.tolist()]
    return out


def _put(arrays: dict[str, np.ndarray], name: str, column: np.ndarray) -> None:
    """Store ``column`` under ``name`` as it is when numeric or string, else as JSON."""
    column = np.asarray(column)
    if column.dtype.kind in "biufU":
        arrays[name] = column
    else:
        arrays[f"{name}.json"] = _json_array(column.tolist(), name)


def _get(arrays: Mapping[str, np.ndarray], name: str) -> np.ndarray | None:
    if name in arrays:
        return np.asarray(arrays[name])
    if f"{name}.json" in arrays:
        return _from_json(np.asarray(arrays[f"{name}.json"]))
    return None


def encode_scores(scores: Sequence[SampleScore] | ScoreFrame) -> dict[str, np.ndarray]:
    """Scores (a list of :class:`SampleScore` or a :class:`ScoreFrame`) as plain arrays."""
    if isinstance(scores, ScoreFrame):
        return _encode_frame(scores)
    arrays: dict[str, np.ndarray] = {"kind": np.array("objects")}
    arrays["epoch"] = np.fromiter((s.epoch for s in scores), dtype=np.int64, count=len(scores))
    arrays["sample_id.json"] = _json_array([s.sample_id for s in scores], "sample_id")
    arrays["sample_metadata.json"] = _json_array(
        [s.sample_metadata for s in scores], "sample_metadata"
    )
    for f in _SCORE_FIELDS:
        arrays[f"{f}.json"] = _json_array([getattr(s.score, f) for s in scores], f)
    return arrays


def _encode_frame(frame: ScoreFrame) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {
        "kind": np.array("frame"),
        "values": frame.values,
        "epoch": frame.epoch,
        "partial": frame.partial,
    }
    _put(arrays, "sample_id", frame.sample_id)
    _put(arrays, "failed_ids", frame.failed_ids)
    if frame.raw is not None:
        _put(arrays, "raw", frame.raw)
    if frame.metadata_rows is not None:
        _put(arrays, "metadata_rows", frame.metadata_rows)
    keys = list(frame.metadata_columns)
    arrays["meta_keys.json"] = _json_array(keys, "metadata")
    for i, k in enumerate(keys):
        _put(arrays, f"meta.{i}", frame.metadata_columns[k])
    if frame.scores is not None:
        for f in _SCORE_FIELDS:
            arrays[f"score_{f}.json"] = _json_array([getattr(s, f) for s in frame.scores], f)
    return arrays


def decode_scores(arrays: Mapping[str, np.ndarray]) -> list[SampleScore] | ScoreFrame:
    """The scores :func:`encode_scores` stored, equal to the originals."""
    kind = str(np.asarray(arrays.get("kind", "")))
    if kind == "frame":
        return _decode_frame(arrays)
    if kind != "objects":
        raise InvalidInputError(
            f"unknown kind {kind!r} (expected 'frame' or 'objects')",
            source="ScoreEvaluator.from_state",
            field="kind",
        )
    fields = {f: _get(arrays, f) for f in _SCORE_FIELDS}
    ids, meta = _get(arrays, "sample_id"), _get(arrays, "sample_metadata")
    epochs = np.asarray(arrays["epoch"]).tolist()
    out = []
    for i, epoch in enumerate(epochs):
        score = Score(**{f: col[i] for f, col in fields.items() if col is not None})
        assert ids is not None and meta is not None
        out.append(SampleScore(score, ids[i], int(epoch), meta[i]))
    return out


def _decode_frame(arrays: Mapping[str, np.ndarray]) -> ScoreFrame:
    keys_arr = _get(arrays, "meta_keys")
    keys = [] if keys_arr is None else keys_arr.tolist()
    columns = {str(k): _get(arrays, f"meta.{i}") for i, k in enumerate(keys)}
    scores = None
    if "score_value.json" in arrays:
        fields = {f: _get(arrays, f"score_{f}") for f in _SCORE_FIELDS}
        scores = np.empty(len(arrays["values"]), dtype=object)
        scores[:] = [
            Score(**{f: col[i] for f, col in fields.items() if col is not None})
            for i in range(len(scores))
        ]
    failed = _get(arrays, "failed_ids")
    return ScoreFrame(
        values=np.asarray(arrays["values"], dtype=np.float64),
        sample_id=_get(arrays, "sample_id"),  # type: ignore[arg-type]
        epoch=np.asarray(arrays["epoch"], dtype=np.int64),
        partial=np.asarray(arrays["partial"], dtype=bool),
        raw=_get(arrays, "raw"),
        failed_ids=np.empty(0, dtype=object) if failed is None else failed,
        metadata_rows=_get(arrays, "metadata_rows"),
        metadata_columns={k: v for k, v in columns.items() if v is not None},
        scores=scores,
    )
