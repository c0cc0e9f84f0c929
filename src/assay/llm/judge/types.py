"""The pieces every judge metric is made of: a datum, a judge task, an outcome.

A judge metric (see :mod:`assay.llm.judge.definitions`) is declared as a
:class:`JudgeMetric`: the datum fields it needs, the intermediates it shares with other
metrics (statements, opinions, claims of a text), a ``plan`` that turns a datum and those
intermediates into judge :class:`Task`\\ s, and a pure ``score`` that turns the parsed
replies into an :class:`Outcome`. The runner (:mod:`assay.llm.judge.run`) does the calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.llm.judge.schemas import Claims, Opinions, Statements

__all__ = [
    "COLUMNS",
    "EXTRACTIONS",
    "Datum",
    "Task",
    "Outcome",
    "JudgeMetric",
    "extraction_task",
]

#: datum fields and the input column each is read from
COLUMNS = {
    "query": "query",
    "prediction": "prediction",
    "groundtruths": "groundtruth",
    "contexts": "context",
}

#: intermediate kind -> (prompt name, schema, list attribute)
EXTRACTIONS: dict[str, tuple[str, Any, str]] = {
    "statements": ("statements", Statements, "statements"),
    "opinions": ("opinions", Opinions, "opinions"),
    "claims": ("claims", Claims, "claims"),
}


@dataclass(frozen=True)
class Datum:
    """One row to judge. ``groundtruths`` and ``contexts`` are tuples (possibly empty;
    ``contexts`` is ``None`` when the input has no context column)."""

    uid: str
    query: str | None = None
    prediction: str | None = None
    groundtruths: tuple[str, ...] = ()
    contexts: tuple[str, ...] | None = ()


@dataclass(frozen=True)
class Task:
    """One judge call: a unique key, a prompt with its values, the reply's shape."""

    key: str
    prompt: str
    values: Mapping[str, Any]
    schema: Any
    lengths: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """A metric's value for one datum (``None`` with ``reason`` when undefined)."""

    value: float | None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


#: intermediates of one datum: (kind, text) -> the extracted list
Extracted = Mapping[tuple[str, str], list[str]]
#: parsed replies of one datum's tasks, by task key
Replies = Mapping[str, Any]


@dataclass(frozen=True)
class JudgeMetric:
    """A judge metric: what it reads, what it shares, which calls it makes, how it scores.

    Attributes:
        name: the CLI/API name (``"faithfulness"``).
        type: the record type (``"Faithfulness"``).
        fields: datum fields it needs (keys of :data:`COLUMNS`).
        extracts: the shared intermediates of a datum it needs, as ``(kind, text)``.
        plan: the judge tasks for a datum, given its intermediates.
        score: the outcome from the datum, intermediates and parsed replies (pure).
    """

    name: str
    type: str
    fields: tuple[str, ...]
    extracts: Callable[[Datum], Sequence[tuple[str, str]]]
    plan: Callable[[Datum, Extracted], Sequence[Task]]
    score: Callable[[Datum, Extracted, Replies], Outcome]


def text_key(kind: str, text: str) -> str:
    """The run-wide key of one intermediate: the same text is extracted once."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
    return f"{kind}:{digest}"


def extraction_task(kind: str, text: str) -> Task:
    """The task extracting ``kind`` (statements, opinions, claims) from ``text``."""
    prompt, schema, _ = EXTRACTIONS[kind]
    return Task(text_key(kind, text), prompt, {"text": text}, schema)
