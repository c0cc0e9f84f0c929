"""One exception hierarchy for assay.

Every error assay raises on purpose derives from :class:`AssayError`.

* :class:`InvalidInputError` — the caller's data is wrong (mismatched lengths, a NaN
  score, an unknown id, malformed JSON). The message names the source, the record and
  the field, so the user can find and fix the offending row.
* :class:`UndefinedMetricError` — the data is valid, but the metric is not defined on it
  (the spec says it "requires" something that is missing, e.g. TP + FP > 0).

Example:
    >>> from assay.errors import InvalidInputError
    >>> e = InvalidInputError("must be in [0, 1], got 1.5", source="p.csv", record=3, field="score")
    >>> str(e)
    "p.csv: row 3: field 'score': must be in [0, 1], got 1.5"
"""

from __future__ import annotations

from typing import Any

__all__ = ["AssayError", "InvalidInputError", "UndefinedMetricError"]


class AssayError(Exception):
    """Base class of every error assay raises deliberately."""


class InvalidInputError(AssayError, ValueError):
    """Input data is malformed. Names the source, the record and the field where known.

    Attributes:
        reason: what is wrong, without the location.
        source: the file or argument the record came from (e.g. ``"preds.csv"``, ``"y_score"``).
        record: the record's position (1-based row of a file) or id.
        field: the column or key that holds the bad value.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        record: Any = None,
        field: str | None = None,
    ) -> None:
        self.reason = reason
        self.source = source
        self.record = record
        self.field = field
        parts = []
        if source is not None:
            parts.append(str(source))
        if record is not None:
            parts.append(record if isinstance(record, str) and " " in record else f"row {record}")
        if field is not None:
            parts.append(f"field '{field}'")
        parts.append(reason)
        super().__init__(": ".join(parts))


class UndefinedMetricError(AssayError, ValueError):
    """A metric is not defined on the given data (a spec "requires" condition fails).

    Attributes:
        metric: the metric's type name, e.g. ``"Precision"``.
        reason: the missing condition, e.g. ``"requires TP + FP > 0"``.
    """

    def __init__(self, metric: str, reason: str) -> None:
        self.metric = metric
        self.reason = reason
        super().__init__(f"{metric} is undefined: {reason}")
