"""Fast exact factorisation of the suites' label columns (bias types, languages, outcomes).

The label columns of a suite hold few distinct values (a handful of bias types, a few
dozen languages). For such columns one vectorised comparison per distinct value is
several times faster than hashing a million strings; past ``limit`` distinct values
:func:`factorize` falls back to :func:`pandas.factorize`. The result is exact either way.

Example:
    >>> codes, names = factorize(["race", "gender", "race"])
    >>> codes.tolist(), names
    ([1, 0, 1], ['gender', 'race'])
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["factorize"]


def factorize(values: Any, *, limit: int = 32) -> tuple[np.ndarray, list[str]]:
    """``(codes, names)`` with ``names`` sorted and ``names[codes[i]] == str(values[i])``."""
    a = np.asarray(values)
    if a.dtype.kind not in "US":
        a = a.astype(str)
    codes = np.full(a.shape[0], -1, dtype=np.int64)
    found: list[str] = []
    while len(found) < limit:
        open_ = codes < 0
        first = int(np.argmax(open_)) if a.shape[0] else 0
        if a.shape[0] == 0 or not open_[first]:
            order = sorted(range(len(found)), key=found.__getitem__)
            remap = np.empty(len(found), dtype=np.int64)
            remap[order] = np.arange(len(found))
            return (remap[codes] if len(found) else codes), [found[i] for i in order]
        value = a[first]
        codes[a == value] = len(found)
        found.append(str(value))
    import pandas as pd

    idx, uniq = pd.factorize(a, sort=True)
    return idx.astype(np.int64), [str(u) for u in uniq]
