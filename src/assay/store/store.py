"""The evaluation store: every evaluation persisted, found again, exported.

SQLite by default (``$ASSAY_HOME/assay.db``, see :mod:`assay.store.config`), PostgreSQL
through ``ASSAY_DATABASE_URL=postgresql://...`` (psycopg 3). Several processes can write
to one store at once: on SQLite every write transaction takes the write lock up front
(``BEGIN IMMEDIATE``, WAL mode, a 60 s busy timeout), on PostgreSQL each save is one
transaction. ``Store(url, create=False)`` opens an existing store for reading only (the
read commands use it): nothing on disk changes, not even the journal mode, so a store in a
read-only folder reads; an older store is upgraded by the first write (``Store(url)``,
``assay runs upgrade``), never by a read.

Example:
    >>> import tempfile, os
    >>> from assay.results import Metric, MetricSet
    >>> st = Store("sqlite:///" + os.path.join(tempfile.mkdtemp(), "a.db"))
    >>> ms = MetricSet([Metric("Accuracy", 0.9)])
    >>> eid = st.save(ms, kind="classification", dataset="iris", model="tree")
    >>> st.latest(kind="classification", dataset="iris").metrics.get("Accuracy").value
    0.9
    >>> [e.id for e in st.list(kind="classification")] == [eid]
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, insert, inspect, select, text
from sqlalchemy.exc import SQLAlchemyError

from assay.errors import InvalidInputError
from assay.results import Metric
from assay.store.config import default_database_url, normalize_database_url
from assay.store.engine import StoreError, display_url, open_engines, short_error
from assay.store.export import export_evaluations
from assay.store.records import Evaluation, ItemRecord, evaluation_from_row
from assay.store.rows import (
    check_kind,
    eval_row,
    insert_items,
    insert_metrics,
    load_evaluation,
    model_filter,
    model_key,
    name_row,
    set_status,
    units_row,
)
from assay.store.tables import (
    STATUSES,
    Base,
    EvaluationRow,
    ItemRow,
    MetricRow,
    NameRow,
    UnitsRow,
    missing_columns,
    upgrade_schema,
)
from assay.store.units import rebuild

__all__ = [
    "Store",
    "EvaluationHandle",
]


class Store:
    """The evaluation store.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path.db``, ``postgresql://user@host/db``) or
            a file path; default ``$ASSAY_DATABASE_URL`` or ``$ASSAY_HOME/assay.db``.
    """

    def __init__(
        self, url: str | None = None, *, create: bool = True, _older_ok: bool = False
    ) -> None:
        #: what opening it added to an older store (tables, ``table.column``)
        self.upgraded: list[str] = []
        self.url = normalize_database_url(url) if url else default_database_url()
        try:
            if create and _existing_sqlite(self.url):  # a foreign file: named, untouched
                Store(self.url, create=False, _older_ok=True).close()
            self._write, self._read = open_engines(self.url, create=create)
            if create:
                self.upgraded = self._create_schema()
            else:
                self._check_schema(older_ok=_older_ok)
        except SQLAlchemyError as e:
            raise StoreError(
                f"cannot open the evaluation store at {self.display_url}: {short_error(e)}"
            ) from None

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        return display_url(self.url)

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

    def _check_schema(self, *, older_ok: bool = False) -> None:
        """A store opened for reading is read as it is: a file that is no assay store, or
        one an older assay made (columns added since), is named and left untouched."""
        with self._read.connect() as conn:
            if not inspect(conn).has_table(EvaluationRow.__tablename__):
                if older_ok:  # an empty or new file: the writer creates the tables
                    return
                raise StoreError(f"no evaluation store at {self.display_url} (nothing saved yet)")
            gaps = missing_columns(conn)
        foreign = [f"{t}.{c}" for t, c in gaps if not Base.metadata.tables[t].columns[c].nullable]
        if foreign:
            raise StoreError(
                f"{self.display_url} is not an assay evaluation store: its table "
                f"{foreign[0].split('.')[0]} has no column {foreign[0].split('.')[1]!r}"
            )
        if gaps and not older_ok:
            raise StoreError(
                f"the evaluation store {self.display_url} was made by an older assay (it lacks "
                f"{', '.join(f'{t}.{c}' for t, c in gaps)}); reading never changes a store: "
                f"upgrade it with 'assay runs upgrade --db {self.display_url}' (any --save "
                "to it does the same)"
            )

    def _create_schema(self) -> list[str]:
        """Create the missing tables and add the columns an older store lacks, under the
        store's lock; returns what was added (``table`` or ``table.column``)."""
        with self._write.begin() as conn:
            if conn.dialect.name == "postgresql":  # serialise concurrent first opens
                conn.execute(text("SELECT pg_advisory_xact_lock(7311893)"))
            insp = inspect(conn)
            new = [t.name for t in Base.metadata.sorted_tables if not insp.has_table(t.name)]
            try:
                added = upgrade_schema(conn)
            except StoreError as e:
                raise StoreError(
                    f"{self.display_url} is not an assay evaluation store: {e}"
                ) from None
            Base.metadata.create_all(conn)
        return new + added

    @contextmanager
    def _tx(self, write: bool = True) -> Iterator[Any]:
        try:
            with (self._write if write else self._read).begin() as conn:
                yield conn
        except SQLAlchemyError as e:
            raise StoreError(f"evaluation store {self.display_url}: {short_error(e)}") from None

    # -- writing ----------------------------------------------------------------------

    def start(
        self,
        kind: str,
        *,
        dataset: str | None = None,
        model: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        served_model: str | None = None,
        created: datetime | None = None,
        name: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> int:
        """Record a new evaluation with status ``running``; returns its id.

        ``created`` is when the work began (default: now), so a run stored after it stopped
        keeps its real duration; ``name`` and ``tags`` label it (as :meth:`save`)."""
        check_kind(kind)
        row = eval_row(kind, dataset, model, parameters, "running", served_model)
        if created is not None:
            row["created"] = created if created.tzinfo else created.replace(tzinfo=UTC)
        labels = name_row(name, tags)
        with self._tx() as conn:
            eid = int(
                conn.execute(insert(EvaluationRow).returning(EvaluationRow.id), [row]).scalar_one()
            )
            if labels is not None:
                conn.execute(insert(NameRow), [{"evaluation_id": eid, **labels}])
            return eid

    def add_metrics(self, evaluation_id: int, metrics: Iterable[Metric]) -> None:
        """Append metric records to an evaluation."""
        with self._tx() as conn:
            insert_metrics(conn, evaluation_id, metrics)

    def add_items(self, evaluation_id: int, items: Iterable[ItemRecord]) -> None:
        """Append per-item LLM records to an evaluation."""
        with self._tx() as conn:
            insert_items(conn, evaluation_id, items)

    def finish(self, evaluation_id: int, metrics: Iterable[Metric] | None = None) -> None:
        """Add the final metrics (if any) and mark the evaluation ``finished``."""
        with self._tx() as conn:
            if metrics is not None:
                insert_metrics(conn, evaluation_id, metrics)
            set_status(conn, evaluation_id, "finished", None)

    def fail(self, evaluation_id: int, error: str) -> None:
        """Mark the evaluation ``failed`` with the reason."""
        with self._tx() as conn:
            set_status(conn, evaluation_id, "failed", error.replace("\x00", "\\x00"))

    def save(
        self,
        metrics: Iterable[Metric],
        *,
        kind: str,
        dataset: str | None = None,
        model: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        items: Iterable[ItemRecord] | None = None,
        created: datetime | None = None,
        served_model: str | None = None,
        error: str | None = None,
        units: Any = True,
        name: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> int:
        """Store a finished evaluation with its metrics (and items) in one transaction.

        ``units``: keep the run's units (its evaluator's declared state, compressed, from
        which ``assay compare`` rebuilds its per-unit tally; :mod:`assay.store.units`):
        ``True`` (default) keeps those of the evaluator that computed ``metrics`` (its
        :meth:`~assay.evaluator.Evaluator.compute` marks them, ``metrics.source``), an
        evaluator keeps that one's, ``False`` none. Only an evaluator with a ``tally()``
        has units to keep. ``name`` and ``tags`` (``{KEY: VALUE}``) label the run.

        ``created`` is when the work began (default: now); ``finished`` is now. With
        ``error`` (why it failed: "3 of 40 items failed") it is stored ``failed``, so
        ``latest``, ``compare --last`` and ``report --last`` never pick it.
        ``served_model`` is the model as its answers named it (an LLM run's
        :attr:`~assay.llm.driver.LLMRun.served_model`); filters by ``model`` match it too.
        Returns the evaluation's id.
        """
        check_kind(kind)
        status = "finished" if error is None else "failed"
        row = eval_row(kind, dataset, model, parameters, status, served_model)
        row["finished"] = row["created"]
        if error is not None:
            row["error"] = error.replace("\x00", "\\x00")
        if created is not None:
            row["created"] = created if created.tzinfo else created.replace(tzinfo=UTC)
        labels = name_row(name, tags)
        kept = units_row(metrics, units)
        with self._tx() as conn:
            eid = int(
                conn.execute(insert(EvaluationRow).returning(EvaluationRow.id), [row]).scalar_one()
            )
            insert_metrics(conn, eid, metrics)
            if items is not None:
                insert_items(conn, eid, items)
            if labels is not None:
                conn.execute(insert(NameRow), [{"evaluation_id": eid, **labels}])
            if kept is not None:
                conn.execute(insert(UnitsRow), [{"evaluation_id": eid, **kept}])
        return eid

    def units(self, evaluation_id: int) -> Any:
        """The evaluator a run's units rebuild (its ``tally()`` gives the run's tallies), or
        ``None`` for a run kept without units (``--no-units``, an older store, an
        evaluator without a tally)."""
        self._check_id(evaluation_id)
        if not self._has(UnitsRow.__tablename__):
            return None
        with self._tx(write=False) as conn:
            row = conn.execute(
                select(UnitsRow.evaluator, UnitsRow.data).where(
                    UnitsRow.evaluation_id == evaluation_id
                )
            ).first()
        return None if row is None else rebuild(row[0], bytes(row[1]), evaluation=evaluation_id)

    def units_size(self, evaluation_id: int) -> int | None:
        """The compressed size in bytes of a run's units (``None``: none kept)."""
        if not self._has(UnitsRow.__tablename__):
            return None
        with self._tx(write=False) as conn:
            return conn.execute(
                select(UnitsRow.size).where(UnitsRow.evaluation_id == evaluation_id)
            ).scalar_one_or_none()

    def _has(self, table: str) -> bool:
        """Whether the store has ``table`` (a store made before it was added may not, and
        reading never adds it)."""
        known = self.__dict__.setdefault("_tables", {})
        if table not in known:
            with self._tx(write=False) as conn:
                known[table] = inspect(conn).has_table(table)
        return bool(known[table])

    @contextmanager
    def evaluation(
        self,
        kind: str,
        *,
        dataset: str | None = None,
        model: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        served_model: str | None = None,
    ) -> Iterator[EvaluationHandle]:
        """A ``running`` evaluation: ``finished`` when the block ends, ``failed`` if it raises.

        Example:
            >>> import tempfile, os
            >>> st = Store(os.path.join(tempfile.mkdtemp(), "b.db"))
            >>> with st.evaluation("llm_fairness", dataset="pisa", model="embedded") as ev:
            ...     ev.add_metrics([Metric("Accuracy", 0.5)])
            >>> st.get(ev.id).status
            'finished'
        """
        eid = self.start(
            kind, dataset=dataset, model=model, parameters=parameters, served_model=served_model
        )
        handle = EvaluationHandle(self, eid)
        try:
            yield handle
        except BaseException as e:
            self.fail(eid, f"{type(e).__name__}: {e}")
            raise
        self.finish(eid)

    def delete(self, evaluation_id: int) -> None:
        """Remove an evaluation with its metrics and items."""
        self._check_id(evaluation_id)
        with self._tx() as conn:
            for extra in (UnitsRow, NameRow):
                conn.execute(delete(extra).where(extra.evaluation_id == evaluation_id))
            conn.execute(delete(MetricRow).where(MetricRow.evaluation_id == evaluation_id))
            conn.execute(delete(ItemRow).where(ItemRow.evaluation_id == evaluation_id))
            conn.execute(delete(EvaluationRow).where(EvaluationRow.id == evaluation_id))

    def list(
        self,
        *,
        kind: str | None = None,
        dataset: str | None = None,
        model: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[Evaluation]:
        """Evaluations matching the filters, newest first (without metrics, with their count)."""
        if status is not None and status not in STATUSES:
            raise InvalidInputError(
                f"must be one of {', '.join(STATUSES)}", source="store", field="status"
            )
        q = select(EvaluationRow)
        for col, val in (
            (EvaluationRow.kind, kind),
            (EvaluationRow.dataset, dataset),
            (EvaluationRow.status, status),
        ):
            if val is not None:
                q = q.where(col == val)
        if model is not None:
            q = q.where(model_filter(model))
        q = q.order_by(EvaluationRow.created.desc(), EvaluationRow.id.desc())
        if limit is not None:
            q = q.limit(limit)
        with self._tx(write=False) as conn:
            evs = [evaluation_from_row(r) for r in conn.execute(q).mappings()]
            counts = dict(
                conn.execute(
                    select(MetricRow.evaluation_id, func.count())
                    .where(MetricRow.evaluation_id.in_([e.id for e in evs]))
                    .group_by(MetricRow.evaluation_id)
                ).all()
            )
            names = self._names(conn, [e.id for e in evs])
        return [
            replace(e, metric_count=int(counts.get(e.id, 0)), **names.get(e.id, {})) for e in evs
        ]

    def _names(self, conn: Any, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The ``name`` and ``tags`` of these runs (those that have any)."""
        if not ids or not self._has(NameRow.__tablename__):
            return {}
        rows = conn.execute(
            select(NameRow.evaluation_id, NameRow.name, NameRow.tags).where(
                NameRow.evaluation_id.in_(list(ids))
            )
        ).all()
        return {int(i): {"name": n, "tags": dict(t or {})} for i, n, t in rows}

    def _named(self, conn: Any, ev: Evaluation) -> Evaluation:
        return replace(ev, **self._names(conn, [ev.id]).get(ev.id, {}))

    def get(self, evaluation_id: int, *, items: bool = False) -> Evaluation:
        """One evaluation with its metrics (and items if asked).

        Raises:
            InvalidInputError: no evaluation has that id.
        """
        self._check_id(evaluation_id)
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
            return self._named(conn, load_evaluation(conn, evaluation_from_row(row), items))

    def _check_id(self, evaluation_id: int) -> None:
        """Ids are positive 64-bit integers: anything else is no evaluation of this store."""
        try:
            ok = 0 < int(evaluation_id) < 2**63
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InvalidInputError(
                "no such evaluation (ids are whole numbers from 1 to 2^63 - 1)",
                source=f"store {self.display_url}",
                record=f"evaluation {evaluation_id}",
                field="id",
            )

    def latest(
        self,
        *,
        kind: str,
        dataset: str | None = None,
        model: str | None = None,
        items: bool = False,
    ) -> Evaluation | None:
        """The newest ``finished`` evaluation of a kind (for a dataset and model), with metrics."""
        q = select(EvaluationRow).where(
            EvaluationRow.kind == kind, EvaluationRow.status == "finished"
        )
        if dataset is not None:
            q = q.where(EvaluationRow.dataset == dataset)
        if model is not None:
            q = q.where(model_filter(model))
        q = q.order_by(EvaluationRow.created.desc(), EvaluationRow.id.desc()).limit(1)
        with self._tx(write=False) as conn:
            row = conn.execute(q).mappings().first()
            if row is None:
                return None
            return self._named(conn, load_evaluation(conn, evaluation_from_row(row), items))

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
            ranked = ranked.where(model_filter(model))
        if datasets is not None:
            ranked = ranked.where(EvaluationRow.dataset.in_(list(datasets)))
        sub = ranked.subquery()
        q = select(EvaluationRow).join(sub, sub.c.id == EvaluationRow.id).where(sub.c.rank == 1)
        with self._tx(write=False) as conn:
            found = {
                r["dataset"]: load_evaluation(conn, evaluation_from_row(r), False)
                for r in conn.execute(q).mappings()
            }
        if require and datasets is not None:
            for d in datasets:
                if d not in found:
                    shown = model_key(model)
                    where = f"kind {kind!r}" + (f", model {shown!r}" if shown else "")
                    raise InvalidInputError(
                        f"no finished evaluation of {where}",
                        source="store",
                        record=f"dataset {d!r}",
                    )
        order = list(datasets) if datasets is not None else sorted(found)
        return {d: found[d] for d in order if d in found}

    def export(
        self, evaluation_ids: Sequence[int], *, fmt: str = "json", items: bool = False
    ) -> str:
        """JSON or CSV of these evaluations (see :mod:`assay.store.export`)."""
        evs = [self.get(i, items=items) for i in evaluation_ids]
        return export_evaluations(evs, fmt=fmt, items=items)


def _existing_sqlite(url: str) -> bool:
    """The URL names a SQLite file that exists and holds something."""
    from assay.store.config import sqlite_path

    path = sqlite_path(url)
    return path is not None and path.is_file() and path.stat().st_size > 0


class EvaluationHandle:
    """The running evaluation inside ``with store.evaluation(...) as ev``."""

    def __init__(self, store: Store, evaluation_id: int) -> None:
        self.store = store
        self.id = evaluation_id

    def add_metrics(self, metrics: Iterable[Metric]) -> None:
        self.store.add_metrics(self.id, metrics)

    def add_items(self, items: Iterable[ItemRecord]) -> None:
        self.store.add_items(self.id, items)
