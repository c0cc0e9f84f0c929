"""``assay pairwise judge`` with the 135M judge: one caution line on stderr, and the caution in
the stored run's parameters and on every record; another judge gets none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.caution import DEMO_JUDGE
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge


def _judge(srv: FakeChatServer, tmp: Path) -> tuple:
    data = tmp / "t.csv"
    make_table(["quality", "first"], {"m1": [3, 3], "ref": [1, 1]}).to_csv(data, index=False)
    out, db = tmp / "m.json", str(tmp / "s.db")
    r = CliRunner().invoke(
        app,
        ["pairwise", "judge", "--data", str(data), "--models", "m1", "--reference-model", "ref",
         "--judge", srv.spec(), "--out-dir", str(tmp / "runs"), "--quiet", "--num-bootstrap",
         "10", "--no-cache", "--out", str(out), "--save", "--db", db],
    )  # fmt: skip
    return r, out, db


@pytest.mark.parametrize("model", ["smollm2-135m-instruct", "fake-model"])
def test_caution_only_for_the_135m_judge(tmp_path: Path, model: str) -> None:
    with FakeChatServer(responder=scripted_judge(), model=model) as srv:
        r, out, db = _judge(srv, tmp_path)
    assert r.exit_code == 0, r.output
    records = json.loads(out.read_text())
    shown = json.loads(CliRunner().invoke(app, ["runs", "show", "1", "--db", db]).stdout)
    cautions = [line for line in r.stderr.splitlines() if line.startswith("caution:")]
    if model == "fake-model":
        assert cautions == [] and "judge_caution" not in shown["parameters"]
        assert not any("judge_caution" in m["parameters"] for m in records)
        return
    assert cautions == [f"caution: {DEMO_JUDGE}"]
    assert shown["parameters"]["judge_caution"] == DEMO_JUDGE
    assert records and all(m["parameters"]["judge_caution"] == DEMO_JUDGE for m in records)
