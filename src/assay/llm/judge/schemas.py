"""Strict shapes of the judge's replies (pydantic), and the one parser that applies them.

A reply is valid only if it is one JSON object (optionally inside a ``` fence) of exactly
the expected shape: no missing or extra keys, verdicts among ``yes``/``no``/``idk``,
ratings integers 1..5, and every verdict list exactly as long as the list it judges (a
wrong count is invalid, never truncated or padded). Anything else is :class:`Invalid`
with the reason, so the caller can re-ask.

Example:
    >>> parse('{"statements": ["a", "b"]}', Statements).statements
    ['a', 'b']
    >>> bad = '{"verdicts": [{"verdict": "maybe", "reason": "x"}]}'
    >>> parse(bad, Verdicts, {"verdicts": 1}).reason
    "verdicts.0.verdict: Input should be 'yes', 'no' or 'idk'"
    >>> parse('{"verdicts": []}', Verdicts, {"verdicts": 2}).reason
    'expected 2 verdicts in "verdicts", got 0'

:func:`reply_format` gives the same shape as a JSON schema for the request (OpenAI's
``response_format`` ``json_schema``), so a server that supports it, and the embedded model
by grammar, can only answer in that shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "Verdict",
    "Verdicts",
    "Statements",
    "Opinions",
    "Claims",
    "CorrectnessVerdicts",
    "Rating",
    "Invalid",
    "parse",
    "reply_format",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Verdict(_Strict):
    verdict: Literal["yes", "no", "idk"]
    reason: str = ""


class Verdicts(_Strict):
    verdicts: list[Verdict]


class CorrectnessVerdicts(_Strict):
    answer_verdicts: list[Verdict]
    reference_verdicts: list[Verdict]


class Statements(_Strict):
    statements: list[str]


class Opinions(_Strict):
    opinions: list[str]


class Claims(_Strict):
    claims: list[str]


class Rating(_Strict):
    analysis: str
    score: int = Field(ge=1, le=5)


@dataclass(frozen=True)
class Invalid:
    """A reply that does not have the expected shape, and why."""

    reason: str


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "reply"
    return f"{where}: {err['msg']}"


def parse(
    text: str | None, schema: type[_Strict], lengths: Mapping[str, int] | None = None
) -> _Strict | Invalid:
    """The reply as ``schema``, or :class:`Invalid`; ``lengths`` fixes list lengths by key."""
    if text is None:
        return Invalid("empty reply")
    m = _FENCE.match(text)
    body = m.group(1) if m else text.strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        return Invalid(f"not JSON ({e.msg} at position {e.pos})")
    if not isinstance(data, dict):
        return Invalid(f"expected a JSON object, got {type(data).__name__}")
    try:
        obj = schema.model_validate(data)
    except ValidationError as e:
        return Invalid(_first_error(e))
    for key, n in (lengths or {}).items():
        got = len(getattr(obj, key))
        if got != n:
            return Invalid(f'expected {n} verdicts in "{key}", got {got}')
    return obj


#: Longest free text (a reason, an analysis, a statement) the request's schema allows, so a
#: constrained model closes its JSON before running out of tokens.
MAX_TEXT = 300


def _bounded(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _bounded(v) for k, v in node.items()}
        if out.get("type") == "string" and "enum" not in out:
            out["maxLength"] = MAX_TEXT
        if out.get("type") == "integer" and {"minimum", "maximum"} <= out.keys():
            out["enum"] = list(range(out["minimum"], out["maximum"] + 1))  # grammars keep enums
        return out
    if isinstance(node, list):
        return [_bounded(v) for v in node]
    return node


def reply_format(schema: type[_Strict], lengths: Mapping[str, int] | None = None) -> dict[str, Any]:
    """``response_format`` asking for exactly ``schema`` (``lengths`` fix list lengths by key).

    Free text is capped at :data:`MAX_TEXT` characters and a bounded integer (a rating) is
    listed as its values, which grammar-based decoders enforce. :func:`parse` still checks
    the reply.

    Example:
        >>> f = reply_format(Verdicts, {"verdicts": 2})
        >>> f["type"], f["json_schema"]["name"]
        ('json_schema', 'Verdicts')
        >>> items = f["json_schema"]["schema"]["properties"]["verdicts"]
        >>> items["minItems"], items["maxItems"]
        (2, 2)
        >>> reply_format(Rating)["json_schema"]["schema"]["properties"]["score"]["enum"]
        [1, 2, 3, 4, 5]
    """
    body = _bounded(schema.model_json_schema())
    for key, n in (lengths or {}).items():
        body["properties"][key].update(minItems=n, maxItems=n)
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": body}}
