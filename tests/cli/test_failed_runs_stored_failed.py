"""A run that fails on screen is stored ``failed`` (issue 36, items 7 and 8), so ``runs
latest``, ``compare --last`` and ``report --last`` never pick it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()


def _status(db: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT status, error FROM assay_evaluations ORDER BY id").fetchall()


def test_llm_run_with_failed_items_is_stored_failed(tmp_path, chat_server):
    srv = chat_server(plan={"q2": ["500"] * 3})
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"i{i}", "prompt": f"q{i}"}) + "\n" for i in (1, 2, 3))
    )
    db = tmp_path / "s.db"
    out = tmp_path / "r.jsonl"
    args = ["llm", "run", str(items), "--model", srv.spec(), "--retries", "0", "--quiet",
            "--no-cache", "--save", "--db", str(db), "--out", str(out)]  # fmt: skip
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.output
    assert "1 of 3 items failed" in r.stderr and "stored as failed evaluation 1" in r.stderr
    assert _status(db) == [("failed", "1 of 3 items failed")]
    assert len(out.read_text().splitlines()) == 3  # the records all the same
    r = runner.invoke(app, ["runs", "latest", "--kind", "llm_run", "--db", str(db)])
    assert r.exit_code == 0 and json.loads(r.stdout) == {}  # never "the latest finished run"
    # allowed by --max-errors: finished, exit 0
    r = runner.invoke(app, [*args, "--max-errors", "1"])
    assert r.exit_code == 0, r.output
    assert _status(db)[-1] == ("finished", None)


def test_text_judge_with_only_invalid_replies_fails_and_is_stored_failed(tmp_path, chat_server):
    srv = chat_server(responder=lambda messages: "I would rather not say.")
    data = tmp_path / "d.jsonl"
    rows = [{"uid": u, "query": "q?", "prediction": f"answer {u}", "groundtruth": "truth"}
            for u in ("a", "b", "c")]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "s.db"
    args = ["text", "--data", str(data), "--metrics", "answer_correctness", "--model",
            srv.spec(), "--no-cache", "--quiet", "--save", "--db", str(db)]  # fmt: skip
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.output
    assert "still invalid after 2 re-asks" in r.stderr
    ((status, error),) = _status(db)
    assert status == "failed" and "calls failed" in error
    calls = srv.calls
    assert calls >= 3 * 3  # each datum asked, then re-asked twice
    r = runner.invoke(app, [*args, "--max-errors", "100"])  # allowed: finished, exit 0
    assert r.exit_code == 0, r.output
    assert _status(db)[-1][0] == "finished"
