"""`assay stats --human-labels FILE`: a PPI++ record per mean with labels, equal to
ppi-python on the same arrays; bad labels one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from assay.cli.main import app
from contract import documented_parameters

ppi_py = pytest.importorskip("ppi_py")
runner = CliRunner()


def _judged(tmp: Path, n: int = 80, seed: int = 0, dict_scores: bool = False) -> tuple:
    rng = np.random.default_rng(seed)
    human = rng.normal(3.0, 1.0, n)
    judge = 0.8 * human + 0.7 + rng.normal(0.0, 0.5, n)
    rows = []
    for i in range(n):
        value = {"q": float(judge[i]), "ok": int(judge[i] > 3)} if dict_scores else float(judge[i])
        rows.append({"sample_id": f"s{i}", "value": value, "sample_metadata": {"doc": i % 9}})
    rows.append({"sample_id": "failed", "value": None})
    p = tmp / "scores.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p, human, judge


def _run(*args: str) -> tuple[int, str, list[dict]]:
    res = runner.invoke(app, ["stats", *args, "--format", "json"])
    if res.exit_code != 0:
        return res.exit_code, res.output, []
    return 0, res.output, json.loads(res.stdout)


def _agreement(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "JudgeAgreement"]


def _ppi(records: list[dict]) -> list[dict]:
    return [r for r in records if r["parameters"].get("estimator") == "ppi"]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_ppi_record_equals_ppi_python(tmp_path: Path, suffix: str) -> None:
    scores, human, judge = _judged(tmp_path)
    labelled = np.arange(0, 80, 4)  # 20 of 80 labelled
    df = pd.DataFrame({"id": [f"s{i}" for i in labelled], "value": human[labelled]})
    labels = tmp_path / f"labels{suffix}"
    {
        ".jsonl": lambda: df.to_json(labels, orient="records", lines=True),
        ".csv": lambda: df.to_csv(labels, index=False),
        ".parquet": lambda: df.to_parquet(labels),
    }[suffix]()
    code, out, records = _run("--scores", str(scores), "--human-labels", str(labels))
    assert code == 0, out
    [rec] = _ppi(records)
    judged_mean = next(r for r in records if r["type"] == "Mean" and r not in _ppi(records))
    assert judged_mean["value"] == pytest.approx(judge.mean())
    rest = np.setdiff1d(np.arange(80), labelled)
    want = ppi_py.ppi_mean_pointestimate(human[labelled], judge[labelled], judge[rest])
    lo, hi = ppi_py.ppi_mean_ci(human[labelled], judge[labelled], judge[rest], alpha=0.05)
    p = rec["parameters"]
    assert rec["type"] == "Mean"
    assert rec["value"] == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    assert (p["n_labeled"], p["n_unlabeled"], p["n"]) == (20, 60, 80)
    assert p["confidence_level"] == 0.95 and p["ci_method"] == "ppi"
    assert p["reducer"] == "mean" and p["n_failed"] == 1
    assert not set(p) - documented_parameters()  # docs/records.md lists every key
    [agree] = _agreement(records)  # numeric values: correlations and MAE
    v = agree["value"]
    assert agree["parameters"]["n"] == 20 and "agreement" not in v
    assert v["pearson"] == pytest.approx(sps.pearsonr(human[labelled], judge[labelled])[0])
    assert v["spearman"] == pytest.approx(sps.spearmanr(human[labelled], judge[labelled])[0])
    assert v["mae"] == pytest.approx(np.mean(np.abs(human[labelled] - judge[labelled])))


def test_accuracy_and_agreement_on_verdicts(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    human = (rng.random(60) < 0.6).astype(int)
    judge = np.where(rng.random(60) < 0.8, human, 1 - human)
    rows = [{"sample_id": i, "value": "C" if j else "I"} for i, j in enumerate(judge)]
    scores = tmp_path / "verdicts.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"id": range(0, 60, 3), "value": human[::3].astype(bool)}).to_csv(
        labels, index=False
    )
    code, out, records = _run(
        "--scores", str(scores), "--metric", "accuracy", "--human-labels", str(labels)
    )
    assert code == 0, out
    [rec] = _ppi(records)
    assert rec["type"] == "Accuracy"
    rest = np.setdiff1d(np.arange(60), np.arange(0, 60, 3))
    want = ppi_py.ppi_mean_pointestimate(human[::3], judge[::3], judge[rest])
    assert rec["value"] == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    [agree] = _agreement(records)
    assert agree["value"]["agreement"] == pytest.approx(np.mean(human[::3] == judge[::3]))
    assert agree["value"]["cohen_kappa"] == pytest.approx(cohen_kappa_score(human[::3], judge[::3]))


def test_dict_scores_label_columns_and_ci_level(tmp_path: Path) -> None:
    scores, human, judge = _judged(tmp_path, dict_scores=True)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"id": f"s{i}", "q": float(human[i])}) + "\n" for i in range(0, 80, 2))
    )
    code, out, records = _run(
        "--scores", str(scores), "--human-labels", str(labels), "--ci", "0.9", "--ci-method", "t"
    )
    assert code == 0, out
    [rec] = _ppi(records)  # "ok" has no label column: no PPI record
    assert rec["parameters"]["score_key"] == "q"
    lo, hi = ppi_py.ppi_mean_ci(human[::2], judge[::2], judge[1::2], alpha=0.1)
    p = rec["parameters"]
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    assert p["confidence_level"] == 0.9


def test_cluster_bootstrap_record(tmp_path: Path) -> None:
    scores, human, _ = _judged(tmp_path)
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"id": [f"s{i}" for i in range(0, 80, 3)], "value": human[::3]}).to_csv(
        labels, index=False
    )
    args = ["--scores", str(scores), "--human-labels", str(labels), "--ci", "0.95"]
    code, out, records = _run(*args, "--cluster", "doc", "--num-bootstrap", "300")
    assert code == 0, out
    [rec] = _ppi(records)
    p = rec["parameters"]
    assert p["ci_method"] == "ppi_cluster_bootstrap" and p["cluster"] == "doc"
    assert p["num_bootstrap"] == 300 and p["ci_low"] < rec["value"] < p["ci_high"]
    again = _run(*args, "--cluster", "doc", "--num-bootstrap", "300")[2]
    assert _ppi(again) == [rec]  # seeded


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ('{"id": "s1", "value": 1}\n{"id": "zz", "value": 2}\n', ["'zz'", "not a sample"]),
        ('{"id": "s1", "value": 1}\n{"id": "s1", "value": 2}\n', ["'s1'", "twice", "field 'id'"]),
        ('{"id": "s1", "value": "good"}\n', ["'good'", "expected a number", "value"]),
        ('{"id": "failed", "value": 1}\n', ["no labelled sample has a judged score"]),
        ('{"value": 1}\n', ["missing column", "id"]),
        ('{"id": "s1", "score": 1}\n', ["'score'", "no score column"]),
    ],
    ids=["unknown id", "duplicated id", "non-numeric", "no judged item", "no id", "bad column"],
)
def test_bad_labels_one_line_exit_2(tmp_path: Path, content: str, needles: list[str]) -> None:
    scores, _, _ = _judged(tmp_path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(content)
    res = runner.invoke(app, ["stats", "--scores", str(scores), "--human-labels", str(labels)])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output
    assert "labels.jsonl" in lines[0]
    for needle in needles:
        assert needle in lines[0]


def test_missing_labels_file_is_named(tmp_path: Path) -> None:
    scores, _, _ = _judged(tmp_path)
    res = runner.invoke(
        app, ["stats", "--scores", str(scores), "--human-labels", str(tmp_path / "no.jsonl")]
    )
    assert res.exit_code == 2 and "--human-labels" in res.output
