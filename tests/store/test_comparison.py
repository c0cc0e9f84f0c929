"""``assay.store.compare`` and ``assay compare`` on runs whose differences are known."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.classification import evaluate_classification
from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.results import Metric
from assay.store import Store, compare
from assay.text import evaluate_text

runner = CliRunner()
N = 40


def _classification(n_right: int):
    """N datums, truth alternating a/b; the first ``n_right`` predictions are right."""
    truth = np.where(np.arange(N) % 2 == 0, "a", "b")
    pred = np.where(np.arange(N) < n_right, truth, np.where(truth == "a", "b", "a"))
    gts = pd.DataFrame({"uid": range(N), "value": truth})
    pds = pd.DataFrame({"uid": range(N), "value": pred, "score": 0.9})
    return evaluate_classification(gts, pds, score_thresholds=[0.5])


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'c.db'}"


def test_accuracy_difference_is_the_number_of_fixed_predictions(url):
    with Store(url) as st:
        a = st.save(_classification(20), kind="classification", dataset="d", model="a")
        b = st.save(_classification(30), kind="classification", dataset="d", model="b")
        df = compare([a, b], store=st)
    acc = df[(df["type"] == "Accuracy")].iloc[0]
    assert acc["parameters"] == "label_key=class, score_threshold=0.5"
    assert acc[f"value_{a}"] == 0.5 and acc[f"value_{b}"] == 0.75
    assert acc[f"diff_{b}"] == pytest.approx(10 / N)
    assert acc[f"overlap_{b}"] is None  # no intervals in classification records
    # every scalar record is matched: same types and parameters in both runs
    assert df[f"value_{a}"].notna().sum() == df[f"value_{b}"].notna().sum() == len(df)
    rec = df[(df["type"] == "Recall") & df["parameters"].str.contains("label_value=a,")]
    # label a: 10 of its 20 datums right in run a (the first 20 datums), 15 in run b
    assert rec[f"diff_{b}"].iloc[0] == pytest.approx(0.25)
    assert not any(t in set(df["type"]) for t in ("Counts", "PrecisionRecallCurve"))
    assert {k: df.attrs[k] for k in ("runs", "baseline")} == {"runs": [a, b], "baseline": a}


def _text(preds):
    refs = [["the cat sat on the mat"], ["a dog ran in the park"], ["rain fell all day"]] * 4
    return evaluate_text(preds, refs, uids=[str(i) for i in range(12)])


def test_interval_overlap_from_ci_keys(url):
    refs = ["the cat sat on the mat", "a dog ran in the park", "rain fell all day"] * 4
    wrong = ["bananas are yellow", "stocks fell sharply", "a new phone launched"] * 4
    with Store(url) as st:
        good = st.save(_text(refs), kind="text")
        same = st.save(_text(refs), kind="text")
        bad = st.save(_text(wrong), kind="text")
        df = compare([good, same, bad], store=st)
    row = df[(df["type"] == "ROUGE") & (df["parameters"].str.contains("aggregate=mean"))]
    row = row[row["parameters"].str.contains("rouge_type=rouge1")].iloc[0]
    assert row[f"value_{good}"] == 1.0 and row[f"value_{bad}"] == 0.0
    assert row[f"diff_{same}"] == 0.0 and row[f"overlap_{same}"] is True
    assert row[f"diff_{bad}"] == -1.0 and row[f"overlap_{bad}"] is False
    assert row[f"ci_low_{good}"] == row[f"ci_high_{good}"] == 1.0
    # n, stderr, the interval and the bootstrap settings do not split records apart
    assert "n=" not in row["parameters"] and "ci_low" not in row["parameters"]


def test_records_only_in_one_run_and_duplicates(url):
    with Store(url) as st:
        a = st.save([Metric("Mean", 0.5, {"group": "x"}), Metric("Mean", 0.1)], kind="stats")
        b = st.save(
            [Metric("Mean", 0.7, {"group": "x", "n": 3}), Metric("Mean", 0.2),
             Metric("Mean", 0.3), Metric("Var", None, {"undefined": "one score"})],
            kind="stats",
        )  # fmt: skip
        df = compare([a, b], store=st).set_index(["type", "parameters"])
    assert df.loc[("Mean", "group=x"), f"diff_{b}"] == pytest.approx(0.2)
    assert df.loc[("Mean", ""), f"diff_{b}"] == pytest.approx(0.1)
    assert df.loc[("Mean", " (#2)"), f"value_{a}"] is None
    assert df.loc[("Var", ""), f"value_{b}"] is None  # undefined stays undefined
    assert df.loc[("Var", ""), f"diff_{b}"] is None


def test_bad_calls(url):
    with Store(url) as st:
        a = st.save([Metric("Accuracy", 0.5)], kind="classification")
        with pytest.raises(InvalidInputError, match="at least two runs"):
            compare([a], store=st)
        with pytest.raises(InvalidInputError, match="named twice"):
            compare([a, a], store=st)
        with pytest.raises(InvalidInputError, match="no such evaluation"):
            compare([a, 999], store=st)
    with pytest.raises(InvalidInputError, match="needs store"):
        compare([1, 2])


def test_cli_formats_and_selection(url):
    with Store(url) as st:
        ids = [
            st.save(_classification(k), kind="classification", dataset="d", model=f"m{k}")
            for k in (10, 20, 30)
        ]
        st.save(_classification(40), kind="classification", dataset="other")
    r = runner.invoke(app, ["compare", str(ids[0]), str(ids[2]), "--db", url, "-f", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["baseline"] == ids[0] and out["runs"] == [ids[0], ids[2]]
    (acc,) = [x for x in out["rows"] if x["type"] == "Accuracy"]
    assert acc[f"diff_{ids[2]}"] == pytest.approx(0.5)

    # --kind/--dataset/--last: the newest N finished runs of that dataset, oldest first
    r = runner.invoke(
        app, ["compare", "-k", "classification", "-d", "d", "--last", "2", "--db", url, "-f", "csv"]
    )
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    (acc,) = [x for x in rows if x["type"] == "Accuracy"]
    assert float(acc[f"diff_{ids[2]}"]) == pytest.approx(0.25)
    assert f"value_{ids[0]}" not in acc

    r = runner.invoke(
        app, ["compare", str(ids[0]), str(ids[1]), "--db", url, "-f", "table"],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "+0.2500" in r.stdout and "Accuracy" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["1"], "at least two runs"),
        (["1", "2", "--kind", "classification"], "not both"),
        (["--kind", "classification"], "--last"),
        (["--kind", "nothing", "--last", "2"], "no finished evaluation"),
        (["1", "77"], "no such evaluation"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(url, args, message):
    with Store(url) as st:
        for k in (1, 2):
            st.save([Metric("Accuracy", k / 4)], kind="classification")
    r = runner.invoke(app, ["compare", *args, "--db", url])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
