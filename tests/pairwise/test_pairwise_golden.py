"""Golden: re-score the original SubEval run shipped with DevBench and compare with its outputs.

The record table, log and win tables in tests/data/devbench/ are the original's own output
(gpt-4-1106-preview judging gpt-4-0125-preview against gpt-3.5-turbo-1106, 2 options, dual
mode; Apache-2.0, see the NOTICE there). ``assay pairwise score`` must reproduce every
number of the log and both win tables.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app

DEVBENCH = Path(__file__).resolve().parents[1] / "data" / "devbench"
RECORD = DEVBENCH / "record_gpt-4-1106-preview_2.tsv"
REFM = "gpt-3.5-turbo-1106"


def _log_numbers(text: str) -> dict[str, float]:
    pats = {
        "total": r"Total comparisons: (\d+)\. Failed",
        "failed": r"Failed to response: (\d+)",
        "non_em": r"Non exact matches:\s+(\d+)",
        "extracted": r"Extracted (\d+) answers",
        "extraction_pct": r"extraction success rate ([\d.]+)%",
    }
    out = {k: float(re.search(p, text).group(1)) for k, p in pats.items()}
    m = re.search(r"(\d+) out of (\d+) answers are consistent.*rate is ([\d.]+)%", text)
    out["consistent_pct"] = float(m.group(3)) if m else 100.0
    return out


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("score")
    result = CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(RECORD),
            "--reference-model",
            REFM,
            "--nopt",
            "2",
            "--out-dir",
            str(out_dir),
            "--xlsx",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = list(out_dir.iterdir())
    return folder, json.loads(result.stdout)


def test_log_numbers_equal_the_original(scored):
    folder, _ = scored
    original = _log_numbers((DEVBENCH / "log.txt").read_text())
    ours = _log_numbers((folder / "log.txt").read_text())
    assert len(original) == 6
    assert ours == original


@pytest.mark.parametrize("name", ["win+halfdraw", "win+bothgood"])
def test_win_tables_equal_the_original(scored, name):
    folder, _ = scored
    original = pd.read_excel(DEVBENCH / f"{name}.xlsx")
    for ours in (pd.read_excel(folder / f"{name}.xlsx"), pd.read_csv(folder / f"{name}.csv")):
        assert list(ours.columns) == list(original.columns)
        a = original.set_index("model").sort_index()
        b = ours.set_index("model").sort_index()
        assert list(a.index) == list(b.index)
        compared = 0
        for col in a.columns:
            for m in a.index:
                assert b.at[m, col] == pytest.approx(a.at[m, col], abs=1e-6), (m, col)
                compared += 1
        assert compared == 5


def test_records_match_the_log(scored):
    _, records = scored
    by = {(r["type"], json.dumps(r["parameters"], sort_keys=True)): r["value"] for r in records}
    assert any(t == "ExtractionRate" for t, _ in by)
    ext = next(r for r in records if r["type"] == "ExtractionRate")
    assert (ext["value"], ext["parameters"]["extracted"], ext["parameters"]["compared"]) == (
        1.0,
        8,
        8,
    )
    old = [
        r for r in records if r["type"] == "WinRate" and r["parameters"]["counting"] != "debiased"
    ]
    assert len(old) == 10 and all(r["value"] == 1.0 for r in old)
    new = {
        (r["parameters"]["metric"], r["parameters"]["model"]): r["value"]
        for r in records
        if r["type"] == "WinRateWithTie"
    }
    assert new == {
        ("general", "gpt-4-0125-preview"): 1.0,
        ("general", REFM): 0.0,
        ("faithfulness", "gpt-4-0125-preview"): 1.0,
        ("faithfulness", REFM): 0.0,
    }


def test_length_stats_list_the_same_models_in_characters(scored):
    folder, _ = scored
    original = pd.read_csv(DEVBENCH / "length_stats.csv")
    ours = pd.read_csv(folder / "length_stats.csv")
    assert list(ours["model"]) == list(original["model"])
    # Units differ (characters here, cl100k_base tokens there); the order of the means agrees.
    assert (ours["mean_chars"].rank() == original["mean"].rank()).all()


def test_rescoring_assays_own_records_gives_the_same_records(scored, tmp_path):
    folder, records = scored
    result = CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(folder / "comparisons.jsonl"),
            "--reference-model",
            REFM,
            "--out-dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == records
