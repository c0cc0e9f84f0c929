"""HTML pieces of the report: escaping, tables, the item table, the page shell.

Everything user-supplied (labels, prompts, answers, model names) is escaped; JSON placed in
a ``<script>`` has ``<`` written as ``\\u003c`` so no text can close the script (and the
figures' texts are escaped for plotly, :func:`assay.report.figures.plot_text`). The page
has no external reference: styles and scripts are inline, and the only script besides the
figures is :data:`PAGE_JS` below (the filters, the drill-down from a metric row to its items
and an item's transcript, written with ``textContent``: data is never parsed as HTML). Its
Content Security Policy (:func:`csp`) forbids every
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

__all__ = [
    "esc",
    "table",
    "filterable",
    "page",
    "script_json",
    "cell_text",
    "csp",
    "Raw",
    "PAGE_JS",
]

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;
background:#fafafa}
header{background:#1f3b57;color:#fff;padding:14px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;opacity:.8;font-size:13px}
main{padding:8px 28px 40px;max-width:1400px}
nav a{margin-right:14px;font-size:14px}
section.kind,section.overview{background:#fff;border:1px solid #ddd;border-radius:6px;margin:18px 0;
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
figure.fig{margin:0;border:1px solid #eee;border-radius:4px;background:#fff;min-width:0}
figure.fig.full{grid-column:1/-1}figure.fig .plot{border:0}
figcaption,p.caption{font-size:12.5px;color:#333;line-height:1.45;padding:4px 10px 8px;margin:0}
figcaption b,p.caption b{color:#1f3b57}.docs{color:#666;font-style:italic}
p.intro{font-size:13.5px;color:#333;max-width:1000px}
td.up{background:#e9f7ec}td.down{background:#fdecec}td.sig{font-weight:700}
tr.differs td:first-child{border-left:3px solid #d9822b}
.runs td.params{max-width:520px;font-size:12px;white-space:normal}
button.drill{font-size:11.5px;padding:1px 6px;cursor:pointer}
.want{background:#fff3cd;border:1px solid #e6c200;border-radius:10px;padding:1px 8px}
.want button{margin-left:6px;font-size:11px}
.notices{margin:4px 0 8px;padding-left:22px}
.items tbody tr{cursor:pointer}.items tr.opened td{outline:2px solid #1f77b4}
.transcript{border:1px solid #bcd;border-radius:4px;margin:8px 0;padding:6px 12px;
background:#f7fbff}.transcript h4{margin:6px 0}.transcript h5{margin:10px 0 4px;font-size:13px}
.transcript pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #e3e3e3;
padding:6px 8px;margin:2px 0 6px;font-size:12.5px;max-height:360px;overflow:auto}
.msg .role{font-size:11.5px;font-weight:700;text-transform:uppercase;color:#555}
"""

PAGE_JS = """
function assayFilter(box){
  var q=box.querySelector('input.search').value.toLowerCase();
  var want=[];
  box.querySelectorAll('select.facet').forEach(function(s){if(s.value)want.push(s.value);});
  if(box.dataset.want)want=want.concat(box.dataset.want.split('\\n'));
  var shown=0;var rows=box.querySelectorAll('tbody tr');
  rows.forEach(function(r){
    var f=r.dataset.facets===undefined?null:'\\n'+r.dataset.facets+'\\n';
    var ok=!q||r.textContent.toLowerCase().indexOf(q)>=0;
    for(var i=0;ok&&i<want.length;i++){ok=f!==null&&f.indexOf('\\n'+want[i]+'\\n')>=0;}
    r.style.display=ok?'':'none';if(ok)shown++;});
  box.querySelector('.count').textContent=shown+' of '+rows.length+' rows';
}
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
function kvTable(obj){var t=el('table');var b=el('tbody');t.appendChild(b);var n=0;
  Object.keys(obj).forEach(function(k){var v=obj[k];if(v===null||v===undefined||v==='')return;
    var r=el('tr');r.appendChild(el('th',null,k||'parsed'));
    r.appendChild(el('td',null,typeof v==='object'?JSON.stringify(v):v));b.appendChild(r);n++;});
  return n?t:null;}
function showItem(box,row){
  if(!box._data)box._data=JSON.parse(box.querySelector('script.item-data').textContent);
  var d=box._data[+row.dataset.i];var t=box.querySelector('.transcript');t.textContent='';
  box.querySelectorAll('tr.opened').forEach(function(r){r.classList.remove('opened');});
  row.classList.add('opened');
  var h=el('h4',null,'item '+d.id+' \u00b7 '+d.status+' ');var x=el('button','close','close');
  x.addEventListener('click',function(){t.hidden=true;row.classList.remove('opened');});
  h.appendChild(x);t.appendChild(h);
  var nm=d.messages.length;
  t.appendChild(el('h5',null,'prompt ('+nm+' message'+(nm===1?'':'s')+')'));
  d.messages.forEach(function(m){var w=el('div','msg');w.appendChild(el('span','role',m.role));
    w.appendChild(el('pre',null,m.content));t.appendChild(w);});
  if(d.options){t.appendChild(el('h5',null,'log-likelihood of each option'));
    var ot=el('table','options');var hd=el('tr');
    ['option','log-likelihood','tokens','greedy','highest'].forEach(function(c){
      hd.appendChild(el('th',null,c));});
    var th=el('thead');th.appendChild(hd);ot.appendChild(th);var ob=el('tbody');ot.appendChild(ob);
    d.options.forEach(function(o){var r=el('tr');r.appendChild(el('td',null,o.option));
      var lp=o.logprob===null?'':(+o.logprob).toFixed(4)+(o.bound?' (upper bound)':'');
      r.appendChild(el('td','num',lp));
      r.appendChild(el('td','num',o.tokens));r.appendChild(el('td',null,o.greedy));
      r.appendChild(el('td',null,o.highest?'yes':''));ob.appendChild(r);});
    t.appendChild(ot);}
  else{t.appendChild(el('h5',null,'raw answer'));
    t.appendChild(el('pre',null,d.answer===null?'(no answer)':d.answer));}
  var p=kvTable(d.parsed);t.appendChild(el('h5',null,'parsed result'+(p?'':': none')));
  if(p)t.appendChild(p);
  t.appendChild(el('h5',null,'the call'));var f=kvTable(d.facts);if(f)t.appendChild(f);
  t.hidden=false;t.scrollIntoView({block:'nearest'});
}
function drill(btn){
  var box=document.getElementById(btn.dataset.box);if(!box)return;
  box.querySelectorAll('select.facet').forEach(function(s){s.value='';});
  box.querySelector('input.search').value='';
  box.dataset.want=btn.dataset.want||'';
  var chip=box.querySelector('.want');chip.textContent='';
  if(box.dataset.want){chip.appendChild(el('span',null,'items of '+btn.dataset.label+': '+
    box.dataset.want.split('\\n').join(', ')));var c=el('button',null,'show all');
    c.addEventListener('click',function(){box.dataset.want='';chip.hidden=true;assayFilter(box);});
    chip.appendChild(c);chip.hidden=false;}else{chip.hidden=true;}
  assayFilter(box);box.scrollIntoView({block:'start'});
}
document.addEventListener('DOMContentLoaded',function(){
  document.querySelectorAll('.filterable').forEach(function(box){
    var run=function(){assayFilter(box);};
    box.querySelector('input.search').addEventListener('input',run);
    box.querySelectorAll('select.facet').forEach(function(s){s.addEventListener('change',run);});
    if(box.classList.contains('items'))box.querySelector('tbody').addEventListener('click',function(e){
      var r=e.target.closest('tr');if(!r)return;e.preventDefault();showItem(box,r);});
    run();});
  document.querySelectorAll('button.drill').forEach(function(b){
    b.addEventListener('click',function(){drill(b);});});
});
"""


class Raw(str):
    """A table cell assay writes as HTML itself (a drill-down button): never user text."""


def esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def cell_text(v: Any) -> str:
    """A value as table text: 4 significant decimals for floats, JSON for containers."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)  # a count, never "19.958k"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.4f}" if abs(v) >= 1e-3 or v == 0 else f"{v:.3g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    table_id: str = "",
    classes: Sequence[Sequence[str]] | None = None,
    row_classes: Sequence[str] | None = None,
    cls: str = "",
) -> str:
    """An HTML table (numbers right-aligned; ``classes`` per cell and ``row_classes`` per row
    mark what the page highlights). A cell that is :class:`Raw` is assay's own markup."""
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for i, r in enumerate(rows):
        tds = []
        for j, v in enumerate(r):
            extra = classes[i][j] if classes is not None else ""
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            c = " ".join(x for x in ("num" if num else "", extra) if x)
            attr = f' class="{c}"' if c else ""
            text = str(v) if isinstance(v, Raw) else esc(cell_text(v))
            tds.append(f"<td{attr}>{text}</td>")
        rc = f' class="{row_classes[i]}"' if row_classes is not None and row_classes[i] else ""
        body.append(f"<tr{rc}>{''.join(tds)}</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    ident += f' class="{esc(cls)}"' if cls else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def filterable(box_id: str, inner: str, *, statuses: Sequence[str] = ()) -> str:
    """A search box (and a status menu) filtering the rows of the table in ``inner``."""
    menu = ""
    if statuses:
        opts = "".join(f'<option value="status={esc(s)}">{esc(s)}</option>' for s in statuses)
        menu = (
            '<label>status <select class="facet status">'
            f'<option value="">all</option>{opts}</select></label>'
        )
    return (
        f'<div class="filterable" id="{esc(box_id)}"><div class="filters">'
        '<input class="search" type="search" placeholder="search rows">'
        f'{menu}<span class="count"></span></div>'
        f'<div class="scroll">{inner}</div></div>'
    )


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
    policy = esc(csp(plotly_js, PAGE_JS, render))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>{esc(title)}</title><style>{CSS}</style>"
        f"<script>{plotly_js}</script><script>{PAGE_JS}</script></head><body>"
        f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>"
        f"<main><nav>{nav}</nav>{body}</main><script>{render}</script></body></html>\n"
    )
