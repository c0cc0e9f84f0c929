"""Escape sequences in data or a model's answer never reach the terminal raw.

A label, a group, a dataset name, a prompt or an answer holding ``ESC [ 2 J`` (clear the
screen) or ``ESC ] 0 ; ... BEL`` (retitle the window) is printed escaped, as ``repr``
shows it, by every table and terminal printer (``assay.terminal.printable``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.results import Metric
from assay.store import Store
from assay.terminal import printable
from assay.testing.llm import FakeChatServer

runner = CliRunner(env={"COLUMNS": "200"})  # wide: a cell never wraps the escaped text
EVIL = "ev\x1b[2J\x1b]0;pwned\x07il\u202e"
SHOWN = "ev\\x1b[2J\\x1b]0;pwned\\x07il\\u202e"
DATA = Path(__file__).parents[1] / "suites" / "data"


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


def test_printable_escapes_as_repr_and_keeps_the_rest() -> None:
    assert printable(EVIL) == SHOWN == repr(EVIL)[1:-1]
    assert printable("naïve 東京 [bold]x") == "naïve 東京 [bold]x"
    assert printable("a\nb\tc") == "a\\nb\\tc"
    assert printable("a\nb\tc\r", keep_newlines=True) == "a\nb\tc\\r"


def test_classification_table(tmp_path) -> None:
    pd.DataFrame({"uid": ["1", "2"], "value": [EVIL, "dog"]}).to_csv(
        tmp_path / "g.csv", index=False
    )
    pd.DataFrame({"uid": ["1", "2"], "value": [EVIL, "dog"], "score": [0.9, 0.8]}).to_csv(
        tmp_path / "p.csv", index=False
    )
    g, p = str(tmp_path / "g.csv"), str(tmp_path / "p.csv")
    args = ["classification", "--groundtruths", g, "--predictions", p, "--format", "table"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    _clean(r.stdout)
    assert SHOWN in r.stdout


def test_fairness_table(tmp_path) -> None:
    df = pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 0, 0, 0], "g": [EVIL, EVIL, "b", "b"]})
    df.to_csv(tmp_path / "f.csv", index=False)
    r = runner.invoke(app, ["fairness", "--data", str(tmp_path / "f.csv"), "--label", "y",
                            "--prediction", "yhat", "--group", "g",
                            "--format", "table"])  # fmt: skip
    assert r.exit_code == 0, r.output
    _clean(r.stdout)
    assert SHOWN in r.stdout


def test_text_table(tmp_path) -> None:
    rows = [{"uid": EVIL, "prediction": "a cat", "groundtruth": "a cat"}]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = runner.invoke(app, ["text", "--data", str(tmp_path / "t.jsonl"), "--format", "table"])
    assert r.exit_code == 0, r.output
    _clean(r.stdout)
    assert SHOWN in r.stdout


def test_runs_list_table(tmp_path) -> None:
    db = str(tmp_path / "s.db")
    with Store(db) as st:
        st.save([Metric("Accuracy", 1.0)], kind="classification", dataset=EVIL, model=EVIL)
    for cmd in (["runs", "list"], ["runs", "show", "1"]):
        r = runner.invoke(app, [*cmd, "--db", db, "--format", "table"], env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        _clean(r.stdout)
        assert SHOWN in r.stdout


def test_llm_ask_prints_the_answer_escaped() -> None:
    answer = f"line one\n{EVIL}\tend"
    with FakeChatServer(responder=lambda m: answer) as srv:
        r = runner.invoke(app, ["llm", "ask", "hello", "-m", srv.spec()])
    assert r.exit_code == 0, r.output
    _clean(r.stdout)
    assert r.stdout == f"line one\n{SHOWN}\tend\n"  # newlines and tabs kept


@pytest.mark.parametrize("where", ["context", "target"])
def test_llm_cat_dry_run(tmp_path, where) -> None:
    data = json.loads((DATA / "cat_dev.json").read_text())
    data["data"]["intrasentence"][0][where] = EVIL + " BLANK"
    (tmp_path / "dev.json").write_text(json.dumps(data))
    r = runner.invoke(app, ["llm", "cat", "--data", str(tmp_path / "dev.json"), "--dry-run", "50"])
    assert r.exit_code == 0, r.output
    _clean(r.stdout)
