"""``assay compare`` of two text runs: the aggregate mean gets the paired t test on the
datums both runs scored (scipy's ``ttest_rel``); a datum's own record and a slice's record are
never paired through the whole set's tally (issue 30, item 2)."""

from __future__ import annotations

import json

import pytest
from scipy import stats
from typer.testing import CliRunner

from assay.cli.main import app

REFS = ["a cat sat down", "the dog ran off", "a bird", "cats sat", "dogs ran", "end", "sky", "car"]
RUNS = {
    "a": [
        "a cat sat",
        "the dog ran",
        "a bird flew",
        "cats sit",
        "dogs run",
        "the end",
        "sky",
        "a car",
    ],
    "b": [
        "a cat sat down",
        "dog ran",
        "a bird flew off",
        "cats sat",
        "dogs ran",
        "end",
        "blue",
        "car",
    ],
}


def _run(tmp_path, name: str, db) -> list[dict]:
    data = tmp_path / f"{name}.jsonl"
    rows = [
        {"uid": f"d{i}", "prediction": p, "groundtruth": r, "site": "xy"[i % 2]}
        for i, (p, r) in enumerate(zip(RUNS[name], REFS, strict=True))
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["text", "--data", str(data), "--metrics", "rouge", "--rouge-types", "rouge1"]
    res = CliRunner().invoke(app, [*argv, "--by", "site", "--save", "--db", str(db)])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_text_means_are_paired_t_and_datums_and_slices_are_not_paired(tmp_path) -> None:
    db = tmp_path / "s.db"
    a, b = _run(tmp_path, "a", db), _run(tmp_path, "b", db)
    res = CliRunner().invoke(app, ["compare", "1", "2", "--db", str(db)])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows"]

    def per_datum(records):
        return [r["value"] for r in records if "datum_uid" in r["parameters"]]

    want = stats.ttest_rel(per_datum(b), per_datum(a))
    mean = [
        r for r in rows if "aggregate=mean" in r["parameters"] and "slice" not in r["parameters"]
    ]
    assert len(mean) == 1 and mean[0]["test_2"] == "paired_t"
    assert mean[0]["p_value_2"] == pytest.approx(want.pvalue, rel=1e-9)
    assert mean[0]["n_paired_2"] == len(REFS)
    others = [r for r in rows if r is not mean[0]]
    assert others and all(r["test_2"] == "unpaired" for r in others)
    assert all(r["p_value_2"] is None for r in others)
