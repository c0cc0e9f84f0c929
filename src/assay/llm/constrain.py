"""Constrained replies: a task's reply shape sent as a constraint the server enforces.

A judge metric's reply is a JSON object of a fixed shape; pairwise judging's reply is free
reasoning followed by ``Choice: X``. Where the model can enforce a shape while it decodes,
assay sends it, so even a small model can only answer in that shape:

==================  ==============================  =========================================
kind                models                          what is sent
==================  ==============================  =========================================
``grammar``         the embedded model, ``assay     a GBNF ``grammar``: JSON of the schema
                    serve-model`` and other         (:func:`json_grammar`), or free text +
                    llama.cpp servers               choice
``json_schema``     OpenAI, vLLM, Ollama            ``response_format`` ``json_schema``; the
                                                    choice as ``{"reasoning", "choice"}``
                                                    with ``choice`` an enum, rendered back to
                                                    ``reasoning`` + ``Choice: X``
==================  ==============================  =========================================

``--structured auto`` (the default) constrains where the model is known to support it: the
embedded model, and endpoints whose ``/models`` list says who serves them (llama.cpp's and
llama-cpp-python's servers, vLLM, Ollama, OpenAI); ``on`` also sends ``json_schema`` to
any other endpoint; ``off`` never constrains. The reply is parsed the same way either way.

Example:
    >>> print(choice_grammar("AB", 20))
    root ::= free "Choice: " [AB]
    free ::= [^:：]{0,20}
    >>> choice_reply('{"reasoning": "Both fine; 1 is shorter.", "choice": "A"}', "AB")
    'Both fine; 1 is shorter.\\nChoice: A'
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import urlsplit

from assay.errors import InvalidInputError

__all__ = [
    "MODES",
    "GRAMMAR",
    "JSON_SCHEMA",
    "check_mode",
    "support",
    "resolve",
    "json_constraint",
    "json_grammar",
    "choice_constraint",
    "choice_grammar",
    "choice_reply",
]

MODES = ("auto", "on", "off")
GRAMMAR = "grammar"
JSON_SCHEMA = "json_schema"

#: ``owned_by`` of an endpoint's ``/models`` list -> the constraint it takes.
_OWNERS = {
    "me": GRAMMAR,  # llama-cpp-python's server (assay serve-model)
    "llamacpp": GRAMMAR,  # llama.cpp's llama-server
    "vllm": JSON_SCHEMA,
    "library": JSON_SCHEMA,  # Ollama
    "openai": JSON_SCHEMA,
    "system": JSON_SCHEMA,
    "openai-internal": JSON_SCHEMA,
}

#: Longest free reasoning (characters) before ``Choice: `` the grammar allows.
MAX_REASONING = 1000


def check_mode(mode: Any) -> str:
    """``auto``, ``on`` or ``off`` (``True``/``False`` read as ``on``/``off``).

    Example:
        >>> check_mode(True), check_mode("auto")
        ('on', 'auto')
    """
    if isinstance(mode, bool):
        return "on" if mode else "off"
    if mode not in MODES:
        raise InvalidInputError(f"use auto, on or off, got {mode!r}", source="--structured")
    return str(mode)


def support(model: Any) -> str | None:
    """The constraint ``model`` takes (``grammar``, ``json_schema``), or ``None`` if unknown.

    The embedded model takes grammars; an endpoint is asked once for its ``/models`` list
    (no model call), whose ``owned_by`` names the server; api.openai.com takes JSON schemas.
    """
    from assay.llm.models.embedded import EmbeddedChatModel

    if isinstance(model, EmbeddedChatModel):
        return GRAMMAR
    known = getattr(model, "constraint", None)
    if known in (GRAMMAR, JSON_SCHEMA):
        return str(known)
    if not hasattr(model, "base_url"):
        return None
    base = model.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    if urlsplit(base).hostname == "api.openai.com":
        return JSON_SCHEMA
    return _probe(base, model)


def _probe(base: str, model: Any) -> str | None:
    import httpx

    headers = dict(getattr(model, "_headers", None) or {})  # the model's own credentials
    try:
        r = httpx.get(f"{base.rstrip('/')}/models", headers=headers, timeout=5.0)
        rows = r.json().get("data") if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    owners = {str(row.get("owned_by")) for row in rows or [] if isinstance(row, dict)}
    found = {_OWNERS[o] for o in owners if o in _OWNERS}
    return found.pop() if len(found) == 1 else None


def resolve(model: Any, mode: str) -> str | None:
    """The constraint a run sends: ``off`` none, ``auto`` what the model supports, ``on``
    that or ``json_schema``."""
    if mode == "off":
        return None
    found = support(model)
    return found if found is not None or mode == "auto" else JSON_SCHEMA


def json_constraint(response_format: dict[str, Any], kind: str) -> dict[str, Any]:
    """Call parameters asking for an OpenAI ``json_schema`` response format, in ``kind``'s form.

    For llama.cpp (``grammar``) the schema becomes a GBNF ``grammar`` by llama-cpp-python's
    own converter, with one fix: its JSON string rule lets raw control characters (a
    newline inside a string) through, which no JSON parser accepts, so they are excluded as
    llama.cpp's own converter does. Without llama-cpp-python installed the schema is sent
    as ``response_format`` ``{"type": "json_object", "schema": S}`` (converted by the server).

    Example:
        >>> fmt = {"type": "json_schema",
        ...        "json_schema": {"name": "R", "schema": {"type": "string", "maxLength": 2}}}
        >>> json_constraint(fmt, "json_schema") == {"response_format": fmt}
        True
        >>> "x7F" in json_constraint(fmt, "grammar")["grammar"]  # doctest: +SKIP
        True
    """
    if kind != GRAMMAR:
        return {"response_format": response_format}
    from assay.llm.models.embedded import llama_response_format

    llama = llama_response_format(response_format)
    gbnf = json_grammar(llama["schema"]) if "schema" in llama else None
    return {"grammar": gbnf} if gbnf is not None else {"response_format": llama}


_LOOSE_CHAR = r'char ::= [^"\\] |'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'


def json_grammar(schema: dict[str, Any]) -> str | None:
    """GBNF for JSON of ``schema`` (``None`` without llama-cpp-python): :func:`json_constraint`."""
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError:
        return None
    gbnf = json_schema_to_gbnf(json.dumps(schema))
    return "\n".join(
        _JSON_CHAR + line[len(_LOOSE_CHAR) :] if line.startswith(_LOOSE_CHAR) else line
        for line in gbnf.splitlines()
    )


def choice_grammar(letters: str, max_chars: int = MAX_REASONING) -> str:
    """GBNF: free text (no ``:`` or ``：``, so never the marker) then ``Choice: `` and a letter."""
    if max_chars <= 0:
        return f'root ::= "Choice: " [{letters}]'
    return f'root ::= free "Choice: " [{letters}]\nfree ::= [^:：]{{0,{max_chars}}}'


def choice_schema(letters: str, max_chars: int = MAX_REASONING) -> dict[str, Any]:
    """The ``json_schema`` response format of free reasoning and a choice among ``letters``."""
    reasoning = {"type": "string", "maxLength": max_chars, "pattern": "^[^:：]*$"}
    schema = {
        "type": "object",
        "properties": {"reasoning": reasoning, "choice": {"type": "string", "enum": list(letters)}},
        "required": ["reasoning", "choice"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "Choice", "schema": schema}}


def choice_constraint(letters: str, kind: str, max_tokens: int) -> dict[str, Any]:
    """Call parameters constraining a reply to reasoning + ``Choice: X`` (X in ``letters``).

    The reasoning is capped so the choice fits in ``max_tokens`` (a token is at least one
    character; ``Choice: X`` takes at most 9 tokens).

    Example:
        >>> choice_constraint("AB", "grammar", 12)["grammar"].splitlines()[1]
        'free ::= [^:：]{0,3}'
    """
    room = min(MAX_REASONING, max_tokens - 9)
    if kind == GRAMMAR:
        return {"grammar": choice_grammar(letters, room)}
    return {"response_format": choice_schema(letters, max(room - 30, 0))}


def choice_reply(text: str | None, letters: str) -> str | None:
    """A ``json_schema`` choice reply rendered as the text reply it stands for
    (``reasoning``, a newline, ``Choice: X``); any other text as it is."""
    if not text or not text.lstrip().startswith("{"):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or set(data) != {"reasoning", "choice"}:
        return text
    reasoning, choice = data["reasoning"], data["choice"]
    if not isinstance(reasoning, str) or choice not in tuple(letters):
        return text
    return f"{reasoning.strip()}\nChoice: {choice}".lstrip("\n")
