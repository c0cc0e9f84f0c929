"""``assay pairwise judge|score`` with ``--ci`` and ``--by``: records, the store, the calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

REF = "ref"
RULES = ["quality", "first", "both", "quality", "second", "quality"]


@pytest.fixture
def srv() -> Iterator[FakeChatServer]:
    server = FakeChatServer(responder=scripted_judge()).start()
    yield server
    server.stop()


def _table(path: Path) -> Path:
    t = make_table(RULES, {"m1": [3, 1, 2, 1, 2, 4], "m2": [1, 2, 2, 3, 1, 1], REF: [2] * 6})
    t["topic"] = ["uml", "uml", "api", "api", "api", "uml"]
    t.to_csv(path, index=False)
    return path


def _judge(srv: FakeChatServer, tmp: Path, *extra: str) -> object:
    tmp.mkdir(exist_ok=True)
    args = ["pairwise", "judge", "--data", str(_table(tmp / "t.csv")), "--models", "m1,m2",
            "--reference-model", REF, "--judge", srv.spec(), "--out-dir", str(tmp / "runs"),
            "--quiet", "--no-cache", "--num-bootstrap", "50", *extra]  # fmt: skip
    return CliRunner().invoke(app, args)


def test_judge_with_ci_and_by_pays_each_comparison_once_and_survives_the_store(srv, tmp_path):
    plain = _judge(srv, tmp_path / "a")
    assert plain.exit_code == 0, plain.output
    calls = srv.calls
    assert calls == 6 * 2 * 2  # 6 questions, 2 models, both orders; no exact match
    db = str(tmp_path / "s.db")
    out = tmp_path / "m.json"
    res = _judge(srv, tmp_path, "--ci", "0.9", "--by", "topic", "--save", "--db", db,
                 "--out", str(out))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert srv.calls == 2 * calls  # the slices cost no call
    printed = json.loads(out.read_text())
    sliced = [m for m in printed if m["parameters"].get("slice_column") == "topic"]
    assert {m["parameters"]["slice"] for m in sliced} == {"api", "uml"}
    assert all(m["parameters"]["slice_n"] == 3 for m in sliced)
    assert any("gap_ci_low" in m["parameters"] for m in sliced)
    rates = [m for m in printed if m["type"] == "WinRate" and "slice" not in m["parameters"]]
    assert rates and all(
        m["parameters"]["confidence_level"] == 0.9 for m in rates if m["value"] is not None
    )
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed


def test_score_slices_the_judges_own_comparisons_file(srv, tmp_path):
    res = _judge(srv, tmp_path, "--ci", "0.9", "--by", "topic", "--out", str(tmp_path / "j.json"))
    assert res.exit_code == 0, res.output
    (folder,) = (tmp_path / "runs").iterdir()
    out = tmp_path / "s.json"
    args = ["pairwise", "score", "--records", str(folder / "comparisons.jsonl"),
            "--reference-model", REF, "--out-dir", str(tmp_path / "re"), "--ci", "0.9",
            "--num-bootstrap", "50", "--by", "topic", "--out", str(out)]  # fmt: skip
    rescored = CliRunner().invoke(app, args)
    assert rescored.exit_code == 0, rescored.output
    assert json.loads(out.read_text()) == json.loads((tmp_path / "j.json").read_text())


@pytest.mark.parametrize(
    "old, value, new", [("--n-boot", "30", "--num-bootstrap"), ("--confidence", "0.8", "--ci")]
)
def test_the_options_removed_in_0_2_0_are_refused_naming_the_new_ones(
    srv, tmp_path, old, value, new
):
    args = ["pairwise", "judge", "--data", str(_table(tmp_path / "t.csv")), "--models", "m1,m2",
            "--reference-model", REF, "--judge", srv.spec(), "--out-dir", str(tmp_path / "runs"),
            "--quiet", "--no-cache", old, value]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert f"No such option: {old} (it was renamed: use {new})" in res.output
    assert srv.calls == 0


def test_the_originals_record_table_slices_by_task(tmp_path):
    """DevBench's shipped record table (the original's TSV): --by task, with intervals."""
    tsv = (
        Path(__file__).resolve().parents[1]
        / "data"
        / "devbench"
        / "record_gpt-4-1106-preview_2.tsv"
    )
    out = tmp_path / "m.json"
    args = ["pairwise", "score", "--records", str(tsv), "--reference-model", "gpt-3.5-turbo-1106",
            "--out-dir", str(tmp_path / "runs"), "--ci", "0.95", "--by", "task",
            "--out", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    ms = json.loads(out.read_text())
    whole = [m for m in ms if "slice" not in m["parameters"]]
    tasks = {m["parameters"]["slice"] for m in ms if "slice" in m["parameters"]}
    assert len(tasks) >= 2
    n = sum(
        m["parameters"]["slice_n"]
        for m in ms
        if m["type"] == "ExtractionRate" and "slice" in m["parameters"]
    )
    assert n == len({m for m in _questions(tsv)})  # the slices partition the questions
    assert all("ci_low" in m["parameters"] for m in whole if m["value"] is not None)


def _questions(tsv: Path) -> list[str]:
    import csv

    with open(tsv, encoding="utf-8") as fh:
        return [row["cmp_index"].split(";")[0] for row in csv.DictReader(fh, delimiter="\t")]
