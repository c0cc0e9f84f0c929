"""Stored evaluations as JSON or CSV text (``Store.export``, ``assay runs export``).

CSV has one row per metric record (columns ``evaluation_id, created, kind, dataset,
model, served_model, status, type, value, parameters``; dict values and parameters as JSON text), or
with ``items=True`` one row per LLM item record (the evaluation's status is then the
column ``evaluation_status``, the item's HTTP status ``status``).

Example:
    >>> from datetime import datetime, UTC
    >>> from assay.results import Metric, MetricSet
    >>> ev = Evaluation(1, datetime(2024, 1, 1, tzinfo=UTC), None, "k", None, None, {},
    ...                 "finished", None, "0", metrics=MetricSet([Metric("Accuracy", 0.5)]))
    >>> print(export_evaluations([ev], fmt="csv").splitlines()[1])
    1,2024-01-01T00:00:00+00:00,k,,,,finished,Accuracy,0.5,{}
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidInputError
from assay.store.records import Evaluation, ItemRecord

__all__ = ["export_evaluations"]

_HEAD = ["evaluation_id", "created", "kind", "dataset", "model", "served_model", "status"]


def export_evaluations(evs: Sequence[Evaluation], *, fmt: str = "json", items: bool = False) -> str:
    """JSON (a list of evaluations with metrics and, with ``items``, item records) or CSV."""
    if fmt == "json":
        return json.dumps([e.to_dict() for e in evs], indent=2, allow_nan=False)
    if fmt != "csv":
        raise InvalidInputError("must be 'json' or 'csv'", source="export", field="format")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if items:
        cols = [f.name for f in ItemRecord.__dataclass_fields__.values()]
        # the item's own ``status`` (its HTTP status) follows; the evaluation's is renamed
        w.writerow([*_HEAD[:-1], "evaluation_status", *cols])
        for e in evs:
            for it in e.items or []:
                d = it.to_dict()
                w.writerow(_head(e) + [_cell(d[c]) for c in cols])
    else:
        w.writerow(_HEAD + ["type", "value", "parameters"])
        for e in evs:
            for m in e.metrics or []:
                d = m.to_dict()
                params = json.dumps(d["parameters"], allow_nan=False)
                w.writerow(_head(e) + [d["type"], _cell(d["value"]), params])
    return buf.getvalue()


def _head(e: Evaluation) -> list[Any]:
    return [
        e.id,
        e.created.isoformat(),
        e.kind,
        e.dataset or "",
        e.model or "",
        e.served_model or "",
        e.status,
    ]


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, allow_nan=False)
    return v
