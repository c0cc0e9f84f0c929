"""``assay pairwise judge|score``: output options, the store, and bad input (exit 2, no call)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

REF = "ref"


@pytest.fixture
def srv() -> Iterator[FakeChatServer]:
    server = FakeChatServer(responder=scripted_judge(), hang_seconds=5).start()
    yield server
    server.stop()


def _write(table: pd.DataFrame, path):
    if path.suffix == ".xlsx":
        table.to_excel(path, index=False)
    else:
        table.to_csv(path, index=False)
    return path


def _judge(srv, data, tmp_path, *extra, models="m1"):
    return CliRunner().invoke(
        app,
        [
            "pairwise",
            "judge",
            "--data",
            str(data),
            "--models",
            models,
            "--reference-model",
            REF,
            "--judge",
            srv.spec(),
            "--out-dir",
            str(tmp_path / "runs"),
            "--quiet",
            "--num-bootstrap",
            "10",
            "--cache",
            str(tmp_path / "cache.sqlite"),
            *extra,
        ],
    )


def _table():
    return make_table(["quality", "first"], {"m1": [3, 3], REF: [1, 1]})


def _error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_missing_declared_column_exits_2_before_any_call(srv, tmp_path):
    data = _write(_table().drop(columns=["evaluating_guidance"]), tmp_path / "t.xlsx")
    line = _error_line(_judge(srv, data, tmp_path))
    assert "t.xlsx" in line and "field 'evaluating_guidance'" in line and "missing column" in line
    assert srv.calls == 0 and not (tmp_path / "runs").exists()


def test_answer_column_of_a_model_not_given_exits_2(srv, tmp_path):
    table = _table()
    table["answer-stranger"] = "x"
    line = _error_line(_judge(srv, _write(table, tmp_path / "t.csv"), tmp_path))
    assert "t.csv" in line and "field 'answer-stranger'" in line
    assert srv.calls == 0


def test_model_without_answer_column_exits_2(srv, tmp_path):
    line = _error_line(_judge(srv, _write(_table(), tmp_path / "t.csv"), tmp_path, models="m1,m9"))
    assert "field 'answer-m9'" in line and srv.calls == 0


def test_missing_fill_contents_path_names_file_row_and_field(srv, tmp_path):
    (tmp_path / "q0.md").write_text("Question zero from a file [judge:quality]")
    table = _table()
    table["question"] = ["q0.md", "missing.md"]
    data = _write(table, tmp_path / "t.csv")
    line = _error_line(_judge(srv, data, tmp_path, "--fill-contents", "question"))
    assert "t.csv" in line and "row 2" in line and "field 'question'" in line
    assert "missing.md" in line and srv.calls == 0


def test_fill_contents_reads_the_files_into_the_prompt(srv, tmp_path):
    (tmp_path / "q0.md").write_text("Question zero from a file [judge:quality]")
    (tmp_path / "q1.md").write_text("Question one from a file [judge:first]")
    table = _table()
    table["question"] = ["q0.md", "q1.md"]
    result = _judge(
        srv, _write(table, tmp_path / "t.csv"), tmp_path, "--fill-contents", "question", "--dry-run"
    )
    assert result.exit_code == 0, result.output
    items = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(items) == 4 and srv.calls == 0
    assert "Question zero from a file" in items[0]["messages"][0]["content"]


def test_record_table_in_neither_format_exits_2(tmp_path):
    bad = tmp_path / "scores.tsv"
    bad.write_text("id\tscore\n1\t0.5\n")
    result = CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(bad),
            "--reference-model",
            REF,
            "--out-dir",
            str(tmp_path / "o"),
        ],
    )
    line = _error_line(result)
    assert "scores.tsv" in line and "not a pairwise record table" in line
    assert not (tmp_path / "o").exists()


def test_bad_jsonl_record_names_line_and_field(tmp_path):
    bad = tmp_path / "c.jsonl"
    bad.write_text(json.dumps({"index": "q", "model_a": "a", "model_b": REF, "task": "t"}) + "\n")
    result = CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(bad),
            "--reference-model",
            REF,
            "--out-dir",
            str(tmp_path / "o"),
        ],
    )
    line = _error_line(result)
    assert "c.jsonl" in line and "row 1" in line and "field 'status'" in line


def test_bad_nopt_exits_2(srv, tmp_path):
    line = _error_line(_judge(srv, _write(_table(), tmp_path / "t.csv"), tmp_path, "--nopt", "5"))
    assert "nopt" in line and srv.calls == 0


def test_table_format_out_file_and_store(srv, tmp_path):
    data = _write(_table(), tmp_path / "t.csv")
    out = tmp_path / "metrics.json"
    db = tmp_path / "store.db"
    result = _judge(
        srv,
        data,
        tmp_path,
        "--format",
        "table",
        "--out",
        str(out),
        "--save",
        "--db",
        str(db),
        "--xlsx",
    )
    assert result.exit_code == 0, result.output
    assert "ConsistencyRate" in result.stdout
    metrics = json.loads(out.read_text())
    assert {m["type"] for m in metrics} >= {
        "WinRate",
        "WinRateWithTie",
        "WinRateWithoutTie",
        "ConsistencyRate",
        "ExtractionRate",
        "LengthControlledWinRate",
        "BradleyTerryRating",
    }
    from assay.store import Store

    with Store(str(db)) as store:
        (ev,) = store.list()
        full = store.get(ev.id, items=True)
    assert full.kind == "pairwise" and len(full.items) == 4
    assert {i.parsed for i in full.items} == {"A", "B"}
    assert len(full.metrics) == len(metrics)
    (folder,) = list((tmp_path / "runs").iterdir())
    assert (folder / "win+bothgood.xlsx").exists() and (folder / "ratings.csv").exists()


def test_score_never_overwrites_an_earlier_run(tmp_path, srv):
    data = _write(_table(), tmp_path / "t.csv")
    assert _judge(srv, data, tmp_path).exit_code == 0
    (folder,) = list((tmp_path / "runs").iterdir())
    first = (folder / "log.txt").read_text()
    for _ in range(2):
        r = CliRunner().invoke(
            app,
            [
                "pairwise",
                "score",
                "--records",
                str(folder / "record_fake-model_2.tsv"),
                "--reference-model",
                REF,
                "--out-dir",
                str(tmp_path / "runs"),
            ],
        )
        assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert names == ["record_fake-model_2_score0", "record_fake-model_2_score1", folder.name]
    assert (folder / "log.txt").read_text() == first


def test_help_lists_both_commands():
    result = CliRunner().invoke(app, ["pairwise", "--help"])
    assert result.exit_code == 0
    assert "judge" in result.stdout and "score" in result.stdout


def test_score_saves_metrics_and_item_rows(tmp_path):
    from pathlib import Path

    from assay.store import Store

    record = Path(__file__).resolve().parents[1] / "data" / "devbench"
    db = tmp_path / "s.db"
    r = CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(record / "record_gpt-4-1106-preview_2.tsv"),
            "--reference-model",
            "gpt-3.5-turbo-1106",
            "--out-dir",
            str(tmp_path / "o"),
            "--save",
            "--db",
            str(db),
        ],
    )
    assert r.exit_code == 0, r.output
    with Store(str(db)) as store:
        (ev,) = store.list()
        full = store.get(ev.id, items=True)
    assert full.model == "gpt-4-1106-preview" and len(full.items) == 8
    assert {i.parsed for i in full.items} == {"A", "B"}
    assert all(i.raw_answer.startswith("Choice: ") for i in full.items)
