"""``assay text --human-labels`` on judge metrics: a PPI++ record per judged mean equal to
ppi-python on the same arrays, a JudgeAgreement record, the caution of the 135M judge and of
a weak judge; bad labels: one line, exit 2, no call paid (the scripted loopback judge)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from judgekit import counts, verdicts
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.caution import DEMO_JUDGE
from assay.uncertainty.ppi import ppi_cluster_interval

ppi_py = pytest.importorskip("ppi_py")
runner = CliRunner()
N = 30


def _data(tmp: Path) -> Path:
    rows = []
    for i in range(N):
        claims = " ".join(f"Part {i} {k} {'bad' if k < i % 3 else 'ok'}." for k in range(3))
        rows.append({"uid": f"u{i}", "query": f"Q{i}?", "prediction": claims,
                     "groundtruth": f"Ref {i}.", "context": [f"C{i}."], "doc": i % 6})  # fmt: skip
    p = tmp / "t.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _faithful(text: str, attempt: int) -> str:
    """'no' for each claim that says bad: the judged faithfulness varies by datum."""
    (n,) = counts(text)
    claims = [line for line in text.splitlines() if line.strip().startswith(("-", "1", "2", "3"))]
    bad = [("bad" in c) for c in claims[-n:]] if len(claims) >= n else [False] * n
    return verdicts(*["no" if b else "yes" for b in bad])


def _truth(i: int) -> float:
    return (3 - i % 3) / 3 + (0.2 if i % 5 == 0 else 0.0)


def _labels(tmp: Path, rows: list[dict], name: str = "l.jsonl") -> Path:
    p = tmp / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _run(scripted, data: Path, *args: str) -> tuple[int, str, str, list[dict]]:
    r = runner.invoke(
        app, ["text", "--data", str(data), "--metrics", "faithfulness", "-m",
              scripted.server.spec(), "-q", "--no-cache", *args],
    )  # fmt: skip
    records = json.loads(r.stdout) if r.exit_code == 0 else []
    return r.exit_code, r.stdout, r.stderr, records


def test_ppi_record_equals_ppi_python(scripted, tmp_path: Path) -> None:
    scripted.rules["faithfulness"] = _faithful
    data = _data(tmp_path)
    labelled = list(range(1, N, 2))
    labels = _labels(tmp_path, [{"id": f"u{i}", "faithfulness": _truth(i)} for i in labelled])
    code, out, err, records = _run(scripted, data, "--human-labels", str(labels), "--ci", "0.9")
    assert code == 0, out + err
    per = {r["parameters"]["datum_uid"]: r["value"] for r in records
           if r["type"] == "Faithfulness" and "datum_uid" in r["parameters"]}  # fmt: skip
    judged = np.array([per[f"u{i}"] for i in range(N)])
    assert np.ptp(judged) > 0  # the judge varies
    [ppi] = [r for r in records if r["parameters"].get("estimator") == "ppi"]
    rest = [i for i in range(N) if i not in labelled]
    y = np.array([_truth(i) for i in labelled])
    want = ppi_py.ppi_mean_pointestimate(y, judged[labelled], judged[rest])
    lo, hi = ppi_py.ppi_mean_ci(y, judged[labelled], judged[rest], alpha=0.1)
    p = ppi["parameters"]
    assert ppi["type"] == "Faithfulness" and p["metric"] == "faithfulness"
    assert ppi["value"] == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    assert (p["n_labeled"], p["n_unlabeled"], p["ci_method"]) == (15, 15, "ppi")
    [agree] = [r for r in records if r["type"] == "JudgeAgreement"]
    assert agree["parameters"]["n"] == 15
    lo_mae, hi_mae = agree["parameters"]["measure_ci"]["mae"]
    assert lo_mae <= agree["value"]["mae"] <= hi_mae
    assert "caution" not in err  # a fake-model judge agreeing well: no caution


def test_cluster_bootstrap_and_weak_judge_caution(scripted, tmp_path: Path) -> None:
    scripted.rules["faithfulness"] = _faithful
    data = _data(tmp_path)
    labelled = list(range(0, N, 2))
    rng = np.random.default_rng(0)
    noise = rng.random(N)  # labels unrelated to the judge: a weak judge
    labels = _labels(tmp_path, [{"id": f"u{i}", "value": float(noise[i])} for i in labelled])
    args = ["--human-labels", str(labels), "--ci", "0.95", "--cluster", "doc",
            "--num-bootstrap", "200", "--seed", "3"]  # fmt: skip
    code, out, err, records = _run(scripted, data, *args)
    assert code == 0, out + err
    per = {r["parameters"]["datum_uid"]: r["value"] for r in records
           if r["type"] == "Faithfulness" and "datum_uid" in r["parameters"]}  # fmt: skip
    judged = np.array([per[f"u{i}"] for i in range(N)])
    rest = [i for i in range(N) if i not in labelled]
    docs = np.array([str(i % 6) for i in range(N)])
    codes = np.unique(docs, return_inverse=True)[1]
    want = ppi_cluster_interval(noise[labelled], judged[labelled], judged[rest],
                                codes[labelled], codes[rest], level=0.95, num_bootstrap=200,
                                seed=3)  # fmt: skip
    [ppi] = [r for r in records if r["parameters"].get("estimator") == "ppi"]
    p = ppi["parameters"]
    assert p["ci_method"] == "ppi_cluster_bootstrap" and p["cluster"] == "doc"
    assert (ppi["value"], p["ci_low"], p["ci_high"]) == pytest.approx(
        (want.estimate, want.ci_low, want.ci_high), abs=1e-12
    )
    [agree] = [r for r in records if r["type"] == "JudgeAgreement"]
    assert agree["parameters"]["cluster"] == "doc"
    assert "judge_caution" in agree["parameters"]
    assert err.count("caution:") == 1 and "faithfulness" in err
    [agg] = [r for r in records if r["parameters"].get("aggregate") == "mean"
             and "estimator" not in r["parameters"] and "slice" not in r["parameters"]]  # fmt: skip
    assert "agrees weakly" in agg["parameters"]["judge_caution"]


def test_the_135m_judge_is_cautioned_and_recorded(scripted, tmp_path: Path) -> None:
    scripted.server.model = "smollm2-135m-instruct"  # what `assay serve` serves
    try:
        db = str(tmp_path / "s.db")
        code, out, err, records = _run(scripted, _data(tmp_path), "--save", "--db", db)
    finally:
        scripted.server.model = "fake-model"
    assert code == 0, out + err
    assert [line for line in err.splitlines() if "caution:" in line] == [f"caution: {DEMO_JUDGE}"]
    aggs = [r for r in records if r["parameters"].get("aggregate") == "mean"]
    assert aggs and all(r["parameters"]["judge_caution"] == DEMO_JUDGE for r in aggs)
    shown = runner.invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["parameters"]["judge_caution"] == DEMO_JUDGE


@pytest.mark.parametrize(
    ("rows", "needles"),
    [
        ([{"id": "u1", "value": 1}, {"id": "zz", "value": 0}, {"id": "yy", "value": 0}],
         ["'zz'", "not a judged item", "1 more"]),
        ([{"id": "u1", "value": 1}, {"id": "u1", "value": 0}], ["'u1'", "twice"]),
        ([{"id": "u1", "faithfulness": "good"}], ["'good'", "expected a number"]),
        ([{"id": "u1", "coherence": 1}], ["'coherence'", "names no judged metric"]),
        ([{"id": "u1", "value": None}], ["no judged item has a label"]),
    ],
    ids=["unknown id", "duplicated id", "non-numeric", "no judged metric", "nothing labelled"],
)  # fmt: skip
def test_bad_labels_one_line_exit_2_no_call(scripted, tmp_path, rows, needles) -> None:
    labels = _labels(tmp_path, rows, "labels.jsonl")
    code, out, err, _ = _run(scripted, _data(tmp_path), "--human-labels", str(labels))
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "labels.jsonl" in lines[0] and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]
    assert scripted.server.calls == 0
