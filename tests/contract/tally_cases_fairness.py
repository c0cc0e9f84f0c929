"""Tally contract cases of the fairness evaluator (``tests/contract/tallies.py``).

The fairness tallies' units are the datums of a cell (a definition's outcome x privileged,
a group's outcome, an overall outcome): interchangeable for the family's records. Such a
unit's id is its cell in words (``("group", "race", "a", "TP")``); :func:`_take` gives a
fresh evaluator a datum of the case in that cell for each (any datum of the cell gives the
family's records the same counts), or the case's own datums by row number (slices).
One threshold definition (so the mean over definitions is that definition's) and one group
column; ``site`` is the cluster, ``lab`` the slice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.fairness import FairnessEvaluator, PrivilegedGroup
from assay.fairness.tally import record_id
from assay.results import Metric
from contract.tallies import TallyCase

OUTCOMES = ("TP", "FP", "FN", "TN")


def _data(n: int = 48) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(21)
    y = rng.integers(0, 2, n)
    return {
        "y": y,
        "yhat": np.where(rng.random(n) < 0.7, y, 1 - y),
        "age": rng.integers(20, 60, n),
        "race": rng.choice(["a", "b", "c"], n),
        "site": np.array([f"s{i % 6}" for i in range(n)]),
        "lab": rng.choice(["p", "q"], n),
    }


DATA = _data()
IDS = list(range(len(DATA["y"])))
OUTCOME = np.array(OUTCOMES)[(2 * (DATA["yhat"] != 1) + (DATA["y"] != 1))]
CONFIG = {"groups": ["age:40"], "group_columns": ["race"]}
PRIVILEGED = PrivilegedGroup.parse("age:40").privileged(DATA["age"], source=None)


def _row(unit: Any) -> int:
    """The case's datum standing for a unit: itself (a row number), or the first datum of
    the cell a tally's unit id names."""
    if not isinstance(unit, tuple):
        return int(unit)
    if unit[0] == "definition":  # ("definition", label, outcome, privileged)
        match = (OUTCOME == unit[2]) & (PRIVILEGED == unit[3])
    elif unit[0] == "group":  # ("group", column, group, outcome)
        match = (OUTCOME == unit[3]) & (DATA[unit[1]] == unit[2])
    else:  # ("overall", outcome)
        match = OUTCOME == unit[1]
    at = np.flatnonzero(match)
    assert at.size, f"no datum of the case in the cell {unit!r}"
    return int(at[0])


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> FairnessEvaluator:
    rows = np.array([_row(u) for u in ids], dtype=np.intp)
    ev = FairnessEvaluator(**CONFIG, **opts)
    columns = {k: DATA[k][rows] for k in ("age", "race", "site", "lab")}
    return ev.add_arrays(DATA["y"][rows], DATA["yhat"][rows], columns)


def _make(opts: Mapping[str, Any]) -> FairnessEvaluator:
    return _take(IDS, opts)


def _key(m: Metric) -> Any:
    return None if isinstance(m.value, dict) else record_id(m)


TALLY_CASES = [
    TallyCase(
        name="fairness",
        make=_make,
        take=_take,
        key=_key,
        ids=IDS,
        columns={"site": list(DATA["site"]), "lab": list(DATA["lab"])},
        cluster="site",
        by="lab",
    )
]
