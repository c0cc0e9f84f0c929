"""Privileged-group definitions (spec: fairness-and-llm-suites.md "Groups calculation").

A datum is *privileged* under a definition when its sensitive value is greater than the
threshold (default 0.0); ``invert`` flips this, so values ``<= threshold`` are privileged.

Example:
    >>> g = PrivilegedGroup.parse("age:40:invert")
    >>> g, g.privileged([30, 40, 50]).tolist()
    (PrivilegedGroup(column='age', threshold=40.0, invert=True), [True, True, False])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError

__all__ = ["PrivilegedGroup"]


@dataclass(frozen=True)
class PrivilegedGroup:
    """One privileged-group definition: a sensitive column, a threshold and an invert flag."""

    column: str
    threshold: float = 0.0
    invert: bool = False

    @classmethod
    def parse(cls, text: str) -> PrivilegedGroup:
        """Parse ``COLUMN[:THRESHOLD[:invert]]``, e.g. ``"sex"``, ``"age:40"``, ``"age:40:invert"``."""
        parts = text.split(":")
        if not parts[0] or len(parts) > 3:
            raise InvalidInputError(
                f"expected COLUMN[:THRESHOLD[:invert]], got {text!r}", source="--sensitive"
            )
        threshold = 0.0
        if len(parts) >= 2 and parts[1] != "":
            try:
                threshold = float(parts[1])
            except ValueError:
                raise InvalidInputError(
                    f"threshold must be a number, got {parts[1]!r}", source="--sensitive"
                ) from None
        invert = False
        if len(parts) == 3:
            if parts[2].lower() not in ("invert", "inverted", "true"):
                raise InvalidInputError(
                    f"third part must be 'invert', got {parts[2]!r}", source="--sensitive"
                )
            invert = True
        return cls(parts[0], threshold, invert)

    @property
    def label(self) -> str:
        """Compact text form, the inverse of :meth:`parse`."""
        return f"{self.column}:{self.threshold:g}" + (":invert" if self.invert else "")

    def privileged(self, values: ArrayLike, *, source: str | None = None) -> NDArray[np.bool_]:
        """Boolean mask of privileged datums; non-numeric or NaN values are an error naming the row."""
        v = np.asarray(values)
        try:
            x = v.astype(np.float64)
        except (TypeError, ValueError):
            x = np.array([_to_float(e) for e in v.tolist()], dtype=np.float64)
        bad = np.isnan(x)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(
                f"sensitive value must be a number, got {v[i]!r}",
                source=source,
                record=i + 1,
                field=self.column,
            )
        above = x > self.threshold
        return ~above if self.invert else above


def _to_float(e: object) -> float:
    try:
        return float(e)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")
