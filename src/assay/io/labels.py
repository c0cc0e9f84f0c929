"""Labels of annotation records, and the natural order labels are reported in.

A label is a ``(key, value)`` pair: ``key`` the label family (``"class"`` by default),
``value`` the label itself. Records come out in *natural* order (:func:`natural_key`):
text compared with its runs of digits as numbers, so ``cat2`` comes before ``cat10`` and
category ids ``"2"`` before ``"10"``.

Example:
    >>> sorted(["cat10", "cat1", "cat2", "10", "9"], key=natural_key)
    ['9', '10', 'cat1', 'cat2', 'cat10']
    >>> parse_labels({"label": "cat"}, source="gt.jsonl", record="datum 'a'", prediction=False)
    [(('class', 'cat'), 1.0)]
"""

from __future__ import annotations

import math
import re
from typing import Any

from assay.errors import InvalidInputError

__all__ = ["DEFAULT_KEY", "Label", "natural_key", "parse_labels"]

DEFAULT_KEY = "class"
Label = tuple[str, str]  # (label key, label value)
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: Any) -> tuple[Any, ...]:
    """Sort key comparing runs of digits as numbers (``"cat2" < "cat10"``).

    Tuples (``(key, value)`` labels) are compared element by element.
    """
    if isinstance(text, tuple):
        return tuple(natural_key(t) for t in text)
    parts = _DIGITS.split(str(text))
    return tuple((0, int(p), p) if i % 2 else (1, 0, p) for i, p in enumerate(parts) if p or i == 0)


def parse_labels(
    ann: dict[str, Any], *, source: str, record: str, prediction: bool
) -> list[tuple[Label, float]]:
    """``[((key, value), score), ...]`` of an annotation (score 1.0 for ground truths).

    A label is a string (key ``"class"``), ``{"key", "value"}``, or a list of them under
    ``labels``; a prediction's score is ``score`` on the annotation or on each label.
    """
    raw = ann.get("labels", ann.get("label"))
    if raw is None or raw == [] or raw == "":
        raise InvalidInputError(
            "annotation has no label", source=source, record=record, field="labels"
        )
    out = []
    for it in raw if isinstance(raw, list) else [raw]:
        score = ann.get("score")
        if isinstance(it, str):
            lab: Label = (DEFAULT_KEY, it)
        elif isinstance(it, dict) and isinstance(it.get("value"), (str, int)):
            lab = (str(it.get("key", DEFAULT_KEY)), str(it["value"]))
            score = it.get("score", score)
        else:
            raise InvalidInputError(
                f"bad label {it!r}", source=source, record=record, field="labels"
            )
        if prediction:
            if (
                not isinstance(score, (int, float))
                or isinstance(score, bool)
                or not math.isfinite(score)
            ):
                raise InvalidInputError(
                    f"prediction needs a finite numeric score, got {score!r}",
                    source=source,
                    record=record,
                    field="score",
                )
            out.append((lab, float(score)))
        else:
            out.append((lab, 1.0))
    return out
