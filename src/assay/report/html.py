"""HTML pieces of the report: escaping, tables, the item table, the page shell.

Everything user-supplied (labels, prompts, answers, model names) is escaped; JSON placed in
a ``<script>`` has ``<`` written as ``\\u003c`` so no text can close the script (and the
figures' texts are escaped for plotly, :func:`assay.report.figures.plot_text`). The page
has no external reference: styles and scripts are inline, and the only script besides the
figures is the table filter below. Its Content Security Policy (:func:`csp`) forbids every
network request: ``default-src 'none'``, the three inline scripts by their SHA-256 (no
inline event handler), inline styles, and ``data:`` images (plotly draws heat maps as one).

Example:
    >>> "<b>" in table(["a"], [["<b>x</b>"]])
    False
    >>> script_json({"t": "</script>"})
    '{"t":"\\\\u003c/script>"}'
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Sequence
from typing import Any

from assay.store.records import ItemRecord

__all__ = ["esc", "table", "items_table", "page", "script_json", "cell_text", "csp", "MAX_ITEMS"]

#: Items shown per run (the rest are counted; ``assay runs export --items`` has them all).
MAX_ITEMS = 5000
_TEXT = 600  # characters of a prompt or answer shown in a cell (the rest on hover)

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;
background:#fafafa}
header{background:#1f3b57;color:#fff;padding:14px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;opacity:.8;font-size:13px}
main{padding:8px 28px 40px;max-width:1400px}
nav a{margin-right:14px;font-size:14px}
section.kind{background:#fff;border:1px solid #ddd;border-radius:6px;margin:18px 0;
padding:6px 18px 16px}
h2{font-size:19px;border-bottom:1px solid #eee;padding-bottom:6px}h3{font-size:15px}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:12px}
.plot{border:1px solid #eee;border-radius:4px;min-height:300px}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0 12px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f1f3f5}.scroll th{position:sticky;top:0}td.num{text-align:right;font-variant-numeric:
tabular-nums}
.scroll{max-height:520px;overflow:auto;border:1px solid #eee}
.filters{margin:6px 0;display:flex;gap:10px;align-items:center;font-size:13px}
.filters input{width:320px;padding:4px}
td.prompt,td.answer{max-width:420px;white-space:pre-wrap;word-break:break-word}
tr.error td{background:#fff0f0}tr.invalid td{background:#fff8e6}
.note{color:#666;font-size:12.5px}.wide{overflow-x:auto;max-width:100%}
"""

FILTER_JS = """
function assayFilter(id){
  var box=document.getElementById(id);
  var q=box.querySelector('input.search').value.toLowerCase();
  var sel=box.querySelector('select.status');var want=sel?sel.value:'';
  var shown=0;var rows=box.querySelectorAll('tbody tr');
  rows.forEach(function(r){
    var ok=(!q||r.textContent.toLowerCase().indexOf(q)>=0)&&(!want||r.dataset.status===want);
    r.style.display=ok?'':'none';if(ok)shown++;});
  box.querySelector('.count').textContent=shown+' of '+rows.length+' rows';
}
document.addEventListener('DOMContentLoaded',function(){
  document.querySelectorAll('.filterable').forEach(function(box){
    var run=function(){assayFilter(box.id);};
    box.querySelector('input.search').addEventListener('input',run);
    var sel=box.querySelector('select.status');if(sel)sel.addEventListener('change',run);
    run();});
});
"""


def esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def cell_text(v: Any) -> str:
    """A value as table text: 4 significant decimals for floats, JSON for containers."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.4f}" if abs(v) >= 1e-3 or v == 0 else f"{v:.3g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, table_id: str = "") -> str:
    """An HTML table (numbers right-aligned)."""
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for r in rows:
        tds = "".join(
            f'<td class="num">{esc(cell_text(v))}</td>'
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            else f"<td>{esc(cell_text(v))}</td>"
            for v in r
        )
        body.append(f"<tr>{tds}</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def filterable(box_id: str, inner: str, *, statuses: Sequence[str] = ()) -> str:
    """A search box (and a status menu) filtering the rows of the table in ``inner``."""
    menu = ""
    if statuses:
        opts = "".join(f'<option value="{esc(s)}">{esc(s)}</option>' for s in statuses)
        menu = (
            '<label>status <select class="status">'
            f'<option value="">all</option>{opts}</select></label>'
        )
    return (
        f'<div class="filterable" id="{esc(box_id)}"><div class="filters">'
        '<input class="search" type="search" placeholder="search rows">'
        f'{menu}<span class="count"></span></div>'
        f'<div class="scroll">{inner}</div></div>'
    )


def _message_text(prompt: Any) -> str:
    if isinstance(prompt, list) and prompt:
        last = prompt[-1]
        return str(last.get("content", "")) if isinstance(last, dict) else str(last)
    return "" if prompt is None else str(prompt)


def _short(text: str) -> str:
    return text if len(text) <= _TEXT else text[:_TEXT] + " …"


def item_status(it: ItemRecord) -> str:
    """``error`` (the call failed), ``invalid`` (the answer could not be parsed) or ``ok``."""
    if not it.ok:
        return "error"
    p = it.parsed
    if isinstance(p, dict) and ("invalid" in p or p.get("outcome") == "invalid"):
        return "invalid"
    return "ok"


def items_table(box_id: str, items: Sequence[ItemRecord]) -> str:
    """The per-item table of a run, searchable and filterable by status (as Inspect's viewer)."""
    cols = ("item", "status", "prompt", "answer", "parsed", "error", "latency s", "tokens")
    rows = []
    for it in items[:MAX_ITEMS]:
        st = item_status(it)
        prompt = _message_text(it.prompt)
        answer = it.raw_answer or ""
        tokens = (it.prompt_tokens or 0) + (it.completion_tokens or 0)
        error = " ".join(x for x in (it.error_kind, it.error) if x)
        cells = (
            f"<td>{esc(it.item_id)}</td><td>{st}</td>"
            f'<td class="prompt" title="{esc(prompt[:4000])}">{esc(_short(prompt))}</td>'
            f'<td class="answer">{esc(_short(answer))}</td>'
            f"<td>{esc(cell_text(it.parsed))}</td><td>{esc(error)}</td>"
            f'<td class="num">{esc(cell_text(it.latency))}</td><td class="num">{tokens}</td>'
        )
        rows.append(f'<tr class="{st}" data-status="{st}">{cells}</tr>')
    head = "".join(f"<th>{c}</th>" for c in cols)
    inner = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    more = ""
    if len(items) > MAX_ITEMS:
        more = f'<p class="note">first {MAX_ITEMS} of {len(items)} items shown</p>'
    return filterable(box_id, inner, statuses=("ok", "invalid", "error")) + more


def script_json(obj: Any) -> str:
    """JSON safe inside ``<script>`` (NaN/inf become null)."""
    text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if hasattr(obj, "item"):  # numpy scalars
        return _finite(obj.item())
    return obj


def csp(*scripts: str) -> str:
    """The page's Content Security Policy: nothing from the network, these inline scripts
    (by hash), inline styles, ``data:`` images.

    Example:
        >>> csp("var a=1;").split("; ")[:2]
        ["default-src 'none'", "script-src 'sha256-gaaMFNHZyRta8zB2VHkWLMP4tMxJ+d8v3dTW7nw2r6M='"]
    """
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() + "'"
        for s in scripts
    )
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {hashes}",
            "style-src 'unsafe-inline'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )


def page(title: str, subtitle: str, nav: str, body: str, plotly_js: str, figures: str) -> str:
    """The whole document: plotly.js once, the figures' JSON once, the sections."""
    render = (
        "var FIGS=" + figures + ";"
        "Object.keys(FIGS).forEach(function(id){var f=FIGS[id];"
        "Plotly.newPlot(id,f.data,f.layout,{displaylogo:false,responsive:true});});"
    )
    policy = esc(csp(plotly_js, FILTER_JS, render))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>{esc(title)}</title><style>{CSS}</style>"
        f"<script>{plotly_js}</script><script>{FILTER_JS}</script></head><body>"
        f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>"
        f"<main><nav>{nav}</nav>{body}</main><script>{render}</script></body></html>\n"
    )
