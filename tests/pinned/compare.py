"""How pinned records are written and compared.

Two lists of records are the same when they hold the same records, in any order: a record
is identified by its ``type`` and its parameters with every number blanked, and records
with the same identity are compared in their order of appearance. Compared fields:

* strings, booleans and ``None`` exactly (``None`` stays ``None``, NaN stays NaN);
* numbers (``value``, every number in a parameter, nested in dicts and lists) within
  ``1e-9`` relative or absolute (``math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)``);
* dict keys exactly (a parameter added or dropped is a difference).

The order of the records is not compared: a refactor may emit the same records in another
order. A failure names the record (its type and parameters) and the field.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

TOL = 1e-9


def dumps(records: list[Any]) -> str:
    """The pinned file's text: a JSON list with one record per line (keys sorted), so a
    regenerated pin's diff shows the records that changed."""
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def _blank(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return "<number>"
    if isinstance(v, dict):
        return {k: _blank(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_blank(x) for x in v]
    return v


def identity(record: dict[str, Any]) -> str:
    """The record's type and parameters with numbers blanked, as sorted JSON."""
    return json.dumps(
        {"type": record.get("type"), "parameters": _blank(record.get("parameters"))},
        sort_keys=True,
    )


def _diff(a: Any, b: Any, where: str) -> str | None:
    """The first difference between pinned ``a`` and new ``b``, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return (
                f"{where}: keys differ: only pinned {sorted(a.keys() - b.keys())}, "
                f"only new {sorted(b.keys() - a.keys())}"
            )
        for k in sorted(a):
            d = _diff(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: length {len(a)} pinned, {len(b)} new"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _diff(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    num = (int, float)
    if (
        isinstance(a, num)
        and isinstance(b, num)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return (
                None if math.isnan(fa) and math.isnan(fb) else f"{where}: {a!r} pinned, {b!r} new"
            )
        if math.isclose(fa, fb, rel_tol=TOL, abs_tol=TOL):
            return None
        return f"{where}: {a!r} pinned, {b!r} new (difference {fb - fa:.3g})"
    if type(a) is not type(b) or a != b:
        return f"{where}: {a!r} pinned, {b!r} new"
    return None


def _label(record: dict[str, Any]) -> str:
    return f"{record.get('type')} {json.dumps(record.get('parameters'), sort_keys=True)}"


def differences(pinned: list[Any], new: list[Any], limit: int = 10) -> list[str]:
    """What differs between the pinned records and the new ones (at most ``limit`` lines)."""
    out: list[str] = []
    left: dict[str, list[Any]] = defaultdict(list)
    right: dict[str, list[Any]] = defaultdict(list)
    for r in pinned:
        left[identity(r)].append(r)
    for r in new:
        right[identity(r)].append(r)
    for key in left.keys() - right.keys():
        for r in left[key]:
            out.append(f"record missing: {_label(r)}")
    for key in right.keys() - left.keys():
        for r in right[key]:
            out.append(f"record added: {_label(r)}")
    for key in sorted(left.keys() & right.keys()):
        a, b = left[key], right[key]
        if len(a) != len(b):
            out.append(f"{len(a)} records pinned, {len(b)} new: {_label(a[0])}")
            continue
        for x, y in zip(a, b):
            d = _diff(x, y, "record")
            if d:
                out.append(f"{_label(x)}: {d}")
    if len(pinned) != len(new):
        out.append(f"{len(pinned)} records pinned, {len(new)} new")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])
