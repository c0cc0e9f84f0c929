"""One self-contained HTML report of stored runs: :func:`build_report`, :func:`write_report`.

The page opens on the runs (name, kind, dataset, the model as typed, when, how long), then
takes them kind by kind (in the order given). Each kind's section has: an introduction
(:mod:`assay.report.prose`), its runs and their parameters apart from the metrics (a
parameters diff for several runs), the plots its users expect (one module per kind,
:data:`PLOTS`), each with its caption, tables where the domain reads tables (scoring:
RSMTool's), the scalar metrics side by side (one value column per run; with several runs
the differences of :func:`assay.store.compare`, highlighted), with the store the runs
come from the paired comparison of runs that kept their units (:mod:`assay.report.paired`:
tables and a forest plot), and for LLM runs the items (:mod:`assay.report.items`): a
drill-down from each metric row to its items and from each item to its transcript.
plotly.js is inlined once; the page makes no network request. Everything comes from the
store's records and items.

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
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.report.figures import (
    Figure,
    model_text,
    plot_text,
    run_label,
    run_name,
    run_tags,
    scalar,
)
from assay.report.html import Raw, cell_text, esc, filterable, page, script_json, table
from assay.report.items import MAX_ITEMS, facets, items_block, metric_facets
from assay.report.paired import paired_section
from assay.report.prose import caption_html, section
from assay.results import Metric
from assay.store.comparison import compare, identity
from assay.store.records import Evaluation

if TYPE_CHECKING:
    from assay.store.store import Store

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


def _took(ev: Evaluation) -> str | None:
    """How long the run took, from its start to its end (``None`` while unfinished)."""
    if ev.finished is None:
        return None
    secs = max(0.0, (ev.finished - ev.created).total_seconds())
    if secs < 60:
        return f"{secs:.1f} s"
    mins, secs = divmod(int(round(secs)), 60)
    return f"{mins} min {secs} s" if mins < 60 else f"{mins // 60} h {mins % 60} min"


def _params_text(params: dict[str, Any]) -> str:
    return "; ".join(f"{k}={cell_text(v)}" for k, v in params.items()) or "–"


def _runs_table(runs: list[Evaluation], *, kind: bool = False) -> str:
    """Who is who: each run's name, dataset, model as typed, when and how long."""
    rows, classes = [], []
    for e in runs:
        served = e.served_model if e.served_model and e.served_model != e.model else None
        tags = run_tags(e)
        rows.append(
            [
                run_name(e) + (f" [{tags}]" if tags else ""),
                *([e.kind] if kind else []),
                e.dataset,
                model_text(e.model),
                *([] if kind else [served]),
                e.created.strftime("%Y-%m-%d %H:%M:%S"),
                _took(e),
                e.status,
                len(e.metrics or []),
                len(e.items or []),
            ]
        )
        classes.append([""] * len(rows[-1]))
    cols = ["run", *(["kind"] if kind else []), "dataset", "model (as typed)"]
    cols += [] if kind else ["model (as it answered)"]
    cols += ["started (UTC)", "took", "status", "records", "items"]
    return f'<div class="wide">{table(cols, rows, cls="runs")}</div>'


def _params_block(runs: list[Evaluation]) -> str:
    """The run parameters, apart from the metrics: one run's as a list, several runs' as a
    diff (the keys whose values differ, highlighted; the shared ones in one line)."""
    keys = list(dict.fromkeys(k for e in runs for k in e.parameters))
    if len(runs) == 1:
        e = runs[0]
        if not keys:
            return '<p class="note">parameters: none stored</p>'
        return (
            '<p class="caption"><b>Parameters</b> (how the run was made; its results are in '
            "the tables below)</p>"
            + table(["parameter", "value"], [[k, cell_text(e.parameters[k])] for k in keys])
        )
    fields = {"dataset": [e.dataset for e in runs], "model": [model_text(e.model) for e in runs]}
    for k in keys:
        fields[k] = [cell_text(e.parameters[k]) if k in e.parameters else None for e in runs]
    differ = {k: vs for k, vs in fields.items() if len({json.dumps(v) for v in vs}) > 1}
    same = {k: vs[0] for k, vs in fields.items() if k not in differ}
    out = [
        '<p class="caption"><b>Parameters diff.</b> What was set differently between the runs '
        "(one column per run, the first is the baseline; a cell that differs from the "
        "baseline is highlighted). A difference in the results is only the model's when "
        "nothing else differs here.</p>"
    ]
    if differ:
        rows = [[k, *vs] for k, vs in differ.items()]
        marks = [["", ""] + ["down" * (v != vs[0]) for v in vs[1:]] for vs in differ.values()]
        out.append(table(["parameter", *(run_name(e) for e in runs)], rows, classes=marks))
    else:
        out.append('<p class="note">every parameter is the same in all runs</p>')
    if same:
        out.append(f'<p class="note">the same in all runs: {esc(_params_text(same))}</p>')
    return "".join(out)


def _drill(
    box: str, m: Metric, known: set[str], facet_rows: list[set[str]], label: str, typed: bool
) -> Raw | None:
    """The button that shows the items behind ``m``. When the run's item ids name the metric
    they were asked for (a judge's ``cat/coherence``), a record of another metric (ROUGE of
    the same datum) gets none: no call was made for it."""
    if typed and f"id={m.type.lower()}" not in known:
        return None
    want = metric_facets(m, known)
    n = sum(1 for fs in facet_rows if all(w in fs for w in want))
    text = f"{n:,} item{'s' if n != 1 else ''}" + ("" if want else " (all)")
    return Raw(
        f'<button class="drill" data-box="{esc(box)}" data-want="{esc(chr(10).join(want))}" '
        f'data-label="{esc(label)}">{esc(text)}</button>'
    )


def _metrics_table(
    box: str, runs: list[Evaluation], drills: dict[int, tuple[str, set[str], list[set[str]]]]
) -> str:
    """Scalar records side by side (with differences and overlap for several runs); a run
    with items gets a drill-down button per row (the items behind the record)."""
    if len(runs) > 1:
        return _compare_table(box, runs, drills)
    ev = runs[0]
    cols = ["type", "parameters", "value", "interval"]
    drill = drills.get(ev.id)
    if drill is not None:
        cols.append("items")
    rows = []
    for m in ev.metrics or []:
        if isinstance(m.value, (dict, list, str)):
            continue  # counts and curves: in the plots and in 'assay runs show'
        lo, hi = scalar(m.parameters.get("ci_low")), scalar(m.parameters.get("ci_high"))
        interval = None if lo is None or hi is None else f"[{lo:.4g}, {hi:.4g}]"
        value = (
            m.value if m.value is not None else f"undefined: {m.parameters.get('undefined', '')}"
        )
        row: list[Any] = [*identity(m), value, interval]
        if drill is not None:
            label = f"{m.type} {identity(m)[1]}"
            row.append(_drill(drill[0], m, drill[1], drill[2], label, _typed(ev, drill[1])))
        rows.append(row)
    return _metrics_details(box, len(rows), table(cols, rows), _METRICS_ONE)


def _typed(ev: Evaluation, known: set[str]) -> bool:
    """Whether the run's item ids name the metric each call was for (a judge's
    ``datum/metric``): some metric type of the run, lowercased, is a part of an item id."""
    return any(f"id={m.type.lower()}" in known for m in ev.metrics or [])


_METRICS_ONE = (
    "<b>All scalar metrics</b> of the run, one row per record: its type, the parameters "
    "that tell it apart, the value and its interval where one was computed. Type in the box "
    "to filter. For an LLM run, the last column opens the items behind a row."
)
_METRICS_MANY = (
    "<b>All scalar metrics side by side</b>, matched by type and parameters; the first run "
    "is the baseline and diff_R is run R minus it. Green: higher than the baseline, red: "
    "lower; <b>bold</b>: the two intervals do not overlap (a real difference); an orange "
    "edge marks a row where any run differs. Higher is not always better (error rates). "
    "Overlapping intervals do not prove the runs equal: the paired comparison does that "
    "(docs/compare.md)."
)


def _metrics_details(box: str, n: int, inner: str, caption: str) -> str:
    body = filterable(box, inner)
    head = f"<summary>all scalar metrics ({n:,})</summary>"
    return (
        f"<details{' open' if n <= 40 else ''}>{head}"
        f'<p class="caption">{caption}</p>{body}</details>'
    )


def _compare_table(
    box: str, runs: list[Evaluation], drills: dict[int, tuple[str, set[str], list[set[str]]]]
) -> str:
    df = compare(runs)
    cols = list(df.columns)
    rows = df.astype(object).where(df.notna(), None).values.tolist()
    classes, row_classes = [], []
    for r in rows:
        cells = [""] * len(cols)
        differs = False
        for j, c in enumerate(cols):
            if not c.startswith("diff_") or not isinstance(r[j], (int, float)):
                continue
            if abs(r[j]) > 1e-12:
                differs = True
                cells[j] = "up" if r[j] > 0 else "down"
                overlap = r[cols.index("overlap_" + c[5:])] if "overlap_" + c[5:] in cols else None
                if overlap is False:
                    cells[j] += " sig"
        classes.append(cells)
        row_classes.append("differs" if differs else "")
    by_run = {
        e.id: {identity(m): m for m in e.metrics or [] if not isinstance(m.value, (dict, list))}
        for e in runs
        if e.id in drills
    }
    for eid, found in by_run.items():
        box_id, known, facet_rows = drills[eid]
        typed = _typed(next(e for e in runs if e.id == eid), known)
        cols.append(f"items {next(run_name(e) for e in runs if e.id == eid)}")
        for r, cells in zip(rows, classes):
            m = found.get((str(r[0]), str(r[1])))
            label = f"{r[0]} {r[1]}"
            r.append(None if m is None else _drill(box_id, m, known, facet_rows, label, typed))
            cells.append("")
    inner = table(cols, rows, classes=classes, row_classes=row_classes)
    return _metrics_details(box, len(rows), inner, _METRICS_MANY)


def _section(
    idx: int, kind: str, runs: list[Evaluation], figs_out: dict[str, Figure], store: Store | None
) -> str:
    figs, tables = report_figures(kind, runs)
    intro = section(kind)
    parts = [f'<section class="kind" id="kind-{idx}" data-kind="{esc(kind)}">']
    parts.append(f"<h2>{esc(kind)} · {len(runs)} run{'s' if len(runs) > 1 else ''}</h2>")
    parts.append(
        f'<p class="intro">{esc(intro.text)} <span class="docs">More: {esc(intro.docs)}</span></p>'
    )
    parts.append(_runs_table(runs))
    parts.append(f'<div class="params">{_params_block(runs)}</div>')
    if figs:
        divs = []
        for j, f in enumerate(figs):
            fid = f"fig-{idx}-{j}"
            figs_out[fid] = {"data": f["data"], "layout": f["layout"]}
            cap = caption_html(f["caption"]) if "caption" in f else ""
            full = " full" if f.get("wide") else ""
            divs.append(
                f'<figure class="fig{full}"><div class="plot" id="{fid}" '
                f'data-kind="{esc(kind)}"></div>{cap}</figure>'
            )
        parts.append(f'<div class="plots">{"".join(divs)}</div>')
    elif kind not in PLOTS:
        parts.append('<p class="note">no plots for this kind: its metrics are in the table</p>')
    for t in tables:
        parts.append(f"<h3>{esc(t['title'])}</h3>")
        if t.get("caption"):
            parts.append(f'<p class="caption">{esc(t["caption"])}</p>')
        parts.append(f'<div class="wide">{table(t["columns"], t["rows"])}</div>')
    item_parts, drills = [], {}
    for ev in runs:
        if ev.items:
            box = f"items-{idx}-{ev.id}"
            html_items, known = items_block(box, ev.items)
            drills[ev.id] = (box, known, [set(facets(it)) for it in ev.items[:MAX_ITEMS]])
            item_parts.append(f"<h3>items of {esc(run_label(ev))} ({len(ev.items):,})</h3>")
            item_parts.append(f'<p class="caption">{esc(_ITEMS_CAPTION)}</p>')
            item_parts.append(html_items)
    parts.append(_metrics_table(f"metrics-{idx}", runs, drills))
    if len(runs) > 1:
        parts.append(paired_section(runs, store, figs_out, idx))
    parts.extend(item_parts)
    parts.append("</section>")
    return "".join(parts)


_ITEMS_CAPTION = (
    "Every call of the run, as the model saw and answered it. Click an item to open its "
    "transcript: all the prompt's messages, the raw answer (or each option's log-likelihood), "
    "the parsed result and score, the error and the attempts. The menus filter by status "
    "(ok; invalid: the reply could not be read; error: the call failed), by slice (the "
    "facts the item kept, such as its group) and by value (the parsed outcome or score). "
    "See docs/llm.md."
)


def build_report(
    runs: Sequence[Evaluation], *, title: str = "assay report", store: Store | None = None
) -> str:
    """The report as one HTML document (runs with their metrics and, if loaded, items);
    with the ``store`` the runs come from, runs that kept their units are also compared
    paired (:mod:`assay.report.paired`)."""
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
        sections.append(_section(idx, kind, evs, figs, store))
        nav.append(f'<a href="#kind-{idx}">{esc(kind)}</a>')
    overview = (
        '<section class="overview" id="runs"><h2>The runs</h2>'
        '<p class="intro">Each run once: its name (the one it was saved with, else its '
        "number in the store), what it evaluated, the model as it was typed, when it started "
        "and how long it took. The sections below take the runs kind by kind: a short "
        "introduction, the parameters, the figures (each with a caption under it), the "
        "tables, and for LLM runs every item with its transcript.</p>"
        f"{_runs_table(list(runs), kind=True)}</section>"
    )
    subtitle = f"{len(runs)} run{'s' if len(runs) != 1 else ''}: "
    subtitle += ", ".join(run_label(e) for e in runs)
    subtitle += time.strftime(" · built %Y-%m-%d %H:%M UTC", time.gmtime())
    return page(
        title,
        subtitle,
        "".join(nav),
        overview + "".join(sections),
        _plotly_js(),
        script_json(plot_text(figs)),
    )


def write_report(
    runs: Sequence[Evaluation],
    path: str | Path,
    *,
    title: str = "assay report",
    store: Store | None = None,
) -> Path:
    """Build the report (:func:`build_report`) and write it to ``path`` atomically; returns
    the path."""
    from assay.io.files import write_atomic

    text = build_report(runs, title=title, store=store)
    out = Path(path)
    write_atomic(out, text)
    return out
