"""Writing and reading the store's rows (the SQL behind :class:`~assay.store.store.Store`).

Names and labels are checked before they reach the database: valid Unicode, no NUL
character (PostgreSQL's text type refuses both), and model URLs lose their password.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.orm import aliased

from assay.errors import InvalidInputError
from assay.results import Metric, MetricSet, to_jsonable
from assay.store.record_keys import current_parameters
from assay.store.records import Evaluation, ItemRecord, json_cell
from assay.store.tables import EvaluationRow, ItemRow, MetricRow

__all__ = [
    "check_kind",
    "check_text",
    "insert_metrics",
    "insert_items",
    "set_status",
    "load_evaluation",
    "eval_row",
    "model_key",
    "model_filter",
    "name_row",
    "units_row",
]


def _now() -> datetime:
    return datetime.now(UTC)


def _version() -> str:
    import assay

    return assay.__version__


def insert_metrics(conn: Any, eid: int, metrics: Iterable[Metric]) -> None:
    """Append metric records after the evaluation's last one."""
    start = conn.execute(
        select(func.coalesce(func.max(MetricRow.position) + 1, 0)).where(
            MetricRow.evaluation_id == eid
        )
    ).scalar_one()
    rows = []
    for n, m in enumerate(metrics):
        d = m.to_dict()
        check_text(d["type"], "type", record=f"metric {n + 1}")
        rows.append(
            {
                "evaluation_id": eid,
                "position": start + n,
                "type": d["type"],
                "value": d["value"],
                "parameters": d["parameters"],
            }
        )
    if rows:
        conn.execute(insert(MetricRow), rows)


def insert_items(conn: Any, eid: int, items: Iterable[ItemRecord]) -> None:
    """Append item records after the evaluation's last one."""
    start = conn.execute(
        select(func.coalesce(func.max(ItemRow.position) + 1, 0)).where(ItemRow.evaluation_id == eid)
    ).scalar_one()
    rows = []
    for n, it in enumerate(items):
        d = it.to_dict()
        check_text(d["item_id"], "item_id", record=f"item {n + 1}")
        check_text(d["error_kind"], "error_kind", record=f"item {n + 1}")
        rows.append({"evaluation_id": eid, "position": start + n, **d})
    if rows:
        conn.execute(insert(ItemRow), rows)


def set_status(conn: Any, eid: int, status: str, error: str | None) -> None:
    res = conn.execute(
        update(EvaluationRow)
        .where(EvaluationRow.id == eid)
        .values(status=status, error=error, finished=_now())
    )
    if res.rowcount == 0:
        raise InvalidInputError("no such evaluation", source="store", record=eid, field="id")


def name_row(name: str | None, tags: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``assay_names`` row of a run's name and tags (checked), or ``None`` for none."""
    if name is None and not tags:
        return None
    if name is not None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError("must be a non-empty text", source="--name")
        check_text(name, "name")
    clean: dict[str, str] = {}
    for k, v in (tags or {}).items():
        if not isinstance(k, str) or not k.strip():
            raise InvalidInputError(f"a tag needs a KEY, got {k!r}", source="--tag")
        check_text(k, "tag")
        check_text(str(v), "tag", record=k)
        clean[k] = str(v)
    return {"name": name, "tags": clean}


def units_row(metrics: Any, units: Any) -> dict[str, Any] | None:
    """The ``assay_units`` row of a run (see :meth:`Store.save`), or ``None``."""
    from assay.store.units import CODEC, evaluator_path, keeps_units, pack_state

    if units is False or units is None:
        return None
    ev: Any = getattr(metrics, "source", None) if units is True else units
    if ev is None or not keeps_units(ev):
        if units is not True:
            raise InvalidInputError(
                "units= must be True, False or a non-empty evaluator with a tally()",
                source="store",
                field="units",
            )
        return None
    blob = pack_state(ev.state())
    return {"evaluator": evaluator_path(ev), "codec": CODEC, "size": len(blob), "data": blob}


# -- reading ----------------------------------------------------------------------


def load_evaluation(conn: Any, ev: Evaluation, items: bool) -> Evaluation:
    """``ev`` with its metrics (and items) read from the database."""
    mrows = conn.execute(
        select(MetricRow.type, MetricRow.value, MetricRow.parameters)
        .where(MetricRow.evaluation_id == ev.id)
        .order_by(MetricRow.position)
    ).all()
    metrics = MetricSet(
        Metric(
            t,
            json_cell(v, evaluation=ev.id, field=f"{t} value"),
            current_parameters(t, json_cell(p, evaluation=ev.id, field=f"{t} parameters") or {}),
        )
        for t, v, p in mrows
    )
    its = None
    if items:
        cols = [
            c
            for c in ItemRow.__table__.columns
            if c.name not in ("id", "evaluation_id", "position")
        ]
        irows = conn.execute(
            select(*cols).where(ItemRow.evaluation_id == ev.id).order_by(ItemRow.position)
        ).mappings()
        its = []
        for r in irows:
            where = f"item {r['item_id']!r} "
            values: dict[str, Any] = {
                k: json_cell(v, evaluation=ev.id, field=where + k) for k, v in r.items()
            }
            values["params"] = dict(values["params"] or {})
            its.append(ItemRecord(**values))
    return Evaluation(**{**ev.__dict__, "metrics": metrics, "items": its})


# -- export -----------------------------------------------------------------------


def check_kind(kind: str) -> None:
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidInputError("must be a non-empty string", source="store", field="kind")


def check_text(value: Any, field: str, record: Any = None) -> None:
    """Names and labels must be valid Unicode without NUL (PostgreSQL text refuses both)."""
    if not isinstance(value, str):
        return
    if "\x00" in value:
        raise InvalidInputError(
            "contains a NUL character", source="store", record=record, field=field
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            "is not valid Unicode (lone surrogate)", source="store", record=record, field=field
        ) from None


def model_key(model: str | None) -> str | None:
    """The model name the store keeps and matches: one canonical, masked form.

    ``http://me:secret@HOST:80/v1/#m`` and ``http://me:other@host/v1#m`` are one model
    (see :func:`assay.llm.models.spec.canonical_model_name`).
    """
    if model is None:
        return None
    from assay.llm.models.spec import canonical_model_name

    return canonical_model_name(model)


def model_filter(model: str) -> Any:
    """The SQL condition "this run is of ``model``", however it was typed.

    A run matches when its model as typed or as served (canonical, masked: see
    :func:`model_key`) is the filter's, or is a model that a run typed as the filter was
    served as: once a run typed ``#smollm2`` has been answered as
    ``#smollm2-135m-instruct``, either name finds the runs of both.
    """
    key = model_key(model)
    other = aliased(EvaluationRow)
    served_as = select(other.served_model).where(
        other.model == key, other.served_model.is_not(None)
    )
    return or_(
        EvaluationRow.model == key,
        EvaluationRow.served_model == key,
        EvaluationRow.model.in_(served_as),
        EvaluationRow.served_model.in_(served_as),
    )


def eval_row(
    kind: str,
    dataset: str | None,
    model: str | None,
    parameters: Mapping[str, Any] | None,
    status: str,
    served_model: str | None = None,
) -> dict[str, Any]:
    for name, value in (
        ("kind", kind),
        ("dataset", dataset),
        ("model", model),
        ("served_model", served_model),
    ):
        check_text(value, name)
    return {
        "created": _now(),
        "finished": None,
        "kind": kind,
        "dataset": dataset,
        "model": model_key(model),
        "parameters": to_jsonable(dict(parameters or {})),
        "status": status,
        "error": None,
        "assay_version": _version(),
        "served_model": model_key(served_model),
    }
