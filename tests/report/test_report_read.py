"""A report people read (issue 34), proven in Debian's chromium on three reports:

* COCO bbox, 80 classes x 2 runs (generated boxes under COCO's class names);
* every kind in one report (the filled store: 14 runs of 12 kinds, LLM suites and judges
  on a scripted model, a loglik exam saved under a local weights path);
* one pairwise run scored from a record file (``assay pairwise score --records``);
* two classification runs kept with their units on the same datums (and one without):
  the paired comparison's tables and forest plot.

Each is opened offline: every figure has data and a caption, no element of a figure
(legend, menu, title, colour bar, tick labels) overlaps an axis title, a title fits its
figure (bounding boxes from the DOM), no console error, no request but the file; the
drill-down goes from a metric row to its items and from an item to its transcript.
Screenshots land in test-artifacts/report/read/.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import reportkit
from reportkit import ARTIFACTS
from typer.testing import CliRunner

from assay.cli.main import app
from assay.report.page import write_report
from assay.store import Store

pytestmark = pytest.mark.slow
SHOTS = ARTIFACTS / "read"

#: Per figure: its data count, caption length, and every overlap of an axis title, a title
#: that does not fit, a legend inside the axes.
CHECK_JS = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return r; };
  const hit = (a, b) => a.width > 0 && b.width > 0 && a.left < b.right - 1 &&
    b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  return Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
    const data = el.data.map(t => {
      const v = t.z ? t.z.flat() : (t.type === 'histogram' ? t.x : t.y);
      return (v || []).filter(x => x !== null && x !== undefined).length;
    });
    const fig = el.closest('figure');
    const cap = fig && fig.querySelector('figcaption');
    const titles = Array.from(el.querySelectorAll('.g-xtitle text, .g-ytitle text'))
      .filter(t => t.textContent.trim());
    const others = [];
    el.querySelectorAll('.legend, .updatemenu-container, .g-gtitle, .colorbar')
      .forEach(o => others.push([o.getAttribute('class'), box(o)]));
    el.querySelectorAll('.xtick text, .ytick text')
      .forEach(o => others.push(['tick ' + o.textContent, box(o)]));
    const overlaps = [];
    titles.forEach(t => others.forEach(([name, b]) => {
      if (hit(box(t), b)) overlaps.push(name + ' over axis title ' + t.textContent);
    }));
    const plotArea = el.querySelector('.nsewdrag');
    const legend = el.querySelector('.legend');
    if (plotArea && legend && hit(box(plotArea), box(legend)))
      overlaps.push('legend inside the axes');
    const title = el.querySelector('.g-gtitle text');
    const outer = box(el);
    if (title && (box(title).right > outer.right + 1 || box(title).left < outer.left - 1))
      overlaps.push('title wider than its figure: ' + title.textContent);
    return {kind: el.dataset.kind, title: el.layout.title.text, data,
            caption: cap ? cap.textContent : '', overlaps};
  });
}"""


def _open(browser: Any, path: Path) -> tuple[Any, list[str], list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 0")
    page.wait_for_timeout(300)
    return page, errors, requests


def _read_as_a_person(browser: Any, path: Path, name: str) -> tuple[Any, list[dict]]:
    """Open the report, check what every report must hold, save the screenshots."""
    page, errors, requests = _open(browser, path)
    figs = page.evaluate(CHECK_JS)
    divs = page.evaluate("document.querySelectorAll('div.plot').length")
    assert len(figs) == divs > 0
    for f in figs:
        assert f["data"] and max(f["data"]) > 0, f["title"]
        assert len(f["caption"]) > 120 and "Shows" in f["caption"], f["title"]
        assert "docs/" in f["caption"], f["title"]
        assert f["overlaps"] == [], (f["title"], f["overlaps"])
    for s in page.query_selector_all("section.kind"):
        intro = s.query_selector("p.intro")
        assert intro is not None and "docs/" in intro.text_content()
    # every table and item list under a heading has its words too
    bare = page.evaluate(
        "Array.from(document.querySelectorAll('section.kind h3'))"
        ".filter(h => !(h.nextElementSibling && h.nextElementSibling.matches('p.caption')"
        " && h.nextElementSibling.textContent.length > 40)).map(h => h.textContent)"
    )
    assert bare == []
    assert errors == []
    assert requests == [path.as_uri()]  # the file itself, nothing else
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.query_selector("#runs").screenshot(path=str(SHOTS / f"{name}-runs.png"))
    for s in page.query_selector_all("section.kind"):
        shot = SHOTS / f"{name}-{s.get_attribute('data-kind') or s.get_attribute('id')}.png"
        s.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
    return page, figs


# ---------------------------------------------------------------------------- COCO 80 x 2


@pytest.fixture(scope="module")
def coco_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("coco80")
    with Store(str(tmp / "s.db")) as st:
        ids = [
            st.save(reportkit.coco80(seed), kind="detection", dataset="coco-val (generated)",
                    model=model)
            for seed, model in ((1, "detector-a"), (2, "detector-b"))
        ]  # fmt: skip
        runs = [st.get(i) for i in ids]
    return write_report(runs, tmp / "coco.html", title="COCO bbox, 80 classes x 2 runs")


@pytest.fixture(scope="module")
def reports(coco_report, mixed_report, pairwise_report, paired_report) -> dict[str, Any]:
    """The reports, all built before the browser starts (the LLM runs use their own
    event loop, which playwright's would refuse)."""
    return {"coco": coco_report, "mixed": mixed_report, "pairwise": pairwise_report,
            "paired": paired_report}  # fmt: skip


def test_coco_80_classes_two_runs_read(reports, browser):
    coco_report = reports["coco"]
    page, figs = _read_as_a_person(browser, coco_report, "coco80")
    (ap,) = [f for f in figs if f["title"].startswith("AP@[.50:.95] per class")]
    # the best 10 and the worst 10 classes by default, two runs: 20 bars each
    assert ap["data"] == [20, 20]
    menu = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".find(e => e.layout.title.text.startsWith('AP@')).layout.updatemenus[0]"
        ".buttons.map(b => b.label)"
    )
    assert menu[:2] == ["best 10 and worst 10", "all 80 classes"] and len(menu) == 2 + 4
    # bars sorted by the mean over the runs, best first
    xs, ys = page.evaluate(
        "(() => { const e = Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".find(e => e.layout.title.text.startsWith('AP@'));"
        "return [e.data[0].x, e.data.map(t => t.y)]; })()"
    )
    means = [(a + b) / 2 for a, b in zip(*ys)]
    assert means[:10] == sorted(means[:10], reverse=True)
    assert min(means[:10]) >= max(means[10:])
    _figure_shot(page, "AP@", "coco80-ap")
    # the menu, clicked as a person would, shows every class, still sorted
    fig = _figure(page, "AP@")
    fig.query_selector(".updatemenu-header-group").click()
    page.wait_for_timeout(300)
    fig.query_selector("text=all 80 classes").click()
    page.wait_for_timeout(800)
    n = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".find(e => e.layout.title.text.startsWith('AP@')).data.map(t => t.x.length)"
    )
    assert n == [80, 80]
    labels = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".find(e => e.layout.title.text.startsWith('AP@'))"
        ".querySelectorAll('.xtick text').length"
    )
    assert labels == 80  # a label under every class, none skipped
    (ap_all,) = [f for f in page.evaluate(CHECK_JS) if f["title"].startswith("AP@")]
    assert ap_all["overlaps"] == [] and ap_all["data"] == [80, 80]
    _figure_shot(page, "AP@", "coco80-ap-all")
    # 80 PR curves per run wait in the legend: at most 8 classes per run are drawn
    (per_class,) = [f for f in figs if f["title"].startswith("PR curve per class")]
    assert len(per_class["data"]) == 160
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".find(e => e.layout.title.text.startsWith('PR curve per class'))"
        ".data.filter(t => t.visible !== 'legendonly').length"
    )
    assert drawn == 16
    _figure_shot(page, "PR curve per class", "coco80-pr-per-class")
    page.close()


def _figure(page: Any, title: str) -> Any:
    """The figure (plot and caption) whose title starts with ``title``."""
    return page.evaluate_handle(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        f".find(e => e.layout.title.text.startsWith({title!r})).closest('figure')"
    ).as_element()


def _figure_shot(page: Any, title: str, name: str) -> None:
    """A screenshot of one figure with its caption (for the docs page)."""
    fig = _figure(page, title)
    fig.scroll_into_view_if_needed()
    fig.screenshot(path=str(SHOTS / f"{name}.png"))


# ---------------------------------------------------------------------- every kind at once


@pytest.fixture(scope="module")
def mixed_report(filled_store, tmp_path_factory) -> tuple[Path, dict]:
    url, ids = filled_store
    started: list[Any] = []

    def server(plan: Any = None, **kw: Any) -> Any:
        from assay.testing.llm import FakeChatServer

        srv = FakeChatServer(plan, hang_seconds=5.0, **kw).start()
        started.append(srv)
        return srv

    tmp = tmp_path_factory.mktemp("mixed")
    db = tmp / "mixed.db"
    db.write_bytes(Path(url.removeprefix("sqlite:///")).read_bytes())
    try:
        with Store(str(db)) as st:
            loglik = reportkit.loglik_exam(server, st)
            runs = [st.get(e.id, items=True) for e in reversed(st.list())]
    finally:
        for srv in started:
            srv.stop()
    ids = {**ids, "loglik": [loglik]}
    return write_report(runs, tmp / "mixed.html", title="Every kind"), ids


def test_every_kind_report_reads(reports, browser):
    path, ids = reports["mixed"]
    page, figs = _read_as_a_person(browser, path, "mixed")
    kinds = {f["kind"] for f in figs}
    assert len(list(ids)) >= 10 and len(kinds) >= 8
    text = page.text_content("#runs")
    # the model as the user knows it, never a local weights path
    assert "embedded:SmolLM2-135M-Instruct.Q4_1" in text and "/opt/build" not in text
    assert "/opt/build" not in page.content()
    # stats: groups in their order, named alone (never "math (mean)")
    (acc,) = [f for f in figs if f["title"].startswith("Accuracy by topic")]
    names = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".find(e => e.layout.title.text.startsWith('Accuracy by topic')).data[0].x"
    )
    assert names == ["all", "art", "history", "math"]
    # counts as counts: heat map cells with thousands separators, never an SI suffix
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot .heatmaplayer text'))"
        ".map(t => t.textContent)"
    )
    assert cells and not any(c.endswith("k") for c in cells)
    # the judge's 1-5 scale has 3 values here: a table of counts, not a histogram
    assert not any(f["title"].startswith("Coherence") for f in figs)
    counts = page.evaluate(
        "Array.from(document.querySelectorAll('section[data-kind=text] div.wide table tr'))"
        ".filter(r => r.cells[0].textContent === 'Coherence').map(r => r.cells[1].textContent)"
    )
    assert counts == ["2.0000", "3.0000", "4.0000"]
    # several runs: the parameters diff and the side-by-side metrics, differences marked
    lang = page.query_selector("section[data-kind=llm_language]")
    diff = lang.query_selector(".params")
    assert "Parameters diff" in diff.text_content() and "answer_mode" in diff.text_content()
    assert diff.query_selector_all("td.down")  # the cells that differ from the baseline
    diff.screenshot(path=str(SHOTS / "mixed-params-diff.png"))
    cls = page.query_selector("section[data-kind=classification] details")
    assert cls.query_selector_all("tr.differs") and cls.query_selector_all("td.up, td.down")
    cls.screenshot(path=str(SHOTS / "mixed-compare-table.png"))
    page.close()


def _visible_items(page: Any, box: str) -> list[str]:
    return page.evaluate(
        f"Array.from(document.querySelectorAll('#{box} tbody tr'))"
        ".filter(r => r.style.display !== 'none').map(r => r.cells[0].textContent)"
    )


def test_drill_down_from_a_metric_row_to_an_items_transcript(reports, browser):
    path, ids = reports["mixed"]
    page, _, _ = _open(browser, path)
    (judge,) = ids["text"]
    box = f"items-{_section_of(page, 'text')}-{judge}"
    # the judge's Coherence record of datum 'rain' leads to the one call behind it
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    btn = _button(page, "text", "id=rain\nid=coherence")
    assert btn.text_content() == "1 item"
    btn.click()
    assert _visible_items(page, box) == ["rain/coherence"]
    assert "items of Coherence" in page.text_content(f"#{box} .want")
    page.query_selector(f"#{box}").screenshot(path=str(SHOTS / "mixed-drill-judge.png"))
    # ROUGE of the same datum was not a call: no button
    rouge = page.evaluate(
        "Array.from(document.querySelectorAll('section[data-kind=text] details tbody tr'))"
        ".filter(r => r.cells[0].textContent === 'ROUGE')"
        ".map(r => r.querySelector('button.drill') === null)"
    )
    assert rouge and all(rouge)
    # the item opens its transcript: every message, the raw answer, the parsed score
    page.click(f"#{box} tbody tr:not([style*='none'])")
    t = page.query_selector(f"#{box} .transcript")
    assert t.is_visible()
    shown = t.text_content()
    assert "item rain/coherence" in shown and "system" in shown and "user" in shown
    assert "raw answer" in shown and '"score": 2' in shown and "retries" in shown
    assert len(t.query_selector_all(".msg")) == 2
    t.screenshot(path=str(SHOTS / "mixed-transcript-judge.png"))
    # filters: status, and the drill-down lifted by "show all"
    page.click(f"#{box} .want button")
    page.select_option(f"#{box} select.status", "status=invalid")
    assert _visible_items(page, box) == ["stocks/coherence"]
    page.select_option(f"#{box} select.value", "score=4")
    assert _visible_items(page, box) == []
    page.select_option(f"#{box} select.status", "")
    assert _visible_items(page, box) == ["dog/coherence"]

    # pairwise: a win rate of m1 against ref leads to the comparisons of those two
    (pw,) = ids["pairwise"]
    pbox = f"items-{_section_of(page, 'pairwise')}-{pw}"
    _button(page, "pairwise", "id=m1\nid=ref").click()
    shown_ids = _visible_items(page, pbox)
    assert shown_ids and all({"m1", "ref"} <= set(i.split(";")) for i in shown_ids)

    # LLM fairness: items kept their group, so a slice menu filters by it
    (fair,) = ids["llm_fairness"]
    fbox = f"items-{_section_of(page, 'llm_fairness')}-{fair}"
    options = page.evaluate(
        f"Array.from(document.querySelectorAll('#{fbox} select.slice option')).map(o => o.value)"
    )
    assert "group=f" in options and "group=m" in options
    page.select_option(f"#{fbox} select.slice", "group=f")
    rows = page.evaluate(
        f"Array.from(document.querySelectorAll('#{fbox} tbody tr'))"
        ".filter(r => r.style.display !== 'none').map(r => r.dataset.facets)"
    )
    assert rows and all("\ngroup=f\n" in f"\n{f}\n" for f in rows)

    # a loglik item: each option's log-likelihood as a small table, not JSON
    (ll,) = ids["loglik"]
    lbox = f"items-{_section_of_run(page, ll)}-{ll}"
    page.click(f"#{lbox} tbody tr")
    t = page.query_selector(f"#{lbox} .transcript")
    rows = t.query_selector_all("table.options tbody tr")
    assert len(rows) >= 2 and "log-likelihood" in t.text_content()
    assert '{"options"' not in t.text_content()
    assert '{"options"' not in page.text_content(f"#{lbox} tbody")
    t.screenshot(path=str(SHOTS / "mixed-transcript-loglik.png"))
    page.close()


def _button(page: Any, kind: str, want: str) -> Any:
    """The first drill-down button of a kind's metric rows that asks for ``want``."""
    handle = page.evaluate_handle(
        f"Array.from(document.querySelectorAll('section[data-kind={kind}] button.drill'))"
        f".find(b => b.dataset.want === {want!r})"
    )
    btn = handle.as_element()
    assert btn is not None, (kind, want)
    return btn


def _section_of(page: Any, kind: str) -> str:
    return page.evaluate(
        f"document.querySelector('section[data-kind=\"{kind}\"]').id.replace('kind-', '')"
    )


def _section_of_run(page: Any, run: int) -> str:
    box = page.evaluate(
        "Array.from(document.querySelectorAll('.filterable.items')).map(b => b.id)"
        f".find(i => i.endsWith('-{run}'))"
    )
    return box.split("-")[1]


# ------------------------------------------------------------- pairwise from a record file


@pytest.fixture(scope="module")
def pairwise_report(tmp_path_factory) -> Path:
    """``pairwise judge`` writes its record file; ``pairwise score --records`` stores a run
    from it alone, and that run is reported."""
    from assay.testing.llm import FakeChatServer

    tmp = tmp_path_factory.mktemp("pw-records")
    judged = f"sqlite:///{tmp / 'judged.db'}"
    started: list[Any] = []

    def server(plan: Any = None, **kw: Any) -> Any:
        s = FakeChatServer(plan, hang_seconds=5.0, **kw).start()
        started.append(s)
        return s

    try:
        reportkit.pairwise(server, judged, tmp)
    finally:
        for s in started:
            s.stop()
    (records,) = [p for p in (tmp / "pw").rglob("record_*.tsv")]
    url = f"sqlite:///{tmp / 'scored.db'}"
    args = ["pairwise", "score", "--records", str(records), "--reference-model", "ref",
            "--out-dir", str(tmp / "scored"), "--num-bootstrap", "50",
            "--save", "--db", url]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    with sqlite3.connect(tmp / "scored.db") as conn:
        (eid,) = conn.execute("SELECT id FROM assay_evaluations").fetchone()
    with Store(url) as st:
        run = st.get(eid, items=True)
    return write_report([run], tmp / "pairwise.html", title="Pairwise from a record file")


def test_pairwise_from_a_record_file_reads(reports, browser):
    page, figs = _read_as_a_person(browser, reports["pairwise"], "pairwise")
    titles = [f["title"] for f in figs]
    for want in ("Win rates", "Judge consistency", "Bradley-Terry ratings"):
        assert any(t.startswith(want) for t in titles), (want, titles)
    _figure_shot(page, "Win rates", "pairwise-win-rates")
    params = page.text_content("section[data-kind=pairwise]")
    assert "Parameters" in params and "reference_model" in params
    page.close()


# ------------------------------------------------------------ runs paired on their units


@pytest.fixture(scope="module")
def paired_report(tmp_path_factory) -> tuple[Path, Any, int]:
    """Two classification runs on the same 400 datums kept with their units (the second
    model sharper), and a third kept without; ``(path, comparison(), the second's id)``."""
    from assay.report.paired import REPORT_BOOTSTRAP
    from assay.store.comparison import comparison

    tmp = tmp_path_factory.mktemp("paired")
    with Store(str(tmp / "s.db")) as st:
        a = st.save(reportkit.classification(0), kind="classification", dataset="three-pets",
                    model="logit-1.5", name="baseline")  # fmt: skip
        b = st.save(reportkit.classification(0, skill=2.0), kind="classification",
                    dataset="three-pets", model="logit-2.0", name="sharper")  # fmt: skip
        c = st.save(reportkit.classification(0, skill=1.7), kind="classification", units=False,
                    dataset="three-pets", model="logit-1.7", name="no-units")  # fmt: skip
        want = comparison([a, b, c], store=st, num_bootstrap=REPORT_BOOTSTRAP, seed=0)
        runs = [st.get(i) for i in (a, b, c)]
        path = write_report(runs, tmp / "paired.html", title="Two runs paired", store=st)
    return path, want, b


def test_paired_comparison_reads(reports, browser):
    path, want, b = reports["paired"]
    page, figs = _read_as_a_person(browser, path, "paired")
    (forest,) = [f for f in figs if f["title"].startswith("Paired differences")]
    assert forest["data"] == [len(want.rows)]  # one point per record
    assert "Holm" in forest["caption"] and "docs/compare.md" in forest["caption"]
    # the table as shown: each difference and interval is comparison()'s
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('table.paired-table tbody tr'))"
        ".map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    assert len(shown) == len(want.rows)
    for got, w in zip(shown, want.rows):
        d, lo, hi = w[f"diff_{b}"], w[f"diff_ci_low_{b}"], w[f"diff_ci_high_{b}"]
        assert got[0] == w["type"] and got[4] == f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]"
    bold = page.evaluate(
        "Array.from(document.querySelectorAll('table.paired-table td.sig'))"
        ".map(c => getComputedStyle(c).fontWeight)"
    )
    assert bold and all(int(w) >= 700 for w in bold)
    notes = page.text_content("div.paired .notices")
    assert "no-units" in notes and "no units kept" in notes
    # a row's record is never cut: the parameters cell shows its whole text
    cut = page.evaluate(
        "Array.from(document.querySelectorAll('table.paired-table td:nth-child(2)'))"
        ".filter(c => c.scrollWidth > c.clientWidth + 1).length"
    )
    assert cut == 0
    page.query_selector("div.paired").screenshot(path=str(SHOTS / "paired-section.png"))
    page.query_selector("div.paired .filterable").screenshot(path=str(SHOTS / "paired-table.png"))
    _figure_shot(page, "Paired differences", "paired-forest")
    page.close()
