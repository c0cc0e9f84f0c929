"""The HTML report opened in headless Debian chromium: loads cleanly, offline, every plot has
data, the item table filters; a screenshot per kind is saved to test-artifacts/report/."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportkit import ARTIFACTS

from assay.report.page import write_report
from assay.store import Store

pytestmark = pytest.mark.slow

#: Plot titles (prefixes) a user of each kind expects to find.
EXPECTED = {
    "classification": ["ROC curves", "Precision-recall curves", "Confusion matrix"],
    "fairness": ["Fairness differences", "Fairness ratios", "Rates by group"],
    "detection": ["AP@[.50:.95] per class", "PR curves per IoU threshold", "PR curve per class"],
    "segmentation": ["IoU per class", "Pixel confusion matrix"],
    "scoring": ["Score distributions", "Confusion matrix: human vs rounded", "eval_by_L1"],
    "stats": ["Accuracy by topic"],
    # text: 4 datums give each metric at most 4 distinct values: a table, not histograms
    # (tests/report/test_report_read.py)
    "llm_cat": ["Context association tests by scope"],
    "llm_fairness": ["Fairness differences", "Counterfactual change rate"],
    "llm_language": ["Exam results by language"],
    "pairwise": ["Win rates", "Judge consistency", "Bradley-Terry ratings"],
}

PLOTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => ({
  kind: el.dataset.kind,
  title: el.layout.title.text,
  traces: el.data.map(t => {
    const v = t.z ? t.z.flat() : (t.type === 'histogram' ? t.x : t.y);
    return (v || []).filter(x => x !== null && x !== undefined).length;
  }),
}))"""


@pytest.fixture(scope="module")
def report(filled_store, tmp_path_factory) -> Path:
    url, _ = filled_store
    with Store(url) as st:
        runs = [st.get(e.id, items=True) for e in reversed(st.list())]
    return write_report(runs, tmp_path_factory.mktemp("report") / "report.html")


@pytest.fixture(scope="module")
def opened(report, browser):
    """The loaded page with the console errors and the requests it made.

    ``report`` comes first: the store is filled (LLM runs use their own event loop) before
    playwright's loop starts.
    """
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.as_uri(), wait_until="load")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 0")
    yield page, errors, requests
    page.close()


def test_loads_with_no_console_error_and_no_network_request(opened, report):
    page, errors, requests = opened
    assert errors == []
    assert requests == [report.as_uri()]  # the file itself, nothing else
    assert page.evaluate("typeof Plotly") == "object"
    html = report.read_text()
    assert "cdn" not in html.lower().split("<script>", 1)[0]
    assert html.count("plotly.js v") <= 2  # the library inlined once (its banner)


def test_every_plot_has_data_and_each_kind_its_plots(opened):
    page, _, _ = opened
    plots = page.evaluate(PLOTS_JS)
    divs = page.evaluate("document.querySelectorAll('div.plot').length")
    assert len(plots) == divs > 18  # every figure div was rendered by plotly
    for p in plots:
        assert p["traces"] and max(p["traces"]) > 0, p
    for kind, wanted in EXPECTED.items():
        titles = [p["title"] for p in plots if p["kind"] == kind]
        for w in wanted:
            assert any(t.startswith(w) for t in titles), (kind, w, titles)
    # two classification runs: overlaid ROC curves, one line per run and label (+ chance)
    roc = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".filter(e => e.layout.title.text.startsWith('ROC')).map(e => e.data.length)"
    )
    assert roc == [2 * 3 + 1]


def test_every_kind_has_a_section_and_a_screenshot(opened, filled_store):
    page, _, _ = opened
    _, ids = filled_store
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    kinds = [s.get_attribute("data-kind") for s in page.query_selector_all("section.kind")]
    assert sorted(kinds) == sorted(ids)
    # a kind without plots (make demo's llm_demo) still has its metrics and item tables
    plain = page.query_selector('section[data-kind="llm_demo"]')
    assert plain.query_selector(".js-plotly-plot") is None
    assert "no plots for this kind" in plain.text_content()
    assert "CallErrors" in plain.text_content() and len(plain.query_selector_all("tbody tr")) >= 4
    for section in page.query_selector_all("section.kind"):
        shot = ARTIFACTS / f"{section.get_attribute('data-kind')}.png"
        section.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000  # a real picture, not an empty box


def _visible(page, box: str) -> list[str]:
    return page.evaluate(
        f"Array.from(document.querySelectorAll('#{box} tbody tr'))"
        ".filter(r => r.style.display !== 'none').map(r => r.cells[0].textContent)"
    )


def test_item_table_searches_and_filters_by_status(opened, filled_store):
    page, _, _ = opened
    _, ids = filled_store
    (text_run,) = ids["text"]
    box = page.evaluate(
        f"Array.from(document.querySelectorAll('.filterable')).map(b => b.id)"
        f".find(i => i.startsWith('items-') && i.endsWith('-{text_run}'))"
    )
    assert _visible(page, box) == [
        "cat/coherence",
        "dog/coherence",
        "rain/coherence",
        "stocks/coherence",
    ]
    page.fill(f"#{box} input.search", "rain")
    assert _visible(page, box) == ["rain/coherence"]
    assert page.text_content(f"#{box} .count") == "1 of 4 rows"
    page.fill(f"#{box} input.search", "")
    page.select_option(f"#{box} select.status", "status=invalid")
    assert _visible(page, box) == ["stocks/coherence"]  # the reply that was not JSON
    page.select_option(f"#{box} select.status", "status=ok")
    assert len(_visible(page, box)) == 3
    page.select_option(f"#{box} select.status", "")
    # the summary table of metrics filters too
    metrics_box = page.evaluate(
        "document.querySelector('section[data-kind=\"pairwise\"] .filterable').id"
    )
    page.evaluate(f"document.querySelector('#{metrics_box}').closest('details').open = true")
    page.fill(f"#{metrics_box} input.search", "BradleyTerry")
    assert _visible(page, metrics_box) == ["BradleyTerryRating"] * 3
