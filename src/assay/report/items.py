"""The items of an LLM run in the report: a filterable table, each item's transcript, and
the way from a metric row down to the items behind it (as ``inspect view`` drills down).

Each item row carries *facets*, ``key=value`` strings the page filters on:

* ``status=ok|invalid|error`` (:func:`item_status`);
* slice facets from the item's stored facts (``info``: the group, the target ...), each
  ``key=value`` with a scalar value;
* value facets from the parsed result (``outcome=correct``, ``score=3``, ``choice=Paris``,
  or ``parsed=B`` when the parsed result is one scalar);
* ``id=token`` for each part of the item id split at ``/ ; :`` (a pairwise item
  ``q1;ref;m1`` has ``id=ref`` and ``id=m1``; a judge item ``cat/coherence`` has
  ``id=cat`` and ``id=coherence``).

A metric row's drill-down (:func:`metric_facets`) asks for the facets its identifying
parameters name: ``model=m1, opponent=ref`` wants ``id=m1`` and ``id=ref``; a judge's
``Coherence`` record of datum ``cat`` wants ``id=coherence`` and ``id=cat``; a group's rate
wants ``group=f`` when the items kept their group. A parameter no item carries (a language
the items did not keep, ``language=all``) asks for nothing, so the row leads to every item
of the run, and the page says how many.

The transcript of every item (all the prompt's messages, the raw answer, the parsed result,
per-option log-likelihoods as a small table, score, error, attempts, latency, tokens) is
one JSON block per run read by the page's script, which writes it with ``textContent``:
no text of an item is ever parsed as HTML.

Example:
    >>> from assay.store.records import ItemRecord
    >>> it = ItemRecord("q1;ref;m1", [{"role": "user", "content": "?"}], ok=True,
    ...                 raw_answer="Choice: A", parsed="A")
    >>> facets(it)
    ['status=ok', 'parsed=A', 'id=q1', 'id=ref', 'id=m1']
    >>> from assay.results import Metric
    >>> metric_facets(Metric("WinRate", 0.6, {"model": "m1", "opponent": "ref"}), {"id=m1",
    ...               "id=ref", "id=q1"})
    ['id=m1', 'id=ref']
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from assay.report.html import esc, script_json
from assay.results import Metric
from assay.store.records import ItemRecord

__all__ = [
    "MAX_ITEMS",
    "item_status",
    "facets",
    "metric_facets",
    "items_block",
    "transcript",
]

#: Items shown per run (the rest are counted; ``assay runs export --items`` has them all).
MAX_ITEMS = 5000
_CELL = 160  # characters of a prompt or answer in the table (the transcript has all)
_VALUE_KEYS = ("outcome", "score", "verdict", "choice", "predicted", "valid", "label")
_MANY = 50  # a facet key with more distinct values than this is not offered in a menu
_ID_SPLIT = re.compile(r"[/;:]")
#: Run-wide parameters that never tell a metric's items apart.
_RUN_WIDE = ("answer_mode", "n", "table", "reducer", "counting", "measure", "use_stemmer")


def item_status(it: ItemRecord) -> str:
    """``error`` (the call failed), ``invalid`` (the answer could not be parsed) or ``ok``."""
    if not it.ok:
        return "error"
    p = it.parsed
    if isinstance(p, dict) and (
        "invalid" in p or p.get("outcome") == "invalid" or p.get("valid") is False
    ):
        return "invalid"
    return "ok"


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and len(str(v)) <= 80


def _fmt(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _slices(it: ItemRecord) -> list[str]:
    info = it.info or {}
    return [f"{k}={_fmt(v)}" for k, v in info.items() if _scalar(v) and k != "row"]


def _values(it: ItemRecord) -> list[str]:
    p = it.parsed
    if isinstance(p, dict):
        return [f"{k}={_fmt(p[k])}" for k in _VALUE_KEYS if k in p and _scalar(p[k])]
    if _scalar(p):
        return [f"parsed={_fmt(p)}"]
    return []


def _ids(it: ItemRecord) -> list[str]:
    parts = [t.strip() for t in _ID_SPLIT.split(it.item_id) if t.strip()]
    return [f"id={t}" for t in dict.fromkeys(parts)]


def facets(it: ItemRecord) -> list[str]:
    """The ``key=value`` strings an item is filtered by (module docstring)."""
    return [f"status={item_status(it)}", *_slices(it), *_values(it), *_ids(it)]


def metric_facets(m: Metric, known: set[str]) -> list[str]:
    """The facets a metric row asks of its items: those of its identifying parameters (and
    its type, lowercased, as an id part) that some item has (``known``)."""
    want = []
    for k, v in m.parameters.items():
        if k in _RUN_WIDE or not _scalar(v):
            continue
        for f in (f"{k}={_fmt(v)}", f"id={_fmt(v)}"):
            if f in known:
                want.append(f)
                break
    t = f"id={m.type.lower()}"
    if t in known:
        want.append(t)
    return list(dict.fromkeys(want))


def _messages(prompt: Any) -> list[dict[str, str]]:
    if isinstance(prompt, list):
        out = []
        for msg in prompt:
            if isinstance(msg, dict):
                out.append({"role": str(msg.get("role", "")), "content": _text(msg.get("content"))})
            else:
                out.append({"role": "", "content": _text(msg)})
        return out
    return [] if prompt is None else [{"role": "user", "content": _text(prompt)}]


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False)


def _options(it: ItemRecord) -> list[dict[str, Any]] | None:
    """Per-option log-likelihoods of a loglik item (its raw answer is their JSON)."""
    if not it.raw_answer or not it.raw_answer.startswith('{"options"'):
        return None
    try:
        opts = json.loads(it.raw_answer)["options"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(opts, list):
        return None
    conts = (it.params.get("loglik") or {}).get("continuations") or []
    best = max(
        range(len(opts)),
        key=lambda i: opts[i].get("logprob", float("-inf")) if isinstance(opts[i], dict) else 0,
        default=None,
    )
    rows = []
    for i, o in enumerate(opts):
        if not isinstance(o, dict):
            return None
        rows.append(
            {
                "option": conts[i] if i < len(conts) else f"option {i + 1}",
                "logprob": o.get("logprob"),
                "tokens": o.get("n_tokens"),
                "greedy": o.get("greedy"),
                "bound": o.get("bound", False),
                "highest": i == best,
            }
        )
    return rows


def _short_answer(it: ItemRecord, options: list[dict[str, Any]] | None) -> str:
    if options is not None:
        top = next((o for o in options if o["highest"]), None)
        best = top["option"] if top else "-"
        return f"log-likelihoods of {len(options)} options; highest: {best}"
    return it.raw_answer or ""


def transcript(it: ItemRecord) -> dict[str, Any]:
    """What the page shows of one item when it is opened."""
    options = _options(it)
    params = {k: v for k, v in it.params.items() if k != "loglik"}
    parsed = it.parsed
    return {
        "id": it.item_id,
        "status": item_status(it),
        "messages": _messages(it.prompt),
        "answer": None if options is not None else it.raw_answer,
        "options": options,
        "parsed": parsed if isinstance(parsed, dict) else {} if parsed is None else {"": parsed},
        "facts": {
            "error": " ".join(x for x in (it.error_kind, it.error) if x) or None,
            "http status": it.status,
            "attempts": it.attempts,
            "retries": max(0, it.attempts - 1),
            "latency s": None if it.latency is None else round(it.latency, 4),
            "prompt tokens": it.prompt_tokens,
            "completion tokens": it.completion_tokens,
            "from the cache": it.cached,
            "parameters": json.dumps(params, ensure_ascii=False) if params else None,
            "facts kept": json.dumps(dict(it.info), ensure_ascii=False) if it.info else None,
        },
    }


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CELL else text[:_CELL] + " …"


def _menu(cls: str, label: str, values: Sequence[str], *, keyed: bool = True) -> str:
    """A menu of facets (its options' values are the facets, their labels ``key = value``,
    or the value alone when ``keyed`` is false)."""
    opts = "".join(
        f'<option value="{esc(v)}">'
        f"{esc(v.replace('=', ' = ', 1) if keyed else v.split('=', 1)[1])}</option>"
        for v in values
    )
    return (
        f'<label>{label} <select class="facet {cls}">'
        f'<option value="">all</option>{opts}</select></label>'
    )


def _offered(rows: list[list[str]], pick: Any) -> list[str]:
    """The facets of one family worth a menu (keys with at most :data:`_MANY` values)."""
    by: dict[str, set[str]] = {}
    for fs in rows:
        for f in pick(fs):
            by.setdefault(f.split("=", 1)[0], set()).add(f)
    return sorted(f for vs in by.values() if len(vs) <= _MANY for f in vs)


def items_block(box_id: str, items: Sequence[ItemRecord]) -> tuple[str, set[str]]:
    """The item table (searchable; menus for status, slice and value; a row opens its
    transcript) and the set of facets its items carry (for :func:`metric_facets`)."""
    shown = list(items[:MAX_ITEMS])
    all_facets = [facets(it) for it in shown]
    body = []
    for i, (it, fs) in enumerate(zip(shown, all_facets)):
        st = item_status(it)
        msgs = _messages(it.prompt)
        prompt = msgs[-1]["content"] if msgs else ""
        options = _options(it)
        vals = _values(it)
        value = vals[0].split("=", 1)[1] if len(vals) == 1 else ", ".join(vals)
        cells = (
            f'<td><a href="#{esc(box_id)}-t" class="open">{esc(it.item_id)}</a></td>'
            f"<td>{st}</td><td>{esc(', '.join(_slices(it)))}</td><td>{esc(value)}</td>"
            f'<td class="prompt">{esc(_short(prompt))}</td>'
            f'<td class="answer">{esc(_short(_short_answer(it, options)))}</td>'
            f'<td class="num">{esc("" if it.latency is None else f"{it.latency:.3f}")}</td>'
            f'<td class="num">{(it.prompt_tokens or 0) + (it.completion_tokens or 0):,}</td>'
        )
        body.append(
            f'<tr class="{st}" data-status="{st}" data-i="{i}" '
            f'data-facets="{esc(chr(10).join(fs))}">{cells}</tr>'
        )
    cols = ("item", "status", "slice", "value", "prompt (last message)", "answer", "latency s",
            "tokens")  # fmt: skip
    head = "".join(f"<th>{c}</th>" for c in cols)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    slices = _offered(all_facets, _slice_like)
    values = _offered(all_facets, _value_like)
    statuses = ["status=ok", "status=invalid", "status=error"]
    menus = _menu("status", "status", statuses, keyed=False)
    if slices:
        menus += _menu("slice", "slice", slices)
    if values:
        menus += _menu("value", "value", values)
    data = [transcript(it) for it in shown]
    more = ""
    if len(items) > MAX_ITEMS:
        more = f'<p class="note">first {MAX_ITEMS:,} of {len(items):,} items shown</p>'
    html = (
        f'<div class="filterable items" id="{esc(box_id)}"><div class="filters">'
        '<input class="search" type="search" placeholder="search items">'
        f'{menus}<span class="want" hidden></span><span class="count"></span></div>'
        f'<div class="scroll">{table}</div>'
        f'<div class="transcript" id="{esc(box_id)}-t" hidden></div>'
        f'<script type="application/json" class="item-data">{script_json(data)}</script>'
        f"</div>{more}"
    )
    return html, {f for fs in all_facets for f in fs}


def _slice_like(fs: list[str]) -> list[str]:
    keys = (*_VALUE_KEYS, "parsed", "id", "status")
    return [f for f in fs if f.split("=", 1)[0] not in keys]


def _value_like(fs: list[str]) -> list[str]:
    return [f for f in fs if f.split("=", 1)[0] in (*_VALUE_KEYS, "parsed")]
