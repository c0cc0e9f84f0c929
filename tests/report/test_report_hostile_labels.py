"""Labels that are markup reach the report as text (issue 36, item 2).

The store of every kind (reportkit) has its labels replaced by hostile ones: a CSS ``url()``
beacon and a link to a real HTTP server on 127.0.0.1 that counts requests, in a class
label, a detection category, a segmentation label, a fairness group, a scoring subgroup,
a score-statistics group, pairwise model names and every run's model (judges included).
Opened in Debian's chromium, the page makes no request, has no live link, shows each label
literally, and carries a Content Security Policy that forbids the network.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

pytestmark = pytest.mark.slow

#: label -> what it is in the store
TOKENS = {
    "cat": "class",
    "dog": "class",
    "cat1": "category",
    "cat2": "category",
    "sky": "segment",
    "road": "segment",
    "m": "group",
    "f": "group",
    "en": "subgroup",
    "zh": "subgroup",
    "math": "topic",
    "m1": "model",
    "m2": "model",
}


class Beacon:
    """An HTTP server on 127.0.0.1 that answers 204 and remembers every path asked."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def label(self, token: str) -> str:
        """``token`` dressed as markup plotly draws: CSS url() fetches and a link."""
        u = f"{self.base}/{token}"
        styles = (
            f"background-image:url({u}-bg);cursor:url({u}-cursor),auto;"
            f"fill:url({u}-fill#p);list-style-image:url({u}-list)"
        )
        return (
            f'<span style="{styles}">{token}</span>'
            f'<a href="{u}-link" style="background:url({u}-a)">&amp;{token}</a>'
        )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    b = Beacon()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def hostile_report(filled_store, beacon, tmp_path_factory) -> Path:
    """The filled store with hostile labels, reported by ``assay report``."""
    url, ids = filled_store
    tmp = tmp_path_factory.mktemp("hostile")
    db = tmp / "hostile.db"
    shutil.copy(url.removeprefix("sqlite:///"), db)
    with sqlite3.connect(db) as conn:
        for tok in TOKENS:
            new = json.dumps(beacon.label(tok))
            for table, col in (("assay_metrics", "value"), ("assay_metrics", "parameters")):
                conn.execute(
                    f"UPDATE {table} SET {col} = replace({col}, ?, ?)", (json.dumps(tok), new)
                )
        conn.execute(
            "UPDATE assay_evaluations SET model = ? || id, dataset = ? || id",
            (beacon.label("run-model"), beacon.label("dataset")),
        )
    out = tmp / "report.html"
    every = [str(i) for kind in ids.values() for i in kind]
    r = CliRunner().invoke(app, ["report", *every, "--db", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_hostile_labels_fetch_nothing_and_link_nowhere(hostile_report, beacon, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(hostile_report.as_uri(), wait_until="load")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 20")
    for p in page.query_selector_all(".js-plotly-plot"):  # hover, legends drawn: nothing
        p.scroll_into_view_if_needed()
        p.hover()
    page.wait_for_timeout(500)
    links = page.evaluate(
        "Array.from(document.querySelectorAll('a'))"
        ".map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')"
    )
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot')).map(e => e.textContent).join()"
    )
    policy = page.evaluate(
        "document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]')?.content ?? ''"
    )
    page.close()
    live = [h for h in links if not h.startswith("#")]
    print(f"requests to the beacon: {len(beacon.hits)}, live links: {len(live)}")
    assert beacon.hits == []  # the server was asked nothing
    assert requests == [hostile_report.as_uri()]
    assert errors == []
    assert live == []  # no live link
    for tok in ("cat", "sky", "en", "m1", "run-model"):  # labels drawn as the text they are
        assert f'<span style="background-image:url({beacon.base}/{tok}-bg)' in shown, tok
    assert "&amp;cat" in shown  # an entity in a label stays the text it was
    assert policy.startswith("default-src 'none'") and "connect-src" not in policy
    html = hostile_report.read_text()
    for tok in TOKENS:  # every label made it into the figures, escaped
        assert f'&lt;span style=\\"background-image:url({beacon.base}/{tok}-bg)' in html, tok


def test_the_policy_itself_blocks_a_request(tmp_path, beacon, browser):
    """Even a label that escaped escaping could not reach the network: the page's policy
    blocks a CSS url() placed straight into its HTML."""
    from assay.report.html import page as html_page

    leak = f'<div style="background-image:url({beacon.base}/policy-bg)">x</div>'
    doc = html_page("t", "s", "", leak, "var x=1;", "{}")
    f = tmp_path / "p.html"
    f.write_text(doc)
    before = len(beacon.hits)
    p = browser.new_page()
    blocked: list[str] = []
    p.on("console", lambda m: blocked.append(m.text) if "Content Security" in m.text else None)
    p.goto(f.as_uri(), wait_until="load")
    p.wait_for_timeout(300)
    p.close()
    assert len(beacon.hits) == before
    assert blocked  # chromium reports the blocked load
