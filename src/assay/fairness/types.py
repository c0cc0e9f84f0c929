"""Privileged-group definitions.

A definition names a ``group_column`` and says who in it is privileged, in one of two ways:

* numeric: a ``threshold`` (default 0.0) and an ``invert`` flag. A datum is privileged
  when its value is greater than the threshold; with ``invert``, when it is less than or
  equal to it. Text form ``COLUMN[:THRESHOLD[:invert]]``.
* categorical: ``values``, the privileged values (text; a number in a numeric column is
  matched by its short text, ``3`` for 3.0). Text form ``COLUMN=V1[,V2...]``.

Everyone else is *unprivileged*.

Example:
    >>> g = PrivilegedGroup.parse("age:40:invert")
    >>> g, g.privileged([30, 40, 50]).tolist(), g.describe()
    (PrivilegedGroup(group_column='age', threshold=40.0, invert=True), [True, True, False],
     'age <= 40')
    >>> c = PrivilegedGroup.parse("L1=en,fr")
    >>> c.values, c.privileged(["en", "es", "fr"]).tolist(), c.describe(), c.label
    (('en', 'fr'), [True, False, True], 'L1 in {en, fr}', 'L1=en,fr')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay._compat import removed_keywords
from assay.errors import InvalidInputError
from assay.fairness.grouping import as_group_text

__all__ = ["PrivilegedGroup"]


def _number_text(x: float) -> str:
    """A threshold as short exact text: ``0`` for 0.0, ``18.84`` for 18.84."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


@removed_keywords(column="group_column")
class PrivilegedGroup:
    """One privileged-group definition: a column and a threshold (with an invert flag), or
    a column and its privileged ``values``."""

    __slots__ = ("group_column", "threshold", "invert", "values")
    group_column: str
    threshold: float
    invert: bool
    values: tuple[str, ...] | None

    def __init__(
        self,
        group_column: str | None = None,
        threshold: float = 0.0,
        invert: bool = False,
        *,
        values: Sequence[str] | None = None,
    ) -> None:
        name = group_column
        if not isinstance(name, str) or not name:
            raise InvalidInputError(
                f"a group column must be a non-empty name, got {name!r}", source="groups"
            )
        t = float(threshold)
        if not np.isfinite(t):
            raise InvalidInputError(
                f"threshold must be a finite number, got {threshold!r}", source="groups"
            )
        object.__setattr__(self, "group_column", name)
        object.__setattr__(self, "threshold", t)
        object.__setattr__(self, "invert", bool(invert))
        object.__setattr__(self, "values", _values(name, values, t, bool(invert)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("PrivilegedGroup is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrivilegedGroup):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash((self.group_column, self.threshold, self.invert, self.values))

    def __repr__(self) -> str:
        if self.values is not None:
            return f"PrivilegedGroup(group_column={self.group_column!r}, values={self.values!r})"
        return (
            f"PrivilegedGroup(group_column={self.group_column!r}, threshold={self.threshold!r}, "
            f"invert={self.invert!r})"
        )

    @classmethod
    def parse(cls, text: str) -> PrivilegedGroup:
        """Parse ``COLUMN[:THRESHOLD[:invert]]`` (``"sex"``, ``"age:40"``, ``"age:40:invert"``)
        or ``COLUMN=V1[,V2...]`` (``"L1=en"``, ``"L1=en,fr"``)."""
        if "=" in text:
            column, _, rest = text.partition("=")
            values = rest.split(",")
            if not column or any(v == "" for v in values):
                raise InvalidInputError(
                    f"expected COLUMN=VALUE[,VALUE...], got {text!r}", source="group definition"
                )
            return cls(column, values=values)
        parts = text.split(":")
        where = "group definition"
        if not parts[0] or len(parts) > 3:
            raise InvalidInputError(
                f"expected COLUMN[:THRESHOLD[:invert]], got {text!r}", source=where
            )
        threshold = 0.0
        if len(parts) >= 2 and parts[1] != "":
            try:
                threshold = float(parts[1])
            except ValueError:
                raise InvalidInputError(
                    f"threshold must be a number, got {parts[1]!r} in {text!r}", source=where
                ) from None
            if not np.isfinite(threshold):
                raise InvalidInputError(
                    f"threshold must be a finite number, got {parts[1]!r} in {text!r}",
                    source=where,
                )
        if len(parts) == 3 and parts[2].lower() not in ("invert", "inverted", "true"):
            raise InvalidInputError(
                f"third part must be 'invert', got {parts[2]!r} in {text!r}", source=where
            )
        return cls(parts[0], threshold, len(parts) == 3)

    @classmethod
    def coerce(cls, g: PrivilegedGroup | str | Mapping[str, Any]) -> PrivilegedGroup:
        """A definition from itself, its text form or its :meth:`as_dict` form."""
        if isinstance(g, PrivilegedGroup):
            return g
        if isinstance(g, str):
            return cls.parse(g)
        if isinstance(g, Mapping):
            return cls(**dict(g))
        raise InvalidInputError(
            f"expected a PrivilegedGroup, 'COLUMN[:THRESHOLD[:invert]]' or a dict, got {g!r}",
            source="groups",
        )

    def as_dict(self) -> dict[str, Any]:
        """``{"group_column", "threshold", "invert"}`` or ``{"group_column", "values"}``,
        JSON-ready (:meth:`coerce` reads it)."""
        if self.values is not None:
            return {"group_column": self.group_column, "values": list(self.values)}
        return {
            "group_column": self.group_column,
            "threshold": self.threshold,
            "invert": self.invert,
        }

    @property
    def label(self) -> str:
        """Compact text form, the inverse of :meth:`parse`: ``"age:40:invert"``, ``"L1=en"``."""
        if self.values is not None:
            return f"{self.group_column}={','.join(self.values)}"
        return f"{self.group_column}:{_number_text(self.threshold)}" + (
            ":invert" if self.invert else ""
        )

    def describe(self) -> str:
        """Who is privileged, in words: ``"age <= 40"``, ``"L1 = en"``, ``"L1 in {en, fr}"``."""
        if self.values is not None:
            if len(self.values) == 1:
                return f"{self.group_column} = {self.values[0]}"
            return f"{self.group_column} in {{{', '.join(self.values)}}}"
        op = "<=" if self.invert else ">"
        return f"{self.group_column} {op} {_number_text(self.threshold)}"

    def privileged(self, values: ArrayLike, *, source: str | None = None) -> NDArray[np.bool_]:
        """Boolean mask of privileged datums; a missing value (or, for a threshold, a
        non-numeric one) is an error naming the row."""
        v = np.asarray(values)
        if self.values is not None:
            text = as_group_text(v, source=source, field=self.group_column)
            return np.isin(text, np.asarray(self.values, dtype=str))
        try:
            x = v.astype(np.float64)
        except (TypeError, ValueError):
            x = np.array([_to_float(e) for e in v.tolist()], dtype=np.float64)
        bad = np.isnan(x)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            got = v[i].item() if isinstance(v[i], np.generic) else v[i]
            hint = (
                f" (for a text column name the privileged values: {self.group_column}=VALUE)"
                if isinstance(got, str)
                else ""
            )
            raise InvalidInputError(
                f"a group value must be a number, got {got!r}{hint}",
                source=source,
                record=i + 1,
                field=self.group_column,
            )
        above = x > self.threshold
        return ~above if self.invert else above


def _values(
    column: str, values: Sequence[str] | None, threshold: float, invert: bool
) -> tuple[str, ...] | None:
    """The privileged values of a categorical definition, checked (None for a threshold)."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    out = tuple(dict.fromkeys(str(v) for v in values))
    if not out:
        raise InvalidInputError(
            f"a categorical definition of {column!r} needs at least one value", source="groups"
        )
    if threshold != 0.0 or invert:
        raise InvalidInputError(
            f"a definition of {column!r} takes privileged values or a threshold, not both",
            source="groups",
        )
    return out


def _to_float(e: object) -> float:
    try:
        return float(e)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")
