"""``--name`` and ``--tag`` on every command that saves (issue 30 item 5): the metric
commands (through ``save_metrics``), ``assay text`` (its own ``--save``), the LLM runs
stored by ``run_task`` (finished or failed) and the suites' ``--save/--no-save``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store


def _names(db: Path) -> list[tuple[str | None, dict]]:
    with Store(str(db)) as s:
        return [(e.name, e.tags) for e in s.list()]


def test_text_saves_its_name_and_tags(tmp_path) -> None:
    data = tmp_path / "t.jsonl"
    rows = [
        {"uid": f"d{i}", "prediction": "a cat sat", "groundtruth": "a cat sat down"}
        for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "s.db"
    argv = ["text", "--data", str(data), "--metrics", "rouge", "--save", "--db", str(db)]
    res = CliRunner().invoke(app, [*argv, "--name", "baseline", "--tag", "prompt=v2"])
    assert res.exit_code == 0, res.output
    assert _names(db) == [("baseline", {"prompt": "v2"})]


def test_llm_run_saves_its_name_finished_and_failed(tmp_path, chat_server) -> None:
    items = tmp_path / "i.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"q{i}", "prompt": f"p{i}"}) + "\n" for i in range(2))
    )
    db = tmp_path / "s.db"
    ok = chat_server()
    argv = ["llm", "run", str(items), "-q", "--no-cache", "--save", "--db", str(db)]
    res = CliRunner().invoke(app, [*argv, "-m", ok.spec(), "--name", "good", "--tag", "k=v"])
    assert res.exit_code == 0, res.output
    bad = chat_server(plan={"p0": ["400"]})  # one item fails
    res = CliRunner().invoke(app, [*argv, "-m", bad.spec(), "--retries", "0", "--name", "broken"])
    assert res.exit_code == 1, res.output
    assert sorted(_names(db), key=str) == sorted([("good", {"k": "v"}), ("broken", {})], key=str)


def test_a_blank_name_is_refused(tmp_path) -> None:
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"uid": "d", "prediction": "a", "groundtruth": "a"}) + "\n")
    res = CliRunner().invoke(
        app,
        [
            "text",
            "--data",
            str(data),
            "--metrics",
            "rouge",
            "--save",
            "--db",
            str(tmp_path / "s.db"),
            "--name",
            " ",
        ],
    )
    assert res.exit_code == 2
    assert "--name" in res.output and "Traceback" not in res.output
