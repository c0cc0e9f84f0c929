"""The paired comparison of runs in the report (issue 34 item 4): :func:`paired_section`.

When several runs of one kind carry units (the same datums, images or items, kept with the
run so their scores pair up), the section shows what ``assay compare`` computes
(:func:`assay.store.comparison.comparison`, docs/compare.md): per run compared with the
baseline (the section's first run), a table of every record both runs have (the two
values, the difference on the shared units with its interval, the test, the units
paired, the adjusted p-value; a difference whose interval leaves out 0 highlighted), a
forest plot of those differences (one row per record, one colour per run, a line at 0),
and the comparison's notices (a run without units, units in one run only). Runs without
units add nothing: the side-by-side table above already compares their values.

The paired bootstrap's cost grows with units times resamples; the report draws
:data:`REPORT_BOOTSTRAP` resamples (``assay compare`` draws 1000), and says so.

Example:
    >>> paired_section([], None, {}, 0)
    ''
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.report.figures import PALETTE, Figure, Markup, esc_plot, figure, run_name
from assay.report.html import cell_text, esc, filterable, table
from assay.report.prose import PAIRED_TABLE, caption_html
from assay.store.records import Evaluation

if TYPE_CHECKING:
    from assay.store.comparison import Comparison
    from assay.store.store import Store

__all__ = ["paired_section", "REPORT_BOOTSTRAP", "FOREST_ROWS", "record_label"]

#: Resamples of the paired bootstrap in a report (``assay compare``'s default is 1000):
#: a report of two 3-label runs of 50,000 datums builds in 0.76 CPU s, of 10^5 in 1.9 s
#: (``benchmarks/report_size.py [--paired 100000]``, docs/report.md).
REPORT_BOOTSTRAP = 200
#: The forest plot draws at most this many records (those farthest from 0); the tables
#: keep every one.
FOREST_ROWS = 40
LEVEL = 0.95
ADJUST = "holm"
SEED = 0


def paired_section(
    runs: Sequence[Evaluation], store: Store | None, figs_out: dict[str, Figure], idx: int
) -> str:
    """The HTML of the paired comparison of ``runs`` (the first is the baseline), its forest
    plot added to ``figs_out`` (as ``fig-{idx}-paired``); ``""`` without a store or when no
    run carries units."""
    if store is None or len(runs) < 2:
        return ""
    if all(store.units_size(e.id) is None for e in runs):
        return ""
    from assay.store.comparison import comparison

    cmp = comparison(
        list(runs), store=store, adjust=ADJUST, level=LEVEL, num_bootstrap=REPORT_BOOTSTRAP,
        seed=SEED,
    )  # fmt: skip
    base = runs[0]
    shown = [e for e in runs[1:] if any(_paired(r, e.id) for r in cmp.rows)]
    words = PAIRED_TABLE.format(b=REPORT_BOOTSTRAP, s=SEED) if shown else _NONE_PAIRED
    parts = [
        f"<h3>Paired comparison with the baseline {esc(run_name(base))}</h3>",
        f'<p class="caption">{esc(words)}</p>',
    ]
    if cmp.notices:
        notes = "".join(f"<li>{esc(n)}</li>" for n in cmp.notices)
        parts.append(f'<ul class="note notices">{notes}</ul>')
    if not shown:
        return f'<div class="paired">{"".join(parts)}</div>'
    for e in shown:
        parts.append(_run_table(f"paired-{idx}-{e.id}", cmp, base, e))
    fig = forest(cmp, base, shown)
    if fig is not None:
        fid = f"fig-{idx}-paired"
        figs_out[fid] = {"data": fig["data"], "layout": fig["layout"]}
        parts.append(
            f'<div class="plots"><figure class="fig full"><div class="plot" id="{fid}" '
            f'data-kind="{esc(base.kind)}"></div>{caption_html("paired_forest")}</figure></div>'
        )
    return f'<div class="paired">{"".join(parts)}</div>'


_NONE_PAIRED = (
    "Some of these runs kept their units, but no record of a run pairs with the baseline's "
    "on shared units (why, below), so there is no paired test: the side-by-side table above "
    "compares the values. See docs/compare.md."
)


def _paired(row: dict[str, Any], rid: int) -> bool:
    """Whether the row has a paired test for run ``rid`` (not unpaired, not missing)."""
    return row.get(f"test_{rid}") not in (None, "unpaired")


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _excludes_zero(row: dict[str, Any], rid: int) -> bool:
    lo, hi = _num(row.get(f"diff_ci_low_{rid}")), _num(row.get(f"diff_ci_high_{rid}"))
    return lo is not None and hi is not None and (lo > 0 or hi < 0)


def _diff_text(row: dict[str, Any], rid: int) -> str:
    d = _num(row.get(f"diff_{rid}"))
    if d is None:
        return "–"
    lo, hi = _num(row.get(f"diff_ci_low_{rid}")), _num(row.get(f"diff_ci_high_{rid}"))
    text = f"{d:+.4f}"
    return text if lo is None or hi is None else f"{text} [{lo:+.4f}, {hi:+.4f}]"


def _p_text(p: Any) -> str:
    """A p-value to three significant digits (``–`` without a test)."""
    v = _num(p)
    return "–" if v is None else f"{v:.3g}"


def _run_table(box: str, cmp: Comparison, base: Evaluation, e: Evaluation) -> str:
    """One run against the baseline: every record both have a value of, paired or not."""
    rid = e.id
    cols = ["record", "parameters", f"baseline {run_name(base)}", run_name(e),
            f"difference [{LEVEL:.0%} interval]", "test", "n paired",
            f"p ({ADJUST}-adjusted)"]  # fmt: skip
    rows, classes, row_classes = [], [], []
    for r in cmp.rows:
        if r.get(f"test_{rid}") is None:
            continue  # one of the two runs lacks the record or its value (undefined)
        n = r.get(f"n_paired_{rid}")
        rows.append([r["type"], r["parameters"], r.get(f"value_{base.id}"), r.get(f"value_{rid}"),
                     _diff_text(r, rid), r[f"test_{rid}"], n or None,
                     _p_text(r.get(f"p_adjusted_{rid}"))])  # fmt: skip
        sig = _excludes_zero(r, rid)
        mark = ("up" if (_num(r.get(f"diff_{rid}")) or 0) > 0 else "down") + " sig"
        classes.append(["", "", "", "", mark if sig else "", "", "", ""])
        row_classes.append("differs" if sig else "")
    n_sig = sum(1 for c in row_classes if c)
    head = (
        f'<p class="caption"><b>{esc(run_name(e))} minus {esc(run_name(base))}</b>: '
        f"the {len(rows)} records with a value in both runs, {n_sig} with an interval that "
        "leaves out 0 (highlighted).</p>"
    )
    inner = table(cols, rows, classes=classes, row_classes=row_classes, cls="paired-table")
    return head + filterable(box, inner)


def record_label(r: dict[str, Any], width: int = 48) -> Markup:
    """A record's name for a plot's axis: its type, then its parameters wrapped at commas
    into lines of about ``width`` characters (data escaped, the line breaks markup).

    Example:
        >>> record_label({"type": "F1", "parameters": "a=<1>, b=2"}, width=4)
        'F1<br>a=&lt;1&gt;,<br>b=2'
    """
    lines = [str(r["type"])]
    cur = ""
    for part in str(r["parameters"]).split(", ") if r["parameters"] else []:
        if cur and len(cur) + 2 + len(part) > width:
            lines.append(cur + ",")
            cur = part
        else:
            cur = f"{cur}, {part}" if cur else part
    if cur:
        lines.append(cur)
    return Markup("<br>".join(esc_plot(x) for x in lines))


def _strength(r: dict[str, Any], rids: Sequence[int]) -> float:
    """How far a record's differences lie from 0 in half-widths of their intervals (the
    largest over the runs): the forest plot keeps the records furthest out."""
    best = 0.0
    for rid in rids:
        d, lo, hi = (_num(r.get(f"{c}_{rid}")) for c in ("diff", "diff_ci_low", "diff_ci_high"))
        if d is None or lo is None or hi is None:
            continue
        half = (hi - lo) / 2
        best = max(best, abs(d) / half if half > 0 else math.inf if d else 0.0)
    return best


def forest(cmp: Comparison, base: Evaluation, shown: Sequence[Evaluation]) -> Figure | None:
    """The forest plot: per record (rows) and run (colours), the difference with the
    baseline and its interval; a filled marker where the interval leaves out 0."""
    rids = [e.id for e in shown]
    rows = [r for r in cmp.rows if any(_paired(r, rid) and _num(r.get(f"diff_{rid}")) is not None
                                       for rid in rids)]  # fmt: skip
    if not rows:
        return None
    n_all = len(rows)
    if n_all > FOREST_ROWS:
        keep = sorted(range(n_all), key=lambda i: -_strength(rows[i], rids))[:FOREST_ROWS]
        rows = [rows[i] for i in sorted(keep)]
    labels = [record_label(r) for r in rows]
    k = len(shown)
    traces = []
    for j, e in enumerate(shown):
        rid, colour = e.id, PALETTE[j % len(PALETTE)]
        off = (j - (k - 1) / 2) * min(0.25, 0.6 / k)
        ys, xs, up, down, symbols, custom = [], [], [], [], [], []
        for i, r in enumerate(rows):
            d = _num(r.get(f"diff_{rid}")) if _paired(r, rid) else None
            if d is None:
                continue
            lo, hi = _num(r.get(f"diff_ci_low_{rid}")), _num(r.get(f"diff_ci_high_{rid}"))
            ys.append(i + off)
            xs.append(d)
            up.append(None if hi is None else hi - d)
            down.append(None if lo is None else d - lo)
            symbols.append("circle" if _excludes_zero(r, rid) else "circle-open")
            p = r.get(f"p_adjusted_{rid}")
            interval = "" if lo is None or hi is None else f"[{lo:+.4f}, {hi:+.4f}]"
            custom.append([f"{r['type']} {r['parameters']}".strip(), interval, r[f"test_{rid}"],
                           _p_text(p), cell_text(r.get(f"n_paired_{rid}"))])  # fmt: skip
        traces.append({
            "type": "scatter", "mode": "markers", "x": xs, "y": ys,
            "name": f"{run_name(e)} minus {run_name(base)}", "showlegend": True,
            "marker": {"color": colour, "size": 8, "symbol": symbols, "line": {"width": 1.5}},
            "error_x": {"type": "data", "symmetric": False, "array": up, "arrayminus": down,
                        "thickness": 1.5, "width": 3, "color": colour},
            "customdata": custom,
            "hovertemplate": Markup(
                "%{customdata[0]}<br>difference %{x:+.4f} %{customdata[1]}<br>"
                "%{customdata[2]}, n paired %{customdata[4]}, p adjusted %{customdata[3]}"
            ),
        })  # fmt: skip
    lines = sum(lab.count("<br>") + 1 for lab in labels)
    height = max(300, 110 + 15 * lines + 12 * len(rows))
    title = "Paired differences with the baseline"
    if n_all > len(rows):
        title += f" ({len(rows)} of {n_all} records: furthest from 0)"
    zero = {"type": "line", "xref": "x", "yref": "paper", "x0": 0, "x1": 0, "y0": 0, "y1": 1,
            "line": {"color": "#444", "width": 1, "dash": "dash"}}  # fmt: skip
    yaxis = {"tickmode": "array", "tickvals": list(range(len(rows))), "ticktext": labels,
             "autorange": "reversed", "zeroline": False, "tickfont": {"size": 11}}  # fmt: skip
    return figure(
        title,
        traces,
        x_title=f"run minus baseline ({LEVEL:.0%} interval; filled: leaves out 0)",
        height=height,
        caption="paired_forest",
        wide=True,
        yaxis=yaxis,
        shapes=[zero],
        showlegend=True,
    )
