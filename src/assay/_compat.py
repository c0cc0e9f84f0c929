"""Renamed keyword arguments: the old name keeps working one release, with a warning.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     renamed("positive_label", 1, "pos_label", "yes", where="precision_score")
    ...     print(w[0].category.__name__)
    'yes'
    DeprecationWarning
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["UNSET", "renamed"]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: Default of a deprecated keyword: tells "not given" apart from any real value (None too).
UNSET: Any = _Unset()


def renamed(new: str, new_value: Any, old: str, old_value: Any, *, where: str) -> Any:
    """The value to use for keyword ``new`` when the caller may still pass the old ``old``.

    Passing ``old`` (any value but :data:`UNSET`) warns with a ``DeprecationWarning`` and
    its value is used.
    """
    if old_value is UNSET:
        return new_value
    warnings.warn(
        f"{where}: {old}= is deprecated and will be removed in the next release; use {new}=",
        DeprecationWarning,
        stacklevel=3,
    )
    return old_value
