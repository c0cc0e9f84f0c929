"""The evaluation store: every evaluation persisted, found again, exported.

SQLite by default (``$ASSAY_HOME/assay.db``, see :mod:`assay.store.config`), PostgreSQL
through ``ASSAY_DATABASE_URL=postgresql://...`` (psycopg 3). Several processes can write
to one store at once: on SQLite every write transaction takes the write lock up front
(``BEGIN IMMEDIATE``, WAL mode, a 60 s busy timeout), on PostgreSQL each save is one
transaction.

Example:
    >>> import tempfile, os
    >>> from assay.results import Metric, MetricSet
    >>> st = Store("sqlite:///" + os.path.join(tempfile.mkdtemp(), "a.db"))
    >>> eid = st.save(MetricSet([Metric("Accuracy", 0.9)]), kind="classification", dataset="iris", model="tree")
    >>> st.latest(kind="classification", dataset="iris").metrics.get("Accuracy").value
    0.9
    >>> [e.id for e in st.list(kind="classification")] == [eid]
    True
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, delete, event, func, insert, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import StaticPool

from assay.errors import AssayError, InvalidInputError
from assay.results import Metric, MetricSet, to_jsonable
from assay.store.config import default_database_url, normalize_database_url
from assay.store.tables import STATUSES, Base, EvaluationRow, ItemRow, MetricRow

__all__ = ["Store", "Evaluation", "ItemRecord", "StoreError", "EvaluationHandle"]


class StoreError(AssayError):
    """The evaluation store cannot be reached or refused an operation."""


@dataclass(frozen=True)
class ItemRecord:
    """One LLM item of an evaluation: prompt, raw answer, parsed result, or the call error.

    Example:
        >>> ItemRecord("q1", [{"role": "user", "content": "2+2?"}], ok=True, raw_answer="4", parsed=4).parsed
        4
    """

    item_id: str
    prompt: Any
    ok: bool
    raw_answer: str | None = None
    parsed: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    error_kind: str | None = None
    status: int | None = None
    error: str | None = None
    attempts: int = 0
    latency: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False

    @classmethod
    def from_llm(cls, item: Any, record: Any, parsed: Any = None) -> ItemRecord:
        """From a runner :class:`~assay.llm.runner.Item` and its :class:`~assay.llm.runner.Record`."""
        return cls(
            item_id=str(record.id),
            prompt=[dict(m) for m in item.messages],
            params=dict(item.params),
            ok=bool(record.ok),
            raw_answer=record.text,
            parsed=parsed,
            error_kind=record.error_kind,
            status=record.status,
            error=record.error,
            attempts=record.attempts,
            latency=record.latency,
            prompt_tokens=record.usage.prompt_tokens,
            completion_tokens=record.usage.completion_tokens,
            cached=record.cached,
        )

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable({**self.__dict__, "params": dict(self.params)})


@dataclass(frozen=True)
class Evaluation:
    """One stored evaluation; ``metrics``/``items`` are loaded by :meth:`Store.get` and friends."""

    id: int
    created: datetime
    finished: datetime | None
    kind: str
    dataset: str | None
    model: str | None
    parameters: dict[str, Any]
    status: str
    error: str | None
    assay_version: str
    metrics: MetricSet | None = None
    items: list[ItemRecord] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: the evaluation's fields, its metrics and (if loaded) its items."""
        d: dict[str, Any] = {
            "id": self.id,
            "created": self.created.isoformat(),
            "finished": self.finished.isoformat() if self.finished else None,
            "kind": self.kind,
            "dataset": self.dataset,
            "model": self.model,
            "parameters": self.parameters,
            "status": self.status,
            "error": self.error,
            "assay_version": self.assay_version,
        }
        if self.metrics is not None:
            d["metrics"] = self.metrics.to_list()
        if self.items is not None:
            d["items"] = [i.to_dict() for i in self.items]
        return d


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _now() -> datetime:
    return datetime.now(UTC)


def _version() -> str:
    import assay

    return assay.__version__


class Store:
    """The evaluation store.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path.db``, ``postgresql://user@host/db``) or
            a file path; default ``$ASSAY_DATABASE_URL`` or ``$ASSAY_HOME/assay.db``.
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = normalize_database_url(url) if url else default_database_url()
        try:
            self._write, self._read = _engines(self.url)
            self._create_schema()
        except SQLAlchemyError as e:
            raise StoreError(
                f"cannot open the evaluation store at {self.display_url}: {_short(e)}"
            ) from None

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"Store({self.display_url!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Release the connections."""
        self._write.dispose()
        if self._read is not self._write:
            self._read.dispose()

    def _create_schema(self) -> None:
        with self._write.begin() as conn:
            if conn.dialect.name == "postgresql":  # serialise concurrent first opens
                conn.execute(text("SELECT pg_advisory_xact_lock(7311893)"))
            Base.metadata.create_all(conn)

    @contextmanager
    def _tx(self, write: bool = True) -> Iterator[Any]:
        try:
            with (self._write if write else self._read).begin() as conn:
                yield conn
        except SQLAlchemyError as e:
            raise StoreError(f"evaluation store {self.display_url}: {_short(e)}") from None

    # -- writing ----------------------------------------------------------------------

    def start(
        self,
        kind: str,
        *,
        dataset: str | None = None,
        model: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> int:
        """Record a new evaluation with status ``running``; returns its id."""
        _check_kind(kind)
        with self._tx() as conn:
            return int(
                conn.execute(
                    insert(EvaluationRow).returning(EvaluationRow.id),
                    [_eval_row(kind, dataset, model, parameters, "running")],
                ).scalar_one()
            )

    def add_metrics(self, evaluation_id: int, metrics: Iterable[Metric]) -> None:
        """Append metric records to an evaluation."""
        with self._tx() as conn:
            self._insert_metrics(conn, evaluation_id, metrics)

    def add_items(self, evaluation_id: int, items: Iterable[ItemRecord]) -> None:
        """Append per-item LLM records to an evaluation."""
        with self._tx() as conn:
            self._insert_items(conn, evaluation_id, items)

    def finish(self, evaluation_id: int, metrics: Iterable[Metric] | None = None) -> None:
        """Add the final metrics (if any) and mark the evaluation ``finished``."""
        with self._tx() as conn:
            if metrics is not None:
                self._insert_metrics(conn, evaluation_id, metrics)
            self._set_status(conn, evaluation_id, "finished", None)

    def fail(self, evaluation_id: int, error: str) -> None:
        """Mark the evaluation ``failed`` with the reason."""
        with self._tx() as conn:
            self._set_status(conn, evaluation_id, "failed", error.replace("\x00", "\\x00"))

    def save(
        self,
        metrics: Iterable[Metric],
        *,
        kind: str,
        dataset: str | None = None,
        model: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        items: Iterable[ItemRecord] | None = None,
    ) -> int:
        """Store a finished evaluation with its metrics (and items) in one transaction; returns its id."""
        _check_kind(kind)
        row = _eval_row(kind, dataset, model, parameters, "finished")
        row["finished"] = row["created"]
        with self._tx() as conn:
            eid = int(
                conn.execute(insert(EvaluationRow).returning(EvaluationRow.id), [row]).scalar_one()
            )
            self._insert_metrics(conn, eid, metrics)
            if items is not None:
                self._insert_items(conn, eid, items)
        return eid

    @contextmanager
    def evaluation(
        self,
        kind: str,
        *,
        dataset: str | None = None,
        model: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> Iterator[EvaluationHandle]:
        """A ``running`` evaluation that is ``finished`` when the block ends, ``failed`` if it raises.

        Example:
            >>> import tempfile, os
            >>> st = Store(os.path.join(tempfile.mkdtemp(), "b.db"))
            >>> with st.evaluation("llm_fairness", dataset="pisa", model="embedded") as ev:
            ...     ev.add_metrics([Metric("Accuracy", 0.5)])
            >>> st.get(ev.id).status
            'finished'
        """
        eid = self.start(kind, dataset=dataset, model=model, parameters=parameters)
        handle = EvaluationHandle(self, eid)
        try:
            yield handle
        except BaseException as e:
            self.fail(eid, f"{type(e).__name__}: {e}")
            raise
        self.finish(eid)

    def delete(self, evaluation_id: int) -> None:
        """Remove an evaluation with its metrics and items."""
        with self._tx() as conn:
            conn.execute(delete(MetricRow).where(MetricRow.evaluation_id == evaluation_id))
            conn.execute(delete(ItemRow).where(ItemRow.evaluation_id == evaluation_id))
            conn.execute(delete(EvaluationRow).where(EvaluationRow.id == evaluation_id))

    def _insert_metrics(self, conn: Any, eid: int, metrics: Iterable[Metric]) -> None:
        start = conn.execute(
            select(func.coalesce(func.max(MetricRow.position) + 1, 0)).where(
                MetricRow.evaluation_id == eid
            )
        ).scalar_one()
        rows = []
        for n, m in enumerate(metrics):
            d = m.to_dict()
            _check_text(d["type"], "type", record=f"metric {n + 1}")
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

    def _insert_items(self, conn: Any, eid: int, items: Iterable[ItemRecord]) -> None:
        start = conn.execute(
            select(func.coalesce(func.max(ItemRow.position) + 1, 0)).where(
                ItemRow.evaluation_id == eid
            )
        ).scalar_one()
        rows = []
        for n, it in enumerate(items):
            d = it.to_dict()
            _check_text(d["item_id"], "item_id", record=f"item {n + 1}")
            _check_text(d["error_kind"], "error_kind", record=f"item {n + 1}")
            rows.append({"evaluation_id": eid, "position": start + n, **d})
        if rows:
            conn.execute(insert(ItemRow), rows)

    @staticmethod
    def _set_status(conn: Any, eid: int, status: str, error: str | None) -> None:
        res = conn.execute(
            update(EvaluationRow)
            .where(EvaluationRow.id == eid)
            .values(status=status, error=error, finished=_now())
        )
        if res.rowcount == 0:
            raise InvalidInputError("no such evaluation", source="store", record=eid, field="id")

    # -- reading ----------------------------------------------------------------------

    def list(
        self,
        *,
        kind: str | None = None,
        dataset: str | None = None,
        model: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[Evaluation]:
        """Evaluations matching the filters, newest first (without metrics)."""
        if status is not None and status not in STATUSES:
            raise InvalidInputError(
                f"must be one of {', '.join(STATUSES)}", source="store", field="status"
            )
        q = select(EvaluationRow)
        for col, val in (
            (EvaluationRow.kind, kind),
            (EvaluationRow.dataset, dataset),
            (EvaluationRow.model, model),
            (EvaluationRow.status, status),
        ):
            if val is not None:
                q = q.where(col == val)
        q = q.order_by(EvaluationRow.created.desc(), EvaluationRow.id.desc())
        if limit is not None:
            q = q.limit(limit)
        with self._tx(write=False) as conn:
            return [_evaluation(r) for r in conn.execute(q).mappings()]

    def get(self, evaluation_id: int, *, items: bool = False) -> Evaluation:
        """One evaluation with its metrics (and items if asked).

        Raises:
            InvalidInputError: no evaluation has that id.
        """
        with self._tx(write=False) as conn:
            row = (
                conn.execute(select(EvaluationRow).where(EvaluationRow.id == evaluation_id))
                .mappings()
                .first()
            )
            if row is None:
                raise InvalidInputError(
                    "no such evaluation",
                    source=f"store {self.display_url}",
                    record=evaluation_id,
                    field="id",
                )
            return self._load(conn, _evaluation(row), items)

    def latest(
        self,
        *,
        kind: str,
        dataset: str | None = None,
        model: str | None = None,
        items: bool = False,
    ) -> Evaluation | None:
        """The most recent ``finished`` evaluation of a kind (for a dataset and model), with metrics."""
        q = select(EvaluationRow).where(
            EvaluationRow.kind == kind, EvaluationRow.status == "finished"
        )
        if dataset is not None:
            q = q.where(EvaluationRow.dataset == dataset)
        if model is not None:
            q = q.where(EvaluationRow.model == model)
        q = q.order_by(EvaluationRow.created.desc(), EvaluationRow.id.desc()).limit(1)
        with self._tx(write=False) as conn:
            row = conn.execute(q).mappings().first()
            return None if row is None else self._load(conn, _evaluation(row), items)

    def latest_per_dataset(
        self,
        *,
        kind: str,
        datasets: Sequence[str] | None = None,
        model: str | None = None,
        require: bool = False,
    ) -> dict[str, Evaluation]:
        """The last finished evaluation of ``kind`` for every dataset (optionally of one model).

        With ``require=True`` every dataset in ``datasets`` must have one, as "Average
        LLM Fairness" in spec/fairness-and-llm-suites.md demands; otherwise
        :class:`~assay.errors.InvalidInputError` names the first that has none.
        """
        ranked = select(
            EvaluationRow.id,
            EvaluationRow.dataset,
            func.row_number()
            .over(
                partition_by=EvaluationRow.dataset,
                order_by=(EvaluationRow.created.desc(), EvaluationRow.id.desc()),
            )
            .label("rank"),
        ).where(
            EvaluationRow.kind == kind,
            EvaluationRow.status == "finished",
            EvaluationRow.dataset.is_not(None),
        )
        if model is not None:
            ranked = ranked.where(EvaluationRow.model == model)
        if datasets is not None:
            ranked = ranked.where(EvaluationRow.dataset.in_(list(datasets)))
        sub = ranked.subquery()
        q = select(EvaluationRow).join(sub, sub.c.id == EvaluationRow.id).where(sub.c.rank == 1)
        with self._tx(write=False) as conn:
            found = {
                r["dataset"]: self._load(conn, _evaluation(r), False)
                for r in conn.execute(q).mappings()
            }
        if require and datasets is not None:
            for d in datasets:
                if d not in found:
                    where = f"kind {kind!r}" + (f", model {model!r}" if model else "")
                    raise InvalidInputError(
                        f"no finished evaluation of {where}",
                        source="store",
                        record=f"dataset {d!r}",
                    )
        order = list(datasets) if datasets is not None else sorted(found)
        return {d: found[d] for d in order if d in found}

    def _load(self, conn: Any, ev: Evaluation, items: bool) -> Evaluation:
        mrows = conn.execute(
            select(MetricRow.type, MetricRow.value, MetricRow.parameters)
            .where(MetricRow.evaluation_id == ev.id)
            .order_by(MetricRow.position)
        ).all()
        metrics = MetricSet(Metric(t, v, dict(p or {})) for t, v, p in mrows)
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
            its = [
                ItemRecord(**{k: (dict(v) if k == "params" else v) for k, v in r.items()})
                for r in irows
            ]
        return Evaluation(**{**ev.__dict__, "metrics": metrics, "items": its})

    # -- export -----------------------------------------------------------------------

    def export(
        self, evaluation_ids: Sequence[int], *, fmt: str = "json", items: bool = False
    ) -> str:
        """JSON (a list of evaluations with metrics and, with ``items``, item records) or CSV.

        CSV has one row per metric record (columns ``evaluation_id, created, kind,
        dataset, model, status, type, value, parameters``; dict values and parameters as
        JSON text), or with ``items=True`` one row per item record.
        """
        evs = [self.get(i, items=items) for i in evaluation_ids]
        if fmt == "json":
            return json.dumps([e.to_dict() for e in evs], indent=2, allow_nan=False)
        if fmt != "csv":
            raise InvalidInputError("must be 'json' or 'csv'", source="export", field="format")
        buf = io.StringIO()
        head = ["evaluation_id", "created", "kind", "dataset", "model", "status"]
        w = csv.writer(buf, lineterminator="\n")
        if items:
            cols = [f.name for f in ItemRecord.__dataclass_fields__.values()]
            w.writerow(head + cols)
            for e in evs:
                for it in e.items or []:
                    d = it.to_dict()
                    w.writerow(_head(e) + [_cell(d[c]) for c in cols])
        else:
            w.writerow(head + ["type", "value", "parameters"])
            for e in evs:
                for m in e.metrics or []:
                    d = m.to_dict()
                    w.writerow(
                        _head(e)
                        + [
                            d["type"],
                            _cell(d["value"]),
                            json.dumps(d["parameters"], allow_nan=False),
                        ]
                    )
        return buf.getvalue()


class EvaluationHandle:
    """The running evaluation inside ``with store.evaluation(...) as ev``."""

    def __init__(self, store: Store, evaluation_id: int) -> None:
        self.store = store
        self.id = evaluation_id

    def add_metrics(self, metrics: Iterable[Metric]) -> None:
        self.store.add_metrics(self.id, metrics)

    def add_items(self, items: Iterable[ItemRecord]) -> None:
        self.store.add_items(self.id, items)


def _check_kind(kind: str) -> None:
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidInputError("must be a non-empty string", source="store", field="kind")


def _check_text(value: Any, field: str, record: Any = None) -> None:
    """Names and labels must be valid Unicode without NUL characters (PostgreSQL text refuses both)."""
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


def _eval_row(
    kind: str,
    dataset: str | None,
    model: str | None,
    parameters: Mapping[str, Any] | None,
    status: str,
) -> dict[str, Any]:
    for name, value in (("kind", kind), ("dataset", dataset), ("model", model)):
        _check_text(value, name)
    return {
        "created": _now(),
        "finished": None,
        "kind": kind,
        "dataset": dataset,
        "model": model,
        "parameters": to_jsonable(dict(parameters or {})),
        "status": status,
        "error": None,
        "assay_version": _version(),
    }


def _evaluation(r: Mapping[str, Any]) -> Evaluation:
    return Evaluation(
        id=int(r["id"]),
        created=_utc(r["created"]),  # type: ignore[arg-type]
        finished=_utc(r["finished"]),
        kind=r["kind"],
        dataset=r["dataset"],
        model=r["model"],
        parameters=dict(r["parameters"] or {}),
        status=r["status"],
        error=r["error"],
        assay_version=r["assay_version"],
    )


def _head(e: Evaluation) -> list[Any]:
    return [e.id, e.created.isoformat(), e.kind, e.dataset or "", e.model or "", e.status]


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, allow_nan=False)
    return v


def _short(e: BaseException) -> str:
    text = str(getattr(e, "orig", None) or e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _engines(url: str) -> tuple[Engine, Engine]:
    """(write engine, read engine). SQLite: WAL, busy timeout, BEGIN IMMEDIATE for writes."""
    if not url.startswith("sqlite"):
        eng = create_engine(url, pool_pre_ping=True)
        return eng, eng
    database = url.split(":///", 1)[1] if ":///" in url else ""
    memory = database in ("", ":memory:")
    if memory:
        eng = create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
        _sqlite_events(eng, begin="BEGIN")
        return eng, eng
    Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    write = create_engine(url, connect_args={"timeout": 60})
    read = create_engine(url, connect_args={"timeout": 60})
    _sqlite_events(write, begin="BEGIN IMMEDIATE")
    _sqlite_events(read, begin="BEGIN")
    return write, read


def _sqlite_events(engine: Engine, *, begin: str) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _rec: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 60000")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)
