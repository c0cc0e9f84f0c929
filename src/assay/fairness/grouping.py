"""Which rows form a group: one group column, crossed group columns, and control columns.

A group column's every distinct value is a group; a tuple of group columns makes every
combination of their values present in the data a group (crossed groups). *Control
columns* (fairlearn's ``control_features``) split the data into control levels (every
combination of their values present) and the groups are formed, and compared, within each
level: a table is then keyed by the control values followed by the group values, and
:func:`split_by_control` cuts it into one group table per control level.

Example:
    >>> values = {"sex": ["F", "M", "F"], "site": ["x", "x", "y"]}
    >>> names, codes = batch_grouping(values, "sex", ("site",), 3, None)
    >>> names.tolist(), codes.tolist()
    (['["x", "F"]', '["x", "M"]', '["y", "F"]'], [0, 1, 2])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError
from assay.fairness.group_table import GroupTable, crossed_codes
from assay.fairness.group_text import as_group_text, factorize_text, group_column_values

__all__ = ["GroupColumn", "batch_grouping", "column_key", "control_key", "control_levels",
           "split_by_control"]  # fmt: skip

#: A group column, or several whose combinations are the groups (crossed groups).
GroupColumn = str | tuple[str, ...]


def column_key(c: Any, source: str = "group_columns") -> GroupColumn:
    """A group column's name, or a tuple of several (a one-column list is that column).

    Example:
        >>> column_key(["sex", "race"]), column_key(["sex"]), column_key("L1")
        (('sex', 'race'), 'sex', 'L1')
    """
    if isinstance(c, (list, tuple)) and c:
        names = tuple(dict.fromkeys(_name(x, source) for x in c))
        return names[0] if len(names) == 1 else names
    return _name(c, source)


def control_key(columns: Iterable[Any]) -> tuple[str, ...]:
    """The control columns, each a non-empty name, without repeats."""
    return tuple(dict.fromkeys(_name(c, "control_columns") for c in columns))


def _name(c: Any, source: str) -> str:
    if not isinstance(c, str) or not c:
        raise InvalidInputError(f"a column must be a non-empty name, got {c!r}", source=source)
    return c


def columns_of(column: GroupColumn) -> list[str]:
    """The column names of a group column key."""
    return [column] if isinstance(column, str) else list(column)


def batch_grouping(
    values: Mapping[str, ArrayLike],
    column: GroupColumn,
    controls: tuple[str, ...],
    n: int,
    source: str | None,
) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
    """The sorted group names of one batch and each row's index among them. One column
    without controls: its texts; otherwise the combinations present of the control and
    group columns' values, named by JSON lists (controls first)."""
    columns = [*controls, *columns_of(column)]
    texts = [
        as_group_text(group_column_values(values, c, n, source), source=source, field=c)
        for c in columns
    ]
    if len(columns) == 1:
        names, codes = factorize_text(texts[0])
        return names.astype(str), codes
    return crossed_codes(texts)


def split_by_control(
    table: GroupTable, controls: int, crossed: bool
) -> list[tuple[Any, GroupTable]]:
    """Cut a table keyed by ``controls`` control values and then the group values into one
    group table per control level: ``(control value or list of values, table)``, the
    groups named as without controls (their text, or a JSON list when ``crossed``).

    Example:
        >>> t = GroupTable(np.array(['["x", "F"]', '["x", "M"]', '["y", "F"]']),
        ...                np.ones((3, 4), dtype=np.int64))
        >>> [(c, s.names.tolist()) for c, s in split_by_control(t, 1, False)]
        [('x', ['F', 'M']), ('y', ['F'])]
    """
    out = []
    for control, names, rows in control_levels(table.names, controls, crossed):
        sums = None if table.sums is None else table.sums[rows]
        out.append((control, GroupTable(names, table.counts[rows], sums)))
    return out


def control_levels(
    names: NDArray[np.str_], controls: int, crossed: bool
) -> list[tuple[Any, NDArray[np.str_], NDArray[np.int64]]]:
    """The control levels of a table's group ``names`` (keyed by ``controls`` control values,
    then the group's): ``(control, the level's group names, their rows in the table)``, in
    the order of :func:`split_by_control`."""
    keys = [json.loads(name) for name in names.tolist()]
    levels: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        levels.setdefault(json.dumps(key[:controls], ensure_ascii=False), []).append(i)
    out = []
    for level in sorted(levels):
        rows = np.asarray(levels[level], dtype=np.int64)
        sub = [
            json.dumps(keys[i][controls:], ensure_ascii=False) if crossed else keys[i][controls]
            for i in rows
        ]
        order = np.argsort(np.asarray(sub, dtype=str), kind="stable")
        control = json.loads(level)
        out.append((control[0] if controls == 1 else control, np.asarray(sub, str)[order],
                    rows[order]))  # fmt: skip
    return out
