"""``--format table`` shows what the JSON says, in every command: each test runs a command
twice (JSON, table), parses the table and finds every number of the JSON records in it, with
its interval (``0.8420 [0.8100, 0.8700]``) and its slice labelled; identifying parameters are
never cut off (no ``…``), even in an 80-column terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

WIDE = {"COLUMNS": "400"}
NUM = r"(-|-?\d+\.\d+)(?: \[(-?\d+\.\d+), (-?\d+\.\d+)\])?"
DEVBENCH = Path(__file__).resolve().parents[1] / "data" / "devbench"


def _both(argv, env=WIDE):
    runner = CliRunner()
    js = runner.invoke(app, argv)
    assert js.exit_code == 0, js.output
    if "--out-dir" in argv:  # a second folder for the second run
        i = argv.index("--out-dir") + 1
        argv = [*argv[:i], argv[i] + "-table", *argv[i + 1 :]]
    table = runner.invoke(app, [*argv, "--format", "table"], env=env)
    assert table.exit_code == 0, table.output
    return json.loads(js.stdout), table.stdout


def _cell(text):
    """``(value, lo, hi)`` of a cell ``0.8420 [0.8100, 0.8700]`` (``None`` for ``-``)."""
    m = re.fullmatch(NUM, text.strip())
    assert m, text
    val = None if m.group(1) == "-" else float(m.group(1))
    lo, hi = (None, None) if m.group(2) is None else (float(m.group(2)), float(m.group(3)))
    return val, lo, hi


def _same(cell, record, tol):
    val, lo, hi = _cell(cell)
    p = record["parameters"]
    if record["value"] is None:
        assert val is None, (cell, record)
        return
    assert val == pytest.approx(record["value"], abs=tol), (cell, record)
    if "ci_low" in p and p["ci_low"] is not None:
        want = (pytest.approx(p["ci_low"], abs=tol), pytest.approx(p["ci_high"], abs=tol))
        assert (lo, hi) == want, (cell, record)
    else:
        assert lo is None, (cell, record)


def _rows(text):
    """The body rows of every rich table in ``text``, as lists of stripped cells."""
    return [
        [c.strip() for c in line.split("│")[1:-1]]
        for line in text.splitlines()
        if line.startswith("│")
    ]


def _generic(records, text, tol=5e-5):
    """Every record of the one-row-per-record table: type, identifying parameters, value."""
    rows = _rows(text)
    checked = 0
    for r in records:
        if not isinstance(r["value"], (int, float, type(None))):
            continue
        p = r["parameters"]
        wanted = [f"{k}={v}" for k, v in p.items() if isinstance(v, str) and k != "undefined"]
        found = [row for row in rows if row[0] == r["type"] and all(w in row[1] for w in wanted)]
        assert found, (r, wanted)
        if r["value"] is None:
            assert any(row[2].startswith("undefined") for row in found), r
        else:
            assert any(_matches(row[2], r, tol) for row in found), (r, found)
        checked += 1
    return checked


def _matches(cell, record, tol):
    try:
        _same(cell, record, tol)
    except AssertionError:
        return False
    return True


# --- classification: the report, per slice, with intervals --------------------------------


@pytest.fixture
def long_form(tmp_path):
    gt, pr = tmp_path / "gt.csv", tmp_path / "pr.csv"
    rows, preds = ["uid,value,site"], ["uid,value,score"]
    for i in range(24):
        truth = "ab"[i % 2]
        s = ((i * 37) % 100) / 100
        rows.append(f"d{i},{truth},{'ns'[i % 3 == 0]}")
        preds += [f"d{i},a,{s}", f"d{i},b,{1 - s:.2f}"]
    gt.write_text("\n".join(rows) + "\n")
    pr.write_text("\n".join(preds) + "\n")
    return ["classification", "--groundtruths", str(gt), "--predictions", str(pr)]


def test_classification_report_labels_slices_and_shows_intervals(long_form):
    argv = [*long_form, "--by", "site", "--metadata-columns", "site", "--ci", "0.9",
            "--num-bootstrap", "100",
            "--metrics", "Counts,Precision,Recall,F1,Accuracy"]  # fmt: skip
    records, text = _both(argv)
    blocks = re.split(r"^label key 'class', score threshold 0\.0", text, flags=re.M)[1:]
    assert len(blocks) == 3  # the whole set, then slices n and s
    by_title = {}
    for b in blocks:
        title, _, body = b.partition("\n")
        by_title[title.strip(", ")] = body
    assert set(by_title) == {"", "slice site=n, n=16", "slice site=s, n=8"}
    checked = 0
    for r in records:
        p = r["parameters"]
        title = f"slice site={p['slice']}, n={p['n']}" if "slice" in p else ""
        body = by_title[title]
        if r["type"] in ("Precision", "Recall", "F1"):
            line = next(
                x for x in body.splitlines() if x.strip().startswith(p["label_value"] + " ")
            )
            cells = re.findall(NUM, line.strip()[2:])
            col = ("Precision", "Recall", "F1").index(r["type"])
            cell = cells[col][0] + (f" [{cells[col][1]}, {cells[col][2]}]" if cells[col][1] else "")
            _same(cell, r, 0.0051)
            checked += 1
        elif r["type"] == "Accuracy":
            line = next(x for x in body.splitlines() if x.strip().startswith("accuracy"))
            (c,) = re.findall(NUM + r"\s+\S+$", line)[:1]
            _same(c[0] + (f" [{c[1]}, {c[2]}]" if c[1] else ""), r, 0.0051)
            checked += 1
    assert checked == 3 * (3 * 2 + 1)


# --- fairness: grids with intervals, slices labelled ---------------------------------------


def test_fairness_tables_show_intervals_and_slices(tmp_path):
    data = tmp_path / "f.csv"
    lines = ["y,yhat,L1,site"]
    for i in range(30):
        lines.append(f"{i % 2},{(i // 2) % 2},{['en', 'fr', 'de'][i % 3]},{'ab'[i % 4 == 0]}")
    data.write_text("\n".join(lines) + "\n")
    argv = ["fairness", "--data", str(data), "--label", "y", "--prediction", "yhat",
            "--group", "L1", "--by", "site", "--ci", "0.9", "--num-bootstrap", "100"]  # fmt: skip
    records, text = _both(argv)
    rows = _rows(text)
    headers = ["SelectionRate", "TruePositiveRate", "FalsePositiveRate", "Accuracy"]
    checked = 0
    for r in records:
        p = r["parameters"]
        if "slice" in p:
            row = next(x for x in rows if x[0] == p["slice"] and x[2].startswith(r["type"] + " "))
            _same(row[3], r, 5e-5)
            assert row[1] == str(p["n"])
        elif r["type"] in headers and "group" in p:
            row = next(x for x in rows if x[0] == p["group"] and len(x) == 6)
            _same(row[2 + headers.index(r["type"])], r, 5e-5)
        else:
            continue
        checked += 1
    assert checked == 3 * 4 + 2 * 4


# --- detection: the summary and the per-class headline; every record with --all-records ---


@pytest.fixture
def coco_files(tmp_path):
    from assay.testing.detection import make_coco

    gt, dt = make_coco(12, n_categories=3, dets_per_image=10, seed=1)
    g, d = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dt))
    return ["detection", "--groundtruths", str(g), "--predictions", str(d)]


def test_detection_table_is_the_summary_and_the_per_class_headline(coco_files):
    records, text = _both([*coco_files, "--ci", "0.9", "--num-bootstrap", "50"])
    assert len(text.splitlines()) < 40
    rows = _rows(text)
    names = {"mAPAveragedOverIOUs": "mAP@[.5:.95]", "mAR": "mAR (score >= 0)"}
    for r in records:
        if r["type"] in names:
            (row,) = [x for x in rows if x[1] == names[r["type"]]]
            _same(row[2], r, 5e-5)
        elif r["type"] == "mAP" and r["parameters"]["iou_threshold"] in (0.5, 0.75):
            name = f"mAP@{str(r['parameters']['iou_threshold'])[1:]}"
            (row,) = [x for x in rows if x[1] == name]
            _same(row[2], r, 5e-5)
        elif r["type"] == "APAveragedOverIOUs":
            (row,) = [x for x in rows if len(x) == 6 and x[1] == r["parameters"]["label_value"]]
            _same(row[2], r, 5e-5)
    assert "not shown:" in text and "--all-records" in text


def test_detection_all_records_lists_every_record(coco_files):
    records, text = _both([*coco_files, "--all-records"])
    assert _generic(records, text) == sum(
        isinstance(r["value"], (int, float, type(None))) for r in records
    )


# --- the commands with the one-row-per-record table -----------------------------------------


def test_stats_table(tmp_path):
    scores = tmp_path / "s.jsonl"
    scores.write_text("".join(
        json.dumps({"sample_id": f"s{i}", "value": i % 3 == 0,
                    "sample_metadata": {"topic": "ab"[i % 2]}}) + "\n" for i in range(20)
    ))  # fmt: skip
    argv = ["stats", "--scores", str(scores), "--ci", "0.9", "--metric", "accuracy",
            "--metric", 'grouped(accuracy, "topic")']  # fmt: skip
    records, text = _both(argv)
    assert _generic(records, text) == len(records) == 4


def test_segmentation_table_with_slices_and_intervals(tmp_path):
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    gts, prs = [], []
    for i in range(6):
        gts.append({"uid": f"u{i}", "height": 4, "width": 4, "metadata": {"site": "ab"[i % 2]},
                    "annotations": [{"label": "road", "box": [0, 0, 4, 2]},
                                    {"label": "sky", "box": [0, 2, 4, 4]}]})  # fmt: skip
        prs.append(
            {"uid": f"u{i}", "annotations": [{"label": "road", "box": [0, 0, 4, 1 + i % 3]}]}
        )
    g.write_text("".join(json.dumps(x) + "\n" for x in gts))
    p.write_text("".join(json.dumps(x) + "\n" for x in prs))
    argv = ["segmentation", "--groundtruths", str(g), "--predictions", str(p), "--by", "site",
            "--ci", "0.9", "--num-bootstrap", "50", "--metrics", "IOU,mIOU"]  # fmt: skip
    records, text = _both(argv)
    assert any("slice" in r["parameters"] for r in records)
    assert _generic(records, text) == len(records)


def test_text_table(tmp_path):
    data = tmp_path / "t.jsonl"
    data.write_text("".join(
        json.dumps({"uid": str(i), "prediction": f"the cat sat {i}", "groundtruth": "the cat sat",
                    "topic": "ab"[i % 2]}) + "\n" for i in range(8)
    ))  # fmt: skip
    argv = ["text", "--data", str(data), "--metrics", "rouge", "--by", "topic"]
    records, text = _both(argv)
    assert _generic(records, text) == len(records)


def test_pairwise_score_table(tmp_path):
    argv = ["pairwise", "score", "--records", str(DEVBENCH / "record_gpt-4-1106-preview_2.tsv"),
            "--reference-model", "gpt-3.5-turbo-1106", "--nopt", "2",
            "--out-dir", str(tmp_path)]  # fmt: skip
    runner = CliRunner()
    js = runner.invoke(app, argv)
    assert js.exit_code == 0, js.output
    (tmp_path / "t").mkdir()
    argv[-1] = str(tmp_path / "t")
    table = runner.invoke(app, [*argv, "--format", "table"], env=WIDE)
    assert table.exit_code == 0, table.output
    records = json.loads(js.stdout)
    assert _generic(records, table.stdout) >= 10


def test_nothing_is_cut_off_in_80_columns(long_form, coco_files, tmp_path):
    for argv in ([*coco_files, "--all-records"], [*coco_files]):
        _, text = _both(argv, env={"COLUMNS": "80"})
        assert "…" not in text


def test_scoring_table_shows_the_intervals_and_slices(tmp_path):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1)
    h = rng.integers(1, 5, 120)
    s = np.clip(h + rng.normal(0, 0.8, 120), 1, 4)
    data = tmp_path / "sc.csv"
    pd.DataFrame({"h": h, "s": s, "g": rng.choice(["a", "b"], 120)}).to_csv(data, index=False)
    base = ["scoring", "--data", str(data), "--human", "h", "--system", "s", "--ci", "0.9",
            "--num-bootstrap", "50", "--by", "g"]  # fmt: skip
    records, text = _both([*base, "--out-dir", str(tmp_path / "a")])
    shown = [r for r in records if {"ci_low", "slice_column"} & set(r["parameters"])]
    assert len(shown) > 10 and any("slice_column" in r["parameters"] for r in shown)
    assert _generic(shown, text) == len(shown)
