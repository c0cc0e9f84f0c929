"""What the runner takes and gives: :class:`Item` (one call to make) and :class:`Record`.

An item is an id, chat messages and generation parameters. Items read from files are
checked strictly: a bad line is an :class:`~assay.errors.InvalidInputError` naming the
file, the line and the field, never a guess (``id: null`` does not become ``"None"``).

Example:
    >>> Item.from_dict({"id": 1, "prompt": "2+2?", "system": "Be brief."}).messages[0]["role"]
    'system'
    >>> Item.from_dict({"id": None, "prompt": "x"}, position=3, source="items.jsonl")
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: items.jsonl: row 3: field 'id': expected a string or an ...
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.models.base import LOGLIK_PARAM, Usage

__all__ = ["Item", "Record", "check_unique_ids"]


def _type_name(value: Any) -> str:
    return "null" if value is None else json.dumps(value)[:40] if _jsonable(value) else repr(value)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _item_id(d: Mapping[str, Any], where: Any, source: str) -> str:
    if "id" not in d:
        raise InvalidInputError("missing", source=source, record=where, field="id")
    value = d["id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidInputError(
            f"expected a string or an integer, got {_type_name(value)}",
            source=source,
            record=where,
            field="id",
        )
    text = str(value)
    if not text.strip():
        raise InvalidInputError("must not be empty", source=source, record=where, field="id")
    return text


def _check_messages(messages: Any, where: Any, source: str) -> None:
    if not isinstance(messages, (list, tuple)):
        raise InvalidInputError(
            f"expected a list of messages, got {_type_name(messages)}",
            source=source,
            record=where,
            field="messages",
        )
    if not messages:
        raise InvalidInputError("no messages", source=source, record=where, field="messages")
    for n, m in enumerate(messages, start=1):
        ok = (
            isinstance(m, Mapping)
            and isinstance(m.get("role"), str)
            and isinstance(m.get("content"), (str, list))
        )
        if not ok:
            raise InvalidInputError(
                f"message {n}: needs a 'role' string and a 'content' string",
                source=source,
                record=where,
                field="messages",
            )


@dataclass(frozen=True)
class Item:
    """One call to make: an id, chat messages, and generation parameters.

    Example:
        >>> item = Item.from_prompt("q1", "2+2?", system="Answer with a number.", max_tokens=4)
        >>> item.messages[0]["role"], item.params
        ('system', {'max_tokens': 4})
    """

    id: str
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``"loglik"`` when the params ask for log-likelihoods (``{"loglik": {...}}``: the
        runner calls ``model.loglik``, :func:`~assay.llm.models.base.ask`), else ``"chat"``."""
        return "loglik" if LOGLIK_PARAM in self.params else "chat"

    @classmethod
    def from_prompt(cls, id: str, prompt: str, *, system: str | None = None, **params: Any) -> Item:
        """A one-turn item: an optional system message and one user message."""
        msgs: list[dict[str, Any]] = []
        if system is not None:
            msgs.append({"role": "system", "content": system})
        msgs.append({"role": "user", "content": prompt})
        return cls(str(id), tuple(msgs), dict(params))

    @classmethod
    def from_dict(cls, d: Any, *, position: int | None = None, source: str = "items") -> Item:
        """From ``{"id", "messages" | "prompt", "system"?, "params"?}`` (a JSONL line).

        ``id`` is a string or an integer; ``system`` and ``prompt`` are strings;
        ``messages`` a list of ``{"role", "content"}``; ``params`` an object.
        """
        if not isinstance(d, Mapping):
            raise InvalidInputError(
                f"expected a JSON object, got {_type_name(d)}", source=source, record=position
            )
        where = position if position is not None else d.get("id")
        item_id = _item_id(d, where, source)
        params = d.get("params") or {}
        if not isinstance(params, Mapping):
            raise InvalidInputError(
                "expected an object", source=source, record=where, field="params"
            )
        if "messages" in d:
            _check_messages(d["messages"], where, source)
            return cls(item_id, tuple(d["messages"]), dict(params))
        if "prompt" not in d:
            raise InvalidInputError("needs 'messages' or 'prompt'", source=source, record=where)
        for name in ("prompt", "system"):
            value = d.get(name)
            if (name == "prompt" or value is not None) and not isinstance(value, str):
                raise InvalidInputError(
                    f"expected a string, got {_type_name(value)}",
                    source=source,
                    record=where,
                    field=name,
                )
        return cls.from_prompt(item_id, d["prompt"], system=d.get("system"), **params)

    def checked(self, where: Any = None, source: str = "items") -> Item:
        """This item with its id as a string, after checking its messages."""
        _check_messages(list(self.messages), self.id if where is None else where, source)
        return Item(str(self.id), tuple(self.messages), dict(self.params))


def check_unique_ids(items: Iterable[Item], *, source: str = "items") -> None:
    """Raise naming the source, position and first occurrence of a repeated id."""
    first: dict[str, int] = {}
    for pos, it in enumerate(items, start=1):
        if it.id in first:
            raise InvalidInputError(
                f"duplicate id {it.id!r} (first at item {first[it.id]})",
                source=source,
                record=pos,
                field="id",
            )
        first[it.id] = pos


@dataclass(frozen=True)
class Record:
    """The outcome of one item.

    Attributes:
        id: the item's id.
        ok: True when ``text`` holds the model's answer.
        text: the raw answer (``None`` on error).
        error_kind: one of :data:`assay.llm.models.base.ERROR_KINDS` on error.
        status: the HTTP status of the last failed attempt, if it was an HTTP error.
        error: the error message.
        attempts: calls made for this item in this run (0 when answered from the cache
            or by another item with the same prompt and params).
        latency: seconds of the last attempt (of the original call for cached answers).
        elapsed: wall seconds spent on the item in this run, backoff included.
        usage: token counts of the answer.
        cached: True when the answer came from the cache (or a duplicate item).
        raw: the raw response (the chat-completion JSON), not part of :meth:`to_dict`.
    """

    id: str
    ok: bool
    text: str | None = None
    error_kind: str | None = None
    status: int | None = None
    error: str | None = None
    attempts: int = 0
    latency: float | None = None
    elapsed: float = 0.0
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (one line of ``assay llm run`` output)."""
        return {
            "id": self.id,
            "ok": self.ok,
            "text": self.text,
            "error_kind": self.error_kind,
            "status": self.status,
            "error": self.error,
            "attempts": self.attempts,
            "latency": self.latency,
            "elapsed": self.elapsed,
            "usage": self.usage.to_dict(),
            "cached": self.cached,
        }
