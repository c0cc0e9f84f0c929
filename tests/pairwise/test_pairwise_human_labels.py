"""``assay pairwise judge --human-labels``: a PPI++ WinRate per labelled pair equal to
ppi-python on the same arrays, a JudgeAgreement with the position-swap flip rate and their
intervals; bad preferences: one line, exit 2, no call paid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

ppi_py = pytest.importorskip("ppi_py")
runner = CliRunner()
N = 24
RULES = ["first" if i % 5 == 0 else "quality" for i in range(N)]  # every 5th: position bias
M1 = [3 if i % 3 else 1 for i in range(N)]
REF = [2] * N


def _judged(i: int) -> float:
    """The scripted judge's debiased outcome for m1: a position-biased pair of verdicts is a
    tie; otherwise the better quality wins."""
    return 0.5 if RULES[i] == "first" else float(M1[i] > REF[i])


def _human(i: int) -> float:
    return 0.5 if i % 7 == 0 else float(M1[i] > REF[i]) if i % 4 else 1.0 - float(M1[i] > REF[i])


def _invoke(srv: FakeChatServer, tmp: Path, labels: list[dict], *extra: str):
    data = tmp / "t.csv"
    make_table(RULES, {"m1": M1, "ref": REF}).to_csv(data, index=False)
    path = tmp / "prefs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in labels))
    return runner.invoke(
        app,
        ["pairwise", "judge", "--data", str(data), "--models", "m1", "--reference-model", "ref",
         "--judge", srv.spec(), "--out-dir", str(tmp / "runs"), "--quiet", "--no-cache",
         "--num-bootstrap", "200", "--human-labels", str(path), *extra],
    )  # fmt: skip


def _q(i: int) -> str:
    return f"proj{i}_uml_class-general"


def test_ppi_win_rate_agreement_and_flip_rate(tmp_path: Path) -> None:
    labelled = list(range(0, N, 2))
    labels = [
        {"id": _q(i), "model": "ref", "opponent": "m1", "value": 1.0 - _human(i)} for i in labelled
    ]  # fmt: skip  (named ref-first: the records follow)
    with FakeChatServer(responder=scripted_judge()) as srv:
        r = _invoke(srv, tmp_path, labels, "--ci", "0.9", "--format", "json")
    assert r.exit_code == 0, r.output
    records = json.loads(r.stdout)
    [ppi] = [m for m in records if m["parameters"].get("estimator") == "ppi"]
    h = np.array([1.0 - _human(i) for i in labelled])
    j = np.array([1.0 - _judged(i) for i in labelled])
    ju = np.array([1.0 - _judged(i) for i in range(N) if i not in labelled])
    want = ppi_py.ppi_mean_pointestimate(h, j, ju)
    lo, hi = ppi_py.ppi_mean_ci(h, j, ju, alpha=0.1)
    p = ppi["parameters"]
    assert ppi["type"] == "WinRate" and (p["model"], p["opponent"]) == ("ref", "m1")
    assert ppi["value"] == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    assert (p["n_labeled"], p["n_unlabeled"]) == (12, 12)
    [agree] = [m for m in records if m["type"] == "JudgeAgreement"]
    v, ap = agree["value"], agree["parameters"]
    assert v["agreement"] == pytest.approx(np.mean(h == j))
    assert v["cohen_kappa"] == pytest.approx(cohen_kappa_score(2 * h, 2 * j))
    flips = [RULES[i] == "first" for i in range(N)]
    assert v["position_flip_rate"] == pytest.approx(np.mean(flips))
    assert ap["n_both_orders"] == N
    lo_f, hi_f = ap["measure_ci"]["position_flip_rate"]
    assert lo_f <= v["position_flip_rate"] <= hi_f and hi_f > lo_f


@pytest.mark.parametrize(
    ("labels", "needles"),
    [
        ([{"id": _q(1), "model": "m1", "opponent": "ref", "value": 1},
          {"id": "nope", "model": "m1", "opponent": "ref", "value": 1}], ["'nope'", "not judged"]),
        ([{"id": _q(1), "model": "m1", "opponent": "zz", "value": 1}], ["'zz'", "not judged"]),
        ([{"id": _q(1), "model": "m1", "opponent": "ref", "value": 1},
          {"id": _q(1), "model": "ref", "opponent": "m1", "value": 0}], ["twice"]),
        ([{"id": _q(1), "model": "m1", "opponent": "ref", "value": "good"}], ["'good'"]),
        ([{"id": _q(1), "model": "m1", "opponent": "ref", "value": 2}], ["got 2"]),
        ([{"id": _q(1), "model": "m1", "opponent": "ref", "value": None}], ["no judged"]),
    ],
    ids=["unknown question", "unknown pair", "duplicated", "non-numeric", "out of range",
         "nothing labelled"],
)  # fmt: skip
def test_bad_preferences_one_line_exit_2_no_call(tmp_path, labels, needles) -> None:
    with FakeChatServer(responder=scripted_judge()) as srv:
        r = _invoke(srv, tmp_path, labels)
        assert srv.calls == 0
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "prefs.jsonl" in lines[0] and "Traceback" not in r.output
    for needle in needles:
        assert needle in lines[0]
