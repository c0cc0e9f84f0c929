"""``assay llm language --human-labels``: a PPI++ Accuracy record from the per-item grading
and the human labels, equal to ppi-python on the same arrays; a JudgeAgreement; bad labels
and suites without per-item scores: one line, exit 2, no call paid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer

ppi_py = pytest.importorskip("ppi_py")
runner = CliRunner()
EXAM = Path(__file__).parents[2] / "src" / "assay" / "llm" / "suites" / "data" / "exam.sample.csv"


def _first_option(messages: list[dict]) -> str:
    lines = [ln for ln in str(messages[-1]["content"]).splitlines() if ln.strip()]
    return json.dumps({"choice": lines[2]})  # instruction, question, then the options


def _run(srv: FakeChatServer, tmp: Path, labels: list[dict], *extra: str):
    path = tmp / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in labels))
    out = tmp / "out.json"
    r = runner.invoke(
        app,
        ["llm", "language", "--sample", "-m", srv.spec(), "--no-cache", "--no-save",
         "--answer-mode", "generate", "--human-labels", str(path), "--out", str(out), *extra],
    )  # fmt: skip
    return r, out


def test_ppi_accuracy_equals_ppi_python(tmp_path: Path) -> None:
    exam = pd.read_csv(EXAM)
    n = len(exam)
    labelled = [i for i in range(n) if i % 2 == 0]
    truth = {i: float(i % 3 != 0) for i in labelled}  # the human's grading
    labels = [{"id": str(i), "accuracy": truth[i]} for i in labelled]
    with FakeChatServer(responder=_first_option) as srv:
        r, out = _run(srv, tmp_path, labels, "--ci", "0.9")
        assert r.exit_code == 0, r.output
        asked = [q["messages"] for q in srv.requests]
    records = json.loads(out.read_text())
    graded = {}
    for msgs in asked:  # the suite's grading of each item, from what the judge was asked
        text = msgs[-1]["content"]
        row = next(i for i, q in enumerate(exam["question"]) if f"\n{q}\n" in text)
        picked = json.loads(_first_option(msgs))["choice"]
        options = json.loads(exam["options"][row])
        graded[row] = float(picked == options[int(exam["answer"][row])])
    assert 0 < sum(graded.values()) < n  # the grading varies
    y = np.array([truth[i] for i in labelled])
    yhat = np.array([graded[i] for i in labelled])
    rest = np.array([graded[i] for i in range(n) if i not in truth])
    [ppi] = [m for m in records if m["parameters"].get("estimator") == "ppi"]
    p = ppi["parameters"]
    want = ppi_py.ppi_mean_pointestimate(y, yhat, rest)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, rest, alpha=0.1)
    assert ppi["type"] == "Accuracy" and p["language"] == "all"
    assert ppi["value"] == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    assert (p["n_labeled"], p["n_unlabeled"]) == (len(labelled), n - len(labelled))
    [agree] = [m for m in records if m["type"] == "JudgeAgreement"]
    assert agree["value"]["agreement"] == pytest.approx(np.mean(y == yhat))


@pytest.mark.parametrize(
    ("command", "labels", "needle"),
    [
        ("language", [{"id": "0", "value": 1}, {"id": "99", "value": 0}], "'99'"),
        ("language", [{"id": "0", "value": 1}, {"id": "0", "value": 1}], "twice"),
        ("language", [{"id": "0", "value": "yes"}], "expected a number"),
        ("language", [{"id": "0", "value": None}], "no judged item has a label"),
        ("cat", [{"id": "0", "value": 1}], "no per-item score"),
    ],
    ids=["unknown id", "duplicated id", "non-numeric", "nothing labelled", "cat suite"],
)
def test_bad_labels_one_line_exit_2_no_call(tmp_path, command, labels, needle) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in labels))
    with FakeChatServer(responder=_first_option) as srv:
        r = runner.invoke(
            app, ["llm", command, "--sample", "-m", srv.spec(), "--no-cache", "--no-save",
                  "--answer-mode", "generate", "--human-labels", str(path)],
        )  # fmt: skip
        assert srv.calls == 0
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.output
