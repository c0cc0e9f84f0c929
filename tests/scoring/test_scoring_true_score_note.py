"""With one rater and no given rater error variance there is no true-score table (as in
RSMTool): the tables say so in a note, and the records hold an undefined PRMSE per score."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.scoring import ScoringEvaluator, evaluate_scoring, scoring_tables

REASON = "requires a second human score (human2) or a given rater_error_variance"


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    return pd.DataFrame({"h": h, "m": h + rng.normal(0, 0.7, n)})


def test_one_rater_gives_a_note_and_undefined_prmse_records():
    t = scoring_tables(_frame(), human="h", system="m")
    assert "true_score_eval" not in t.tables  # RSMTool writes no such table either
    assert len(t.notes) == 1 and t.notes[0].startswith("true_score_eval")
    assert REASON in t.notes[0]
    prmse = t.metrics.filter("PRMSE", table="true_score_eval")
    assert [m.parameters["score"] for m in prmse] == ["m", "m_round"]
    assert all(m.value is None and REASON in m.parameters["undefined"] for m in prmse)
    listed = t.undefined[t.undefined["table"] == "true_score_eval"]
    assert list(listed["row"]) == ["m", "m_round"]
    assert set(listed["column"]) == {"PRMSE true"}
    # the same records from evaluate_scoring, and the evaluator's tables
    assert evaluate_scoring(_frame(), human="h", system="m").filter("PRMSE") == prmse
    assert ScoringEvaluator(human="h", system="m").add(_frame()).tables().notes == t.notes


@pytest.mark.parametrize(
    "kw", [{"human2": "h2"}, {"rater_error_variance": 0.3}], ids=["human2", "variance"]
)
def test_no_note_when_true_scores_can_be_estimated(kw):
    df = _frame().assign(h2=lambda d: d["h"].where(d.index % 3 == 0))
    t = scoring_tables(df, human="h", system="m", **kw)
    assert t.notes == []
    assert "true_score_eval" in t.tables
    assert t.metrics.get("PRMSE", score="m").value is not None


def test_cli_prints_the_note_and_lists_the_undefined_cells(tmp_path):
    path = tmp_path / "s.csv"
    _frame().to_csv(path, index=False)
    out = tmp_path / "out"
    r = CliRunner().invoke(
        app,
        ["scoring", "--data", str(path), "--human", "h", "--system", "m", "--out-dir", str(out)],
    )
    assert r.exit_code == 0, r.output
    assert "note: true_score_eval" in r.stderr and REASON in r.stderr
    assert not (out / "true_score_eval.csv").exists()
    undefined = pd.read_csv(out / "undefined_metrics.csv")
    assert (undefined["table"] == "true_score_eval").sum() == 2
