"""Plotly figures as plain dicts (``{"data", "layout"}``), and the helpers every kind shares.

The page renders them with the plotly.js inlined in it (:mod:`assay.report.page`); building
plain dicts keeps plotly's Python package out of the hot path (it is only asked for its
JavaScript). plotly.js reads pseudo-HTML in every text it draws (titles, ticks, legends, hover
labels: ``<span style>``, ``<a href>``, entities), so each figure goes to the page through
:func:`plot_text`, which escapes ``&``, ``<`` and ``>`` in every string: a label from the
data is drawn as the text it is, and never fetches or links anything. The few strings assay
writes as markup itself are :class:`Markup` (their data parts escaped by :func:`esc_plot`).
Curves are thinned to at most :data:`MAX_POINTS` points (the exact points stay
in the store's records).

Example:
    >>> f = figure("AP per class", [bar(["cat", "dog"], [0.5, 0.7], "run 1")], y_title="AP")
    >>> f["layout"]["title"]["text"], f["data"][0]["type"]
    ('AP per class', 'bar')
    >>> x, y = downsample(list(range(1000)), list(range(1000)))
    >>> len(x) <= MAX_POINTS, x[0], x[-1]
    (True, 0, 999)
    >>> plot_text({"name": '<a href="http://x">cat</a>', "hovertemplate": Markup("%{x}<br>")})
    {'name': '&lt;a href="http://x"&gt;cat&lt;/a&gt;', 'hovertemplate': '%{x}<br>'}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from assay.results import Metric
from assay.store.records import Evaluation

__all__ = [
    "MAX_POINTS",
    "Markup",
    "esc_plot",
    "plot_text",
    "Figure",
    "figure",
    "line",
    "bar",
    "record_bar",
    "heatmap",
    "histogram",
    "downsample",
    "run_label",
    "run_name",
    "run_tags",
    "model_text",
    "COUNT_AXIS",
    "WIDE_PALETTE",
    "DASHES",
    "THIN_ERRORS",
    "ranked_bars",
    "records",
    "scalar",
    "band",
    "hline",
    "label_of",
]

#: At most this many points per curve in a report.
MAX_POINTS = 300
Figure = dict[str, Any]
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
#: Ten colours for lines told apart by colour (classes, thresholds); runs by :data:`DASHES`.
WIDE_PALETTE = (*PALETTE, "#7f7f7f", "#bcbd22", "#17becf")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


class Markup(str):
    """Text assay writes as plotly markup (a ``<br>``, a hover template): :func:`plot_text`
    leaves it as it is, so any data inside it must already be escaped (:func:`esc_plot`)."""


def esc_plot(text: object) -> str:
    """``text`` as plotly draws it literally: ``&``, ``<``, ``>`` as entities."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plot_text(obj: Any) -> Any:
    """A figure (or any part of one) with every string escaped (:func:`esc_plot`) but
    :class:`Markup`; numbers, keys and structure unchanged."""
    if isinstance(obj, Markup):
        return str(obj)
    if isinstance(obj, str):
        return esc_plot(obj)
    if isinstance(obj, dict):
        return {k: plot_text(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plot_text(v) for v in obj]
    return obj


def figure(
    title: str,
    traces: Sequence[dict[str, Any]],
    *,
    x_title: str | None = None,
    y_title: str | None = None,
    height: int = 380,
    caption: str | None = None,
    wide: bool = False,
    **layout: Any,
) -> Figure:
    """A figure dict with a title, axis titles and the report's compact margins.

    ``caption`` is the key of its words in :mod:`assay.report.prose` (shown under the plot);
    ``wide`` gives it the page's whole width. The legend stands right of the plot, outside
    the axes (plotly widens the margin for it), so it never covers an axis or its title.
    """
    lay: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 15}, "x": 0.01, "xanchor": "left"},
        "height": height,
        "margin": {"l": 60, "r": 20, "t": 56, "b": 50},
        "xaxis": {"title": {"text": x_title or ""}, "automargin": True},
        "yaxis": {"title": {"text": y_title or ""}, "automargin": True},
        "legend": {
            "orientation": "v",
            "x": 1.02,
            "xanchor": "left",
            "y": 1,
            "yanchor": "top",
            "font": {"size": 11},
        },
        "colorway": list(PALETTE),
    }
    for k, v in layout.items():
        if isinstance(v, dict) and isinstance(lay.get(k), dict):
            lay[k] = {**lay[k], **v}
        else:
            lay[k] = v
    fig: Figure = {"data": list(traces), "layout": lay}
    if caption is not None:
        fig["caption"] = caption
    names = [str(t.get("name", "")) for t in traces if t.get("showlegend", True)]
    if wide or (len(names) > 1 and max(map(len, names)) * min(len(names), 2) > 56):
        fig["wide"] = True  # a long legend would squeeze the axes in half a row
    return fig


#: An axis of counts: whole numbers with thousands separators, never "19.958k".
COUNT_AXIS: dict[str, Any] = {"exponentformat": "none", "separatethousands": True}


def line(x: Sequence[Any], y: Sequence[Any], name: str, **kw: Any) -> dict[str, Any]:
    """A scatter trace drawn as a line (thinned to :data:`MAX_POINTS`)."""
    xs, ys = downsample(list(x), list(y))
    return {"type": "scatter", "mode": "lines", "x": xs, "y": ys, "name": name, **kw}


def bar(
    x: Sequence[Any],
    y: Sequence[Any],
    name: str,
    *,
    low: Sequence[float | None] | None = None,
    high: Sequence[float | None] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """A bar trace; ``low``/``high`` (interval bounds) become asymmetric error bars."""
    t: dict[str, Any] = {"type": "bar", "x": list(x), "y": list(y), "name": name, **kw}
    if low is not None and high is not None:
        up = [None if h is None or v is None else h - v for v, h in zip(y, high)]
        down = [None if lo is None or v is None else v - lo for v, lo in zip(y, low)]
        t["error_y"] = {
            "type": "data",
            "symmetric": False,
            "array": up,
            "arrayminus": down,
            **THIN_ERRORS,
        }
    return t


#: Error bars drawn thin and grey: the interval is read, not the bar hidden.
THIN_ERRORS: dict[str, Any] = {"thickness": 1, "width": 2, "color": "#444"}


def record_bar(xs: Sequence[Any], ms: Sequence[Metric], name: str, **kw: Any) -> dict[str, Any]:
    """A bar per record; error bars from the records' ``ci_low``/``ci_high`` when any has them.

    Example:
        >>> m = Metric("IOU", 0.5, {"ci_low": 0.4, "ci_high": 0.7})
        >>> record_bar(["road"], [m], "run")["error_y"]["array"]
        [0.19999999999999996]
    """
    low = [scalar(m.parameters.get("ci_low")) for m in ms]
    high = [scalar(m.parameters.get("ci_high")) for m in ms]
    has = any(v is not None for v in low)
    values = [m.value for m in ms]
    return bar(xs, values, name, low=low if has else None, high=high if has else None, **kw)


def heatmap(z: Sequence[Sequence[float]], x: Sequence[str], y: Sequence[str], **kw: Any) -> dict:
    """A heat map with the counts written in the cells."""
    return {
        "type": "heatmap",
        "z": [list(r) for r in z],
        "x": list(x),
        "y": list(y),
        "colorscale": "Blues",
        "reversescale": True,
        "texttemplate": "%{z:,}",
        "hovertemplate": Markup("truth %{y}<br>predicted %{x}<br>%{z:,}<extra></extra>"),
        **kw,
    }


def histogram(values: Sequence[float], name: str, **kw: Any) -> dict[str, Any]:
    """A histogram trace (overlaid with others at 60% opacity)."""
    return {"type": "histogram", "x": list(values), "name": name, "opacity": 0.6, **kw}


def hline(y: float, text: str | None = None) -> dict[str, Any]:
    """A dashed horizontal line across the plot (a layout shape), e.g. the fair value."""
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"dash": "dash", "color": "#444", "width": 1},
        "name": text or "",
    }


def band(low: float, high: float) -> dict[str, Any]:
    """A shaded horizontal band (a layout shape), e.g. the usual fairness range."""
    return {
        "type": "rect",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": low,
        "y1": high,
        "fillcolor": "rgba(44, 160, 44, 0.12)",
        "line": {"width": 0},
        "layer": "below",
    }


def downsample(x: list[Any], y: list[Any], n: int = MAX_POINTS) -> tuple[list[Any], list[Any]]:
    """At most ``n`` points, evenly spaced by index, keeping the first and the last."""
    if len(x) <= n:
        return x, y
    step = (len(x) - 1) / (n - 1)
    idx = sorted({round(i * step) for i in range(n)})
    return [x[i] for i in idx], [y[i] for i in idx]


def run_name(ev: Evaluation) -> str:
    """A run's name: the one it was saved with (``--name``) if the store has one, else
    ``#id``."""
    name = getattr(ev, "name", None)
    return str(name) if name else f"#{ev.id}"


def run_tags(ev: Evaluation) -> str | None:
    """A run's tags (``--tag``, where the store has them), comma-separated."""
    tags = getattr(ev, "tags", None)
    if not tags:
        return None
    return ", ".join(map(str, tags)) if isinstance(tags, (list, tuple, set)) else str(tags)


def run_label(ev: Evaluation) -> str:
    """How a run is named in legends: its name and the model as typed (``#12 m1``)."""
    model = model_text(ev.model)
    return run_name(ev) + (f" {model}" if model else "")


def model_text(model: str | None) -> str | None:
    """The model as the reader knows it: a local weights path is shortened to its file's
    stem (``embedded:/build/x/SmolLM2-135M-Instruct.Q4_1.gguf`` reads
    ``embedded:SmolLM2-135M-Instruct.Q4_1``), a spec is kept as typed.

    Example:
        >>> model_text("embedded:/tmp/b/SmolLM2-135M-Instruct.Q4_1.gguf")
        'embedded:SmolLM2-135M-Instruct.Q4_1'
        >>> model_text("http://127.0.0.1:8000/v1#smollm2"), model_text("embedded")
        ('http://127.0.0.1:8000/v1#smollm2', 'embedded')
    """
    if not model:
        return model
    prefix, sep, rest = model.partition(":")
    if sep and prefix == "embedded" and ("/" in rest or "\\" in rest or rest.endswith(".gguf")):
        stem = rest.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        return f"embedded:{stem.removesuffix('.gguf')}"
    return model


def records(ev: Evaluation, type_: str, where: Callable[[Metric], bool] | None = None) -> list:
    """The run's records of one type (optionally filtered)."""
    return [m for m in ev.metrics or [] if m.type == type_ and (where is None or where(m))]


def scalar(v: Any) -> float | None:
    """A finite float, or ``None`` (undefined, NaN, not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def label_of(m: Metric, keys: Iterable[str]) -> str:
    """A short label from some of a record's parameters (``"sex = m"``)."""
    parts = []
    for k in keys:
        v = m.parameters.get(k)
        if v is not None:
            parts.append(", ".join(map(str, v)) if isinstance(v, list) else str(v))
    return " · ".join(parts)


#: Per-class figures show every class up to this many, else the best and worst halves of it.
SHOWN_CLASSES = 20


def ranked_bars(
    series: Sequence[tuple[str, dict[str, Metric]]],
    title: str,
    *,
    x_title: str,
    y_title: str,
    caption: str,
) -> Figure:
    """Bars per class and run, classes sorted by their mean over the runs (best first).

    With more than :data:`SHOWN_CLASSES` classes the figure opens on the best and the worst
    half of that many, and a menu (plotly's own ``updatemenus``, no script of ours) shows
    all of them or each page of them in the same order. Intervals are drawn where a record
    has one (:func:`record_bar`, thin).

    Example:
        >>> ms = {c: Metric("IOU", v) for c, v in zip("abc", (0.2, 0.9, 0.5))}
        >>> f = ranked_bars([("run", ms)], "IoU", x_title="class", y_title="IoU", caption="iou")
        >>> f["data"][0]["x"], "updatemenus" in f["layout"]
        (['b', 'c', 'a'], False)
    """
    classes: dict[str, list[float]] = {}
    for _, found in series:
        for label, m in found.items():
            v = scalar(m.value)
            classes.setdefault(label, [])
            if v is not None:
                classes[label].append(v)

    def mean(label: str) -> float:
        vs = classes[label]
        return sum(vs) / len(vs) if vs else -math.inf

    order = sorted(classes, key=lambda c: (-mean(c), c))

    def traces(shown: list[str]) -> list[dict[str, Any]]:
        out = []
        for name, found in series:
            xs = [c for c in shown if c in found]
            out.append(record_bar(xs, [found[c] for c in xs], name))
        return out

    n = len(order)
    height = 420
    layout: dict[str, Any] = {
        "barmode": "group",
        "bargap": 0.25,
        "bargroupgap": 0.05,
        # a label under every bar group: plotly would skip some when they crowd
        "xaxis": {"tickmode": "linear", "dtick": 1, "tickangle": -45, "tickfont": {"size": 11}},
    }
    if n <= SHOWN_CLASSES:
        return figure(title, traces(order), x_title=x_title, y_title=y_title,
                      caption=caption, wide=n * len(series) > 24, height=height,
                      **layout)  # fmt: skip
    half = SHOWN_CLASSES // 2
    views = [(f"best {half} and worst {half}", order[:half] + order[-half:])]
    views.append((f"all {n} classes", order))
    for i in range(0, n, SHOWN_CLASSES):
        page = order[i : i + SHOWN_CLASSES]
        views.append((f"classes {i + 1}-{i + len(page)} of {n}", page))
    buttons = []
    for label, shown in views:
        ts = traces(shown)
        change: dict[str, Any] = {"x": [t["x"] for t in ts], "y": [t["y"] for t in ts]}
        if any("error_y" in t for t in ts):
            change["error_y"] = [t.get("error_y", {"visible": False}) for t in ts]
        many = len(shown) > SHOWN_CLASSES  # every label drawn, upright to fit
        ticks = {"xaxis.tickangle": -90 if many else -45, "xaxis.tickfont.size": 10 if many else 11}
        buttons.append({"label": label, "method": "update", "args": [change, ticks]})
    menu = {
        "buttons": buttons,
        "direction": "down",
        "showactive": True,
        "x": 1.0,
        "xanchor": "right",
        "y": 1.02,
        "yanchor": "bottom",
        "pad": {"r": 2, "t": 2},
        "font": {"size": 11},
    }
    return figure(
        f"{title} (sorted; menu: which classes)",
        traces(views[0][1]),
        x_title=x_title,
        y_title=y_title,
        caption=caption,
        wide=True,
        height=height,
        updatemenus=[menu],
        margin={"t": 80},
        **layout,
    )
