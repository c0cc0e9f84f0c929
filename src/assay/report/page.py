"""One self-contained HTML report of stored runs: :func:`build_report`, :func:`write_report`.

Runs are grouped by kind (in the order given). Each kind's section has: the runs (id,
dataset, model, when, status), the plots its users expect (one module per kind of plot,
:data:`PLOTS`), tables where the domain reads tables (scoring: RSMTool's), the scalar
metrics side by side (one value column per run; with several runs, the differences and
interval overlap of :func:`assay.store.compare`), and for LLM runs the per-item table with
a search box and a status filter. plotly.js is inlined once; the page makes no network
request. Everything comes from the store's records and items.

Example:
    >>> import os, tempfile
    >>> from assay.results import Metric
    >>> from assay.store import Store
    >>> st = Store(os.path.join(tempfile.mkdtemp(), "r.db"))
    >>> eid = st.save([Metric("IOU", 0.5, {"label_key": "class", "label_value": "road"})],
    ...               kind="segmentation")
    >>> text = build_report([st.get(eid)])
    >>> "IoU per class" in text, text.count("<script src"), text.count("<link")
    (True, 0, 0)
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.report.figures import Figure, plot_text, run_label, scalar
from assay.report.html import esc, filterable, items_table, page, script_json, table
from assay.store.comparison import compare, identity
from assay.store.records import Evaluation

__all__ = ["build_report", "write_report", "PLOTS", "report_figures"]

#: kind -> the module whose ``figures(runs)`` (and optional ``tables(runs)``) draw it.
PLOTS: dict[str, str] = {
    "classification": "assay.report.classification",
    "fairness": "assay.report.fairness",
    "detection": "assay.report.detection",
    "segmentation": "assay.report.segmentation",
    "scoring": "assay.report.scoring",
    "stats": "assay.report.stats",
    "text": "assay.report.text",
    "pairwise": "assay.report.pairwise",
    "llm_cat": "assay.report.suites",
    "llm_fairness": "assay.report.suites",
    "llm_language": "assay.report.suites",
    "llm_fairness_average": "assay.report.suites",
}


def _plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise InvalidInputError(
            "the HTML report needs plotly: pip install 'assay[report]'", source="report"
        ) from None
    return str(get_plotlyjs())


def report_figures(kind: str, runs: list[Evaluation]) -> tuple[list[Figure], list[Any]]:
    """The figures and tables of one kind's runs (none for a kind without plots)."""
    name = PLOTS.get(kind)
    if name is None:
        return [], []
    mod = importlib.import_module(name)
    figs = [f for f in mod.figures(runs) if _has_data(f)]
    tables = mod.tables(runs) if hasattr(mod, "tables") else []
    return figs, tables


def _has_data(fig: Figure) -> bool:
    for t in fig["data"]:
        for k in ("y", "z", "x"):
            v = t.get(k)
            if v and any(x is not None for x in (v if k != "z" else sum(v, []))):
                return True
    return False


def _runs_table(runs: list[Evaluation]) -> str:
    rows = [
        [
            e.id,
            e.dataset,
            e.model,
            e.created.strftime("%Y-%m-%d %H:%M:%S"),
            e.status,
            len(e.metrics or []),
            len(e.items or []),
        ]
        for e in runs
    ]
    cols = ["run", "dataset", "model", "created (UTC)", "status", "records", "items"]
    return table(cols, rows)


def _metrics_table(box: str, runs: list[Evaluation]) -> str:
    """Scalar records side by side (with differences and overlap for several runs)."""
    if len(runs) > 1:
        df = compare(runs)
        cols = [c for c in df.columns]
        rows = df.astype(object).where(df.notna(), None).values.tolist()
    else:
        cols = ["type", "parameters", "value", "interval"]
        rows = []
        for m in runs[0].metrics or []:
            if isinstance(m.value, (dict, list, str)):
                continue  # counts and curves: in the plots and in 'assay runs show'
            lo, hi = scalar(m.parameters.get("ci_low")), scalar(m.parameters.get("ci_high"))
            interval = None if lo is None or hi is None else f"[{lo:.4g}, {hi:.4g}]"
            value = (
                m.value
                if m.value is not None
                else f"undefined: {m.parameters.get('undefined', '')}"
            )
            rows.append([*identity(m), value, interval])
    n = len(rows)
    body = filterable(box, table(cols, rows))
    head = f"<summary>all scalar metrics ({n})</summary>"
    return f"<details{' open' if n <= 40 else ''}>{head}{body}</details>"


def _section(idx: int, kind: str, runs: list[Evaluation], figs_out: dict[str, Figure]) -> str:
    figs, tables = report_figures(kind, runs)
    parts = [f'<section class="kind" id="kind-{idx}" data-kind="{esc(kind)}">']
    parts.append(f"<h2>{esc(kind)} · {len(runs)} run{'s' if len(runs) > 1 else ''}</h2>")
    parts.append(_runs_table(runs))
    if figs:
        divs = []
        for j, f in enumerate(figs):
            fid = f"fig-{idx}-{j}"
            figs_out[fid] = f
            divs.append(f'<div class="plot" id="{fid}" data-kind="{esc(kind)}"></div>')
        parts.append(f'<div class="plots">{"".join(divs)}</div>')
    elif kind not in PLOTS:
        parts.append('<p class="note">no plots for this kind: its metrics are in the table</p>')
    for t in tables:
        parts.append(f"<h3>{esc(t['title'])}</h3>")
        parts.append(f'<div class="wide">{table(t["columns"], t["rows"])}</div>')
    parts.append(_metrics_table(f"metrics-{idx}", runs))
    for ev in runs:
        if ev.items:
            parts.append(f"<h3>items of {esc(run_label(ev))} ({len(ev.items)})</h3>")
            parts.append(items_table(f"items-{idx}-{ev.id}", ev.items))
    parts.append("</section>")
    return "".join(parts)


def build_report(runs: Sequence[Evaluation], *, title: str = "assay report") -> str:
    """The report as one HTML document (runs with their metrics and, if loaded, items)."""
    if not runs:
        raise InvalidInputError("no runs to report", source="report")
    for ev in runs:
        if ev.metrics is None:
            raise InvalidInputError("run loaded without metrics", source="report", record=ev.id)
    groups: dict[str, list[Evaluation]] = {}
    for ev in runs:
        groups.setdefault(ev.kind, []).append(ev)
    figs: dict[str, Figure] = {}
    sections, nav = [], []
    for idx, (kind, evs) in enumerate(groups.items()):
        sections.append(_section(idx, kind, evs, figs))
        nav.append(f'<a href="#kind-{idx}">{esc(kind)}</a>')
    subtitle = f"{len(runs)} run(s): " + ", ".join(run_label(e) for e in runs)
    subtitle += time.strftime(" · built %Y-%m-%d %H:%M UTC", time.gmtime())
    return page(
        title, subtitle, "".join(nav), "".join(sections), _plotly_js(), script_json(plot_text(figs))
    )


def write_report(
    runs: Sequence[Evaluation], path: str | Path, *, title: str = "assay report"
) -> Path:
    """Build the report and write it to ``path`` atomically; returns the path."""
    from assay.io.files import write_atomic

    text = build_report(runs, title=title)
    out = Path(path)
    write_atomic(out, text)
    return out
