"""One exception hierarchy for assay.

Every error assay raises on purpose derives from :class:`AssayError`.

* :class:`InvalidInputError` — the caller's data is wrong (mismatched lengths, a NaN
  score, an unknown id, malformed JSON). The message names the source, the record and
  the field, so the user can find and fix the offending row.
* :class:`ClusterError` — a Dask cluster failed mid-run (its scheduler lost, no worker
  left): the command stops with exit code 1 (not 2: the input was fine) and writes nothing.
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

__all__ = ["AssayError", "InvalidInputError", "UndefinedMetricError", "ClusterError"]


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

    def __reduce__(self) -> tuple[Any, ...]:
        # raised on a Dask worker, it comes back to the caller whole (not just its text)
        return (_invalid_input, (self.reason, self.source, self.record, self.field))


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


class ClusterError(AssayError):
    """A Dask cluster failed while it ran the work: the scheduler was lost, or no worker
    was left. The command line exits 1 (:attr:`exit_code`) with one line, nothing written.
    """

    exit_code = 1

    def __init__(self, reason: str, *, source: str | None = None) -> None:
        self.reason = reason
        self.source = source
        super().__init__(f"{source}: {reason}" if source else reason)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_cluster_error, (self.reason, self.source))


def _cluster_error(reason: str, source: str | None) -> ClusterError:
    return ClusterError(reason, source=source)


def _invalid_input(reason: str, source: str | None, record: Any, field: str | None) -> Any:
    return InvalidInputError(reason, source=source, record=record, field=field)
