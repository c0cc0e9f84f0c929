"""The evaluation store's tables (SQLAlchemy 2 declarative models).

* ``assay_evaluations``: one row per evaluation: when, what kind, which dataset and
  model (as typed, canonical and masked, and as the model's answers named it:
  ``served_model``), with which parameters, its status (``running``/``finished``/
  ``failed``) and the assay version that computed it.
* ``assay_metrics``: its metric records, exactly as :class:`~assay.results.Metric` has
  them (type, JSON value, JSON parameters), in order.
* ``assay_items``: for LLM runs, one row per item: prompt, raw answer, parsed result
  (and for LLM fairness the facts re-scoring needs, ``info``),
  or the call error, with attempts, latency and token usage.
* ``assay_units`` (issue 30): the run's units, what rebuilds its per-unit tally: the
  evaluator's class and its compressed state (:mod:`assay.store.units`); none for a run
  saved with ``--no-units`` or by an evaluator without a tally.
* ``assay_names`` (issue 30): the run's ``--name`` and ``--tag KEY=VALUE`` labels.

The two tables added later are new tables, not new columns: a store made before them is
read as it is (a reader finds no units and no names) and gets them on its first write.

The same schema works on SQLite and PostgreSQL (JSON columns are ``json`` there, which
keeps numbers and key order exactly as written). A store made by an older assay gets the
columns added since (nullable, every row kept) when it is opened: :func:`upgrade_schema`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    inspect,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from assay.store.records import BadJson

__all__ = ["Base", "EvaluationRow", "MetricRow", "ItemRow", "UnitsRow", "NameRow", "STATUSES",
           "missing_columns", "upgrade_schema"]  # fmt: skip

STATUSES = ("running", "finished", "failed")

# BIGINT keys on PostgreSQL; SQLite only auto-increments "INTEGER PRIMARY KEY".
_Id = BigInteger().with_variant(Integer(), "sqlite")


class _JsonText(TypeDecorator[Any]):
    """JSON kept as TEXT on SQLite.

    SQLite gives a column declared ``JSON`` numeric affinity, which turns the text ``1.0`` into
    the integer 1; a TEXT column keeps the JSON exactly as written.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else json.dumps(value, allow_nan=False)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if value is None:
            return None
        try:
            return json.loads(value)
        except (TypeError, ValueError):  # a cell edited by hand, a foreign file
            return BadJson(value)


def _json(none_as_null: bool = False) -> Any:
    return JSON(none_as_null=none_as_null).with_variant(_JsonText(), "sqlite")


class Base(DeclarativeBase):
    pass


class EvaluationRow(Base):
    __tablename__ = "assay_evaluations"

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    kind: Mapped[str] = mapped_column(String(100), nullable=False)
    dataset: Mapped[str | None] = mapped_column(String(500), nullable=True)
    model: Mapped[str | None] = mapped_column(String(500), nullable=True)
    parameters: Mapped[dict[str, Any]] = mapped_column(_json(), nullable=False, default=dict)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    assay_version: Mapped[str] = mapped_column(String(50), nullable=False)
    # added later (issue 19): the model as its answers named it; NULL when nothing said
    served_model: Mapped[str | None] = mapped_column(String(500), nullable=True)

    __table_args__ = (
        Index("ix_assay_evaluations_kind_dataset", "kind", "dataset", "status", "created"),
        Index("ix_assay_evaluations_created", "created"),
    )


class MetricRow(Base):
    __tablename__ = "assay_metrics"

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    evaluation_id: Mapped[int] = mapped_column(
        _Id, ForeignKey("assay_evaluations.id", ondelete="CASCADE"), nullable=False, index=True
    )
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    type: Mapped[str] = mapped_column(String(200), nullable=False)
    value: Mapped[Any] = mapped_column(_json(none_as_null=True), nullable=True)
    parameters: Mapped[dict[str, Any]] = mapped_column(_json(), nullable=False, default=dict)


class ItemRow(Base):
    __tablename__ = "assay_items"

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    evaluation_id: Mapped[int] = mapped_column(
        _Id, ForeignKey("assay_evaluations.id", ondelete="CASCADE"), nullable=False, index=True
    )
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    item_id: Mapped[str] = mapped_column(String(500), nullable=False)
    prompt: Mapped[Any] = mapped_column(_json(), nullable=False)
    params: Mapped[dict[str, Any]] = mapped_column(_json(), nullable=False, default=dict)
    ok: Mapped[bool] = mapped_column(Boolean, nullable=False)
    # JSON, not TEXT: an answer or message may hold a NUL character, which PostgreSQL
    # text columns refuse; as a JSON string it round-trips on every back end.
    raw_answer: Mapped[str | None] = mapped_column(_json(none_as_null=True), nullable=True)
    parsed: Mapped[Any] = mapped_column(_json(none_as_null=True), nullable=True)
    error_kind: Mapped[str | None] = mapped_column(String(32), nullable=True)
    status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(_json(none_as_null=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    latency: Mapped[float | None] = mapped_column(Float, nullable=True)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cached: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # the facts re-scoring needs (LLM fairness: target, group); NULL for other tasks and
    # for rows stored before the column existed (added by upgrade_schema)
    info: Mapped[Any] = mapped_column(_json(none_as_null=True), nullable=True)


class UnitsRow(Base):
    __tablename__ = "assay_units"

    evaluation_id: Mapped[int] = mapped_column(
        _Id, ForeignKey("assay_evaluations.id", ondelete="CASCADE"), primary_key=True
    )
    evaluator: Mapped[str] = mapped_column(String(300), nullable=False)  # module:Class
    codec: Mapped[str] = mapped_column(String(50), nullable=False)
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)  # compressed bytes
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class NameRow(Base):
    __tablename__ = "assay_names"

    evaluation_id: Mapped[int] = mapped_column(
        _Id, ForeignKey("assay_evaluations.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str | None] = mapped_column(String(500), nullable=True, index=True)
    tags: Mapped[dict[str, Any]] = mapped_column(_json(), nullable=False, default=dict)


def missing_columns(conn: Any) -> list[tuple[str, str]]:
    """``(table, column)`` of the schema that the database's existing tables lack."""
    insp = inspect(conn)
    out = []
    for table in Base.metadata.sorted_tables:
        if insp.has_table(table.name):
            have = {c["name"] for c in insp.get_columns(table.name)}
            out += [(table.name, c.name) for c in table.columns if c.name not in have]
    return out


def upgrade_schema(conn: Any) -> list[str]:
    """Add the columns an older store lacks (all nullable: every row is kept, the new
    column NULL in it); returns them as ``table.column``. Run inside the write
    transaction that holds the store's lock, so concurrent first opens add each once.

    Example:
        >>> from sqlalchemy import create_engine
        >>> eng = create_engine("sqlite://")
        >>> with eng.begin() as conn:  # a store from before served_model
        ...     Base.metadata.create_all(conn)
        ...     _ = conn.exec_driver_sql("ALTER TABLE assay_evaluations DROP COLUMN served_model")
        ...     upgrade_schema(conn), missing_columns(conn)
        (['assay_evaluations.served_model'], [])
    """
    quote = conn.dialect.identifier_preparer.quote
    added = []
    for table_name, column_name in missing_columns(conn):
        column = Base.metadata.tables[table_name].columns[column_name]
        if not column.nullable:
            from assay.store.engine import StoreError

            raise StoreError(f"cannot add the required column {table_name}.{column_name}")
        ddl = column.type.compile(dialect=conn.dialect)
        conn.execute(text(f"ALTER TABLE {quote(table_name)} ADD COLUMN {quote(column_name)} {ddl}"))
        added.append(f"{table_name}.{column_name}")
    return added
