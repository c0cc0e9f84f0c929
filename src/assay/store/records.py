"""What the store hands back: :class:`Evaluation` (one stored run) and :class:`ItemRecord`.

Example:
    >>> ItemRecord("q1", [{"role": "user", "content": "2+2?"}], ok=True, raw_answer="4").raw_answer
    '4'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from assay.errors import InvalidInputError
from assay.io.urls import mask_credentials
from assay.results import MetricSet, to_jsonable

__all__ = ["Evaluation", "ItemRecord", "evaluation_from_row", "BadJson", "json_cell"]


@dataclass(frozen=True)
class ItemRecord:
    """One LLM item of an evaluation: prompt, raw answer, parsed result, or the call error.

    Example:
        >>> prompt = [{"role": "user", "content": "2+2?"}]
        >>> ItemRecord("q1", prompt, ok=True, raw_answer="4", parsed=4).parsed
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
    #: the facts re-scoring the stored answer needs (LLM fairness: the row's target and
    #: group), for the tasks that keep them (``LLMTask.item_info``); ``None`` otherwise
    info: Mapping[str, Any] | None = None

    @classmethod
    def from_llm(
        cls, item: Any, record: Any, parsed: Any = None, info: Mapping[str, Any] | None = None
    ) -> ItemRecord:
        """From a runner ``Item`` and its ``Record`` (:mod:`assay.llm.runner`)."""
        return cls(
            item_id=str(record.id),
            prompt=[dict(m) for m in item.messages],
            params=dict(item.params),
            ok=bool(record.ok),
            raw_answer=record.text,
            parsed=parsed,
            error_kind=record.error_kind,
            status=record.status,
            error=mask_credentials(record.error),
            attempts=record.attempts,
            latency=record.latency,
            prompt_tokens=record.usage.prompt_tokens,
            completion_tokens=record.usage.completion_tokens,
            cached=record.cached,
            info=None if info is None else dict(info),
        )

    def to_dict(self) -> dict[str, Any]:
        info = None if self.info is None else dict(self.info)
        return to_jsonable({**self.__dict__, "params": dict(self.params), "info": info})


@dataclass(frozen=True)
class Evaluation:
    """One stored evaluation; ``metrics``/``items`` are loaded by ``Store.get`` and friends."""

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
    #: the number of metric records (``Store.list`` counts them without loading them)
    metric_count: int | None = None
    #: the model as its answers named it (an LLM run's server ``model`` field), if known
    served_model: str | None = None
    #: the run's ``--name`` and ``--tag KEY=VALUE`` labels (``assay_names``)
    name: str | None = None
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """How people tell the run apart: its name with its id, or the id alone."""
        return f"{self.name} (#{self.id})" if self.name else f"#{self.id}"

    @property
    def n_metrics(self) -> int | None:
        """How many metric records the evaluation has, where known."""
        if self.metric_count is not None:
            return self.metric_count
        return None if self.metrics is None else len(self.metrics)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: the evaluation's fields, its metrics and (if loaded) its items."""
        d: dict[str, Any] = {
            "id": self.id,
            "created": self.created.isoformat(),
            "finished": self.finished.isoformat() if self.finished else None,
            "kind": self.kind,
            "dataset": self.dataset,
            "model": self.model,
            "served_model": self.served_model,
            "name": self.name,
            "tags": dict(self.tags),
            "parameters": self.parameters,
            "status": self.status,
            "error": self.error,
            "assay_version": self.assay_version,
        }
        if self.n_metrics is not None:
            d["metric_count"] = self.n_metrics
        if self.metrics is not None:
            d["metrics"] = self.metrics.to_list()
        if self.items is not None:
            d["items"] = [i.to_dict() for i in self.items]
        return d


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


class BadJson:
    """A stored cell that is not JSON, kept as it was so that the reader names its run and
    field (:func:`json_cell`) instead of failing inside the database layer."""

    __slots__ = ("text",)

    def __init__(self, text: Any) -> None:
        self.text = text


def json_cell(value: Any, *, evaluation: Any, field: str) -> Any:
    """``value``, or :class:`~assay.errors.InvalidInputError` naming the evaluation and the
    field when the cell was not JSON.

    Example:
        >>> json_cell(BadJson("{oops"), evaluation=3, field="parameters")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: store: evaluation 3: field 'parameters': is not JSON ...
    """
    if isinstance(value, BadJson):
        raise InvalidInputError(
            f"is not JSON (the cell holds {str(value.text)[:60]!r}); the store was changed "
            "outside assay",
            source="store",
            record=f"evaluation {evaluation}",
            field=field,
        )
    return value


def evaluation_from_row(r: Mapping[str, Any]) -> Evaluation:
    """An :class:`Evaluation` (without metrics) from an ``assay_evaluations`` row.

    Credentials in a stored model URL are masked here too, for rows written before
    the store masked them on the way in.
    """
    return Evaluation(
        id=int(r["id"]),
        created=_utc(r["created"]),  # type: ignore[arg-type]
        finished=_utc(r["finished"]),
        kind=r["kind"],
        dataset=r["dataset"],
        model=mask_credentials(r["model"]),
        parameters=dict(json_cell(r["parameters"], evaluation=r["id"], field="parameters") or {}),
        status=r["status"],
        error=mask_credentials(r["error"]),
        assay_version=r["assay_version"],
        served_model=mask_credentials(r.get("served_model")),
    )
