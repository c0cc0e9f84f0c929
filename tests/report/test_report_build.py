"""Building the report without a browser: the CLI, thinned curves, kinds without plots."""

from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.classification import ClassificationEvaluator
from assay.cli.main import app
from assay.report.figures import MAX_POINTS
from assay.report.page import build_report, report_figures
from assay.results import Metric
from assay.store import Store

runner = CliRunner()


def _figures_json(text: str) -> dict:
    return json.loads(re.search(r"var FIGS=(\{.*?\});Object\.keys", text, re.S).group(1))


def _big_classification(n: int = 20_000):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1)  # continuous: one ROC point per score
    ev = ClassificationEvaluator(metrics=["ROCCurve", "PrecisionRecallCurve", "Accuracy"])
    return ev.add_arrays(np.where(y, "yes", "no"), s, labels=["no", "yes"]).compute()


def test_curves_are_thinned_but_keep_their_ends(tmp_path):
    with Store(str(tmp_path / "s.db")) as st:
        eid = st.save(_big_classification(), kind="classification")
        ev = st.get(eid)
    exact = ev.metrics.get("ROCCurve").value["yes"]
    assert len(exact["fpr"]) > 5 * MAX_POINTS  # the store keeps every turning point
    (roc, *_), _ = report_figures("classification", [ev])
    for trace in roc["data"][:-1]:  # the last trace is the chance diagonal
        assert len(trace["x"]) <= MAX_POINTS
        assert (trace["x"][0], trace["y"][0]) == (0.0, 0.0)
        assert (trace["x"][-1], trace["y"][-1]) == (1.0, 1.0)
    text = build_report([ev])
    assert len(text) < 6_000_000  # plotly.js (~4.7 MB) + a small page


def test_a_kind_without_plots_gets_its_table_and_items_their_table(tmp_path):
    from assay.store import ItemRecord

    with Store(str(tmp_path / "s.db")) as st:
        eid = st.save(
            [Metric("Accuracy", 0.75, {"n": 4}), Metric("CallErrors", 1)],
            kind="llm_demo",
            items=[
                ItemRecord("q1", [{"role": "user", "content": "2+2? <b>bold</b>"}], ok=True,
                           raw_answer="4"),
                ItemRecord("q2", [{"role": "user", "content": "x"}], ok=False,
                           error_kind="http", error="HTTP 500"),
            ],
        )  # fmt: skip
        ev = st.get(eid, items=True)
    text = build_report([ev])
    assert "no plots for this kind" in text
    assert _figures_json(text) == {}
    assert "CallErrors" in text and "HTTP 500" in text
    assert "<b>bold</b>" not in text and "&lt;b&gt;bold&lt;/b&gt;" in text  # escaped
    assert 'data-status="error"' in text and 'data-status="ok"' in text


def test_several_runs_summary_shows_differences_and_overlap(tmp_path):
    def run(acc, lo, hi):
        return [Metric("Accuracy", acc, {"ci_low": lo, "ci_high": hi})]

    with Store(str(tmp_path / "s.db")) as st:
        a = st.save(run(0.6, 0.5, 0.7), kind="stats")
        b = st.save(run(0.9, 0.85, 0.95), kind="stats")
        text = build_report([st.get(a), st.get(b)])
    head = re.search(r"<th>type</th>.*?</tr>", text).group(0)
    assert f"<th>diff_{b}</th>" in head and f"<th>overlap_{b}</th>" in head
    assert ">0.3000<" in text and ">false<" in text


def test_cli_writes_the_report_and_selects_runs(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store(url) as st:
        ids = [
            st.save([Metric("IOU", v, {"label_key": "class", "label_value": "road"})],
                    kind="segmentation", dataset="d")
            for v in (0.5, 0.6, 0.7)
        ]  # fmt: skip
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", str(ids[0]), str(ids[2]), "--out", str(out), "--db", url])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == str(out)
    (fig,) = _figures_json(out.read_text()).values()
    assert [t["y"] for t in fig["data"]] == [[0.5], [0.7]]  # runs grouped in one plot
    r = runner.invoke(
        app, ["report", "-k", "segmentation", "--last", "2", "-o", str(out), "--db", url]
    )
    assert r.exit_code == 0, r.output
    (fig,) = _figures_json(out.read_text()).values()
    assert [t["y"] for t in fig["data"]] == [[0.6], [0.7]]


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give evaluation ids"),
        (["99"], "no such evaluation"),
        (["1", "--kind", "x"], "not both"),
    ],
)
def test_cli_bad_input_exit_2(tmp_path, args, message):
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store(url) as st:
        st.save([Metric("Accuracy", 0.5)], kind="stats")
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", *args, "--out", str(out), "--db", url])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert not out.exists()


def test_scoring_tables_rebuilt_from_records_equal_rsmeval_layout():
    """The report's eval_short and eval_by_L1 (from stored records) equal ScoringTables'."""
    from datetime import UTC, datetime

    import pandas as pd
    from reportkit import scoring_frame

    from assay.report.scoring import tables
    from assay.scoring import scoring_tables
    from assay.store.records import Evaluation

    res = scoring_tables(
        scoring_frame(0), human="human", system="system", human2="human2", group_columns=["L1"]
    )
    ev = Evaluation(1, datetime.now(UTC), None, "scoring", None, None, {}, "finished", None,
                    "0", metrics=res.metrics)  # fmt: skip
    ours = {t["title"].split(" ")[0]: t for t in tables([ev])}
    short = res["eval_short"]
    assert ours["eval_short"]["columns"] == list(short.columns)
    got = pd.Series(ours["eval_short"]["rows"][0], index=list(short.columns), dtype=float)
    pd.testing.assert_series_equal(got, short.iloc[0].astype(float), check_names=False)
    by = ours["eval_by_L1"]
    n = by["columns"].index("N")
    rows = {(r[0], r[1]): r[n] for r in by["rows"]}
    for group, count in res["eval_by_L1"]["N"].items():
        assert rows[("system", str(group))] == count


def test_fairness_rates_by_crossed_groups():
    from datetime import UTC, datetime

    import pandas as pd

    from assay.fairness import evaluate_fairness
    from assay.store.records import Evaluation

    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame(
        {
            "label": rng.integers(0, 2, n),
            "pred": rng.integers(0, 2, n),
            "sex": rng.choice(["f", "m"], n),
            "race": rng.choice(["a", "b"], n),
        }
    )
    ms = evaluate_fairness(df, label="label", prediction="pred", group_columns=[["sex", "race"]])
    ev = Evaluation(1, datetime.now(UTC), None, "fairness", None, None, {}, "finished", None,
                    "0", metrics=ms)  # fmt: skip
    figs, _ = report_figures("fairness", [ev])
    (rates,) = [f for f in figs if f["layout"]["title"]["text"].startswith("Rates by group")]
    assert rates["layout"]["title"]["text"] == "Rates by group (sex × race)"
    sel = next(t for t in rates["data"] if t["name"] == "SelectionRate")
    want = df.assign(g=df["sex"] + " × " + df["race"]).groupby("g")["pred"].mean()
    assert dict(zip(sel["x"], sel["y"])) == pytest.approx(want.to_dict())


@pytest.mark.parametrize(
    "kind, type_, params",
    [
        ("llm_language", "Accuracy", {"language": "en"}),
        ("segmentation", "IOU", {"label_key": "class", "label_value": "road"}),
        ("fairness", "SelectionRate", {"group_column": "sex", "group": "f"}),
    ],
)
def test_records_with_intervals_get_error_bars(kind, type_, params):
    """Records carrying ci_low/ci_high (the interval keys) are drawn with their interval."""
    from datetime import UTC, datetime

    from assay.results import MetricSet
    from assay.store.records import Evaluation

    m = Metric(type_, 0.6, {**params, "ci_low": 0.5, "ci_high": 0.75, "confidence_level": 0.95})
    ev = Evaluation(1, datetime.now(UTC), None, kind, None, None, {}, "finished", None, "0",
                    metrics=MetricSet([m]))  # fmt: skip
    figs, _ = report_figures(kind, [ev])
    (trace,) = [t for f in figs for t in f["data"] if t.get("y") == [0.6]]
    err = trace["error_y"]
    assert err["array"] == pytest.approx([0.15]) and err["arrayminus"] == pytest.approx([0.1])


def test_per_class_bars_at_80_classes_and_10_runs_open_on_the_best_and_worst():
    """80 classes x 10 runs: 20 classes by default (the best 10 and the worst 10 by their mean
    over the runs), a menu for all and for each page of 20, intervals only where they exist."""
    from assay.report.figures import ranked_bars

    rng = np.random.default_rng(0)
    classes = [f"class {i:02d}" for i in range(80)]
    skill = rng.random(80)
    series = []
    for r in range(10):
        found = {}
        for c, s in zip(classes, skill):
            v = float(np.clip(s + rng.normal(0, 0.05), 0, 1))
            params = {"ci_low": v - 0.02, "ci_high": v + 0.02} if r == 0 else {}
            found[c] = Metric("AP", v, params)
        series.append((f"run {r}", found))
    fig = ranked_bars(series, "AP per class", x_title="class", y_title="AP", caption="iou")
    means = {c: np.mean([s[1][c].value for s in series]) for c in classes}
    order = sorted(classes, key=lambda c: -means[c])
    assert len(fig["data"]) == 10
    for t in fig["data"]:
        assert t["x"] == order[:10] + order[-10:]
    assert "error_y" in fig["data"][0] and all("error_y" not in t for t in fig["data"][1:])
    assert fig["data"][0]["error_y"]["thickness"] == 1
    (menu,) = fig["layout"]["updatemenus"]
    labels = [b["label"] for b in menu["buttons"]]
    assert labels == ["best 10 and worst 10", "all 80 classes"] + [
        f"classes {i + 1}-{i + 20} of 80" for i in range(0, 80, 20)
    ]
    every = menu["buttons"][1]["args"][0]["x"]
    assert every == [order] * 10
    assert fig["wide"] and fig["caption"] == "iou"


def test_run_names_and_models_as_the_reader_knows_them():
    """A stored name (the compare-runs branch adds one) names the run, else #id; a local
    weights path is never shown, the file's stem is."""
    from dataclasses import dataclass
    from datetime import UTC, datetime

    from assay.report.figures import run_label
    from assay.store.records import Evaluation

    ev = Evaluation(7, datetime.now(UTC), None, "llm_cat", "cat.json",
                    "embedded:/home/me/build/SmolLM2-135M-Instruct.Q8_0.gguf", {}, "finished",
                    None, "0", metrics=None)  # fmt: skip
    assert run_label(ev) == "#7 embedded:SmolLM2-135M-Instruct.Q8_0"

    @dataclass(frozen=True)
    class Named(Evaluation):
        name: str | None = None
        tags: tuple[str, ...] = ()

    named = Named(**{**ev.__dict__, "name": "baseline", "tags": ("smoke", "v2")})
    assert run_label(named) == "baseline embedded:SmolLM2-135M-Instruct.Q8_0"
    text = build_report([Named(**{**named.__dict__, "metrics": []})])
    assert "/home/me/build" not in text and ">baseline [smoke, v2]<" in text


def _paired_tables(text: str) -> list[list[list[str]]]:
    """The rows (cell texts) of each paired table on the page, in order."""
    out = []
    for body in re.findall(r'<table class="paired-table">.*?<tbody>(.*?)</tbody>', text, re.S):
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
        cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]
        out.append([[html.unescape(c) for c in row] for row in cells])
    return out


def test_runs_with_units_get_the_paired_comparison_of_assay_compare(tmp_path):
    """Two classification runs saved with their units on the same datums (and a third kept
    without units), reported through the CLI: each paired cell is comparison()'s."""
    import reportkit

    from assay.report.paired import REPORT_BOOTSTRAP
    from assay.store.comparison import comparison

    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store(url) as st:
        a = st.save(reportkit.classification(0), kind="classification", name="base")
        b = st.save(reportkit.classification(0, skill=2.0), kind="classification",
                    name="<b>better</b>")  # fmt: skip
        c = st.save(reportkit.classification(0, skill=1.7), kind="classification",
                    name="kept-no-units", units=False)  # fmt: skip
        want = comparison([a, b, c], store=st, num_bootstrap=REPORT_BOOTSTRAP, seed=0)
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", str(a), str(b), str(c), "-o", str(out), "--db", url])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "Paired comparison with the baseline base" in text
    assert f"{REPORT_BOOTSTRAP} paired resamples" in text and "docs/compare.md" in text
    # the notice of the run without units, as text; that run gets no paired table
    assert f"evaluation kept-no-units (#{c}): no units kept, compared unpaired" in text
    (rows,) = _paired_tables(text)
    assert len(rows) == len(want.rows) > 10
    tests = set()
    for got, w in zip(rows, want.rows):
        d, lo, hi = w[f"diff_{b}"], w[f"diff_ci_low_{b}"], w[f"diff_ci_high_{b}"]
        assert got[:2] == [w["type"], w["parameters"]]
        assert got[4] == f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]"
        assert got[5] == w[f"test_{b}"] and got[6] == str(w[f"n_paired_{b}"]) == "400"
        p = w[f"p_adjusted_{b}"]
        assert float(got[7]) == pytest.approx(p, rel=5e-3)
        tests.add(got[5])
    assert tests == {"mcnemar", "delong", "paired_bootstrap"}
    # highlighted exactly where the interval leaves out 0
    sig = re.findall(r'<td class="(up|down) sig">', text.split('class="paired-table"')[1])
    assert (
        len(sig)
        == sum(1 for w in want.rows if w[f"diff_ci_low_{b}"] > 0 or w[f"diff_ci_high_{b}"] < 0)
        > 0
    )
    # the forest plot: one point per record, the difference and its interval's ends
    figs = _figures_json(text)
    fid = next(k for k in figs if k.endswith("-paired"))
    (trace,) = figs[fid]["data"]
    assert "&lt;b&gt;better&lt;/b&gt;" in trace["name"] and "<b>" not in trace["name"]
    assert trace["x"] == [w[f"diff_{b}"] for w in want.rows]
    ends = zip(trace["x"], trace["error_x"]["arrayminus"], trace["error_x"]["array"])
    for (x, down, up), w in zip(ends, want.rows):
        assert x - down == pytest.approx(w[f"diff_ci_low_{b}"], abs=1e-12)
        assert x + up == pytest.approx(w[f"diff_ci_high_{b}"], abs=1e-12)
    (zero,) = figs[fid]["layout"]["shapes"]
    assert zero["x0"] == zero["x1"] == 0
    # the same runs without the store (or without units): nothing paired
    with Store(url) as st:
        assert "Paired comparison" not in build_report([st.get(a), st.get(b)])
        plain = st.save(reportkit.classification(1), kind="classification", units=False)
        assert "Paired comparison" not in build_report([st.get(c), st.get(plain)], store=st)
        # a baseline without units: only the notice says why nothing pairs
        text = build_report([st.get(c), st.get(b)], store=st)
    assert "no paired test" in text and "no units kept, compared unpaired" in text
    assert "paired-table" not in text and not any(
        k.endswith("-paired") for k in _figures_json(text)
    )


def test_forest_plot_of_many_records_keeps_those_furthest_from_zero(tmp_path):
    """Two detection runs (30 classes: hundreds of records) paired on their images: the
    forest plot draws FOREST_ROWS records, those whose difference lies furthest from 0 in
    half-widths of its interval, and says so; the table keeps every record."""
    from assay.detection import DetectionEvaluator, load_coco
    from assay.report.paired import FOREST_ROWS, REPORT_BOOTSTRAP
    from assay.store.comparison import comparison
    from assay.testing.detection import make_coco

    with Store(str(tmp_path / "s.db")) as st:
        ids = []
        for seed in (1, 2):
            gt, dt = make_coco(n_images=60, n_categories=30, dets_per_image=12, seed=seed)
            ids.append(st.save(DetectionEvaluator().add(load_coco(gt, dt)).compute(),
                               kind="detection"))  # fmt: skip
        want = comparison(ids, store=st, num_bootstrap=REPORT_BOOTSTRAP, seed=0)
        text = build_report([st.get(i) for i in ids], store=st)
    b = ids[1]
    rows = [w for w in want.rows if w[f"diff_ci_low_{b}"] is not None]
    assert len(rows) > 3 * FOREST_ROWS
    (fig,) = [f for k, f in _figures_json(text).items() if k.endswith("-paired")]
    assert fig["layout"]["title"]["text"].endswith(
        f"({FOREST_ROWS} of {len(rows)} records: furthest from 0)"
    )
    (trace,) = fig["data"]

    def far(w):
        lo, hi, d = w[f"diff_ci_low_{b}"], w[f"diff_ci_high_{b}"], w[f"diff_{b}"]
        return abs(d) / ((hi - lo) / 2) if hi > lo else (math.inf if d else 0.0)

    cut = sorted(map(far, rows), reverse=True)[FOREST_ROWS - 1]
    names = {f"{w['type']} {w['parameters']}": far(w) for w in rows}
    drawn = [html.unescape(c[0]) for c in trace["customdata"]]
    assert len(set(drawn)) == FOREST_ROWS and all(names[n] >= cut for n in drawn)
    (table_rows,) = _paired_tables(text)
    assert len(table_rows) == sum(1 for w in want.rows if w[f"diff_{b}"] is not None)
