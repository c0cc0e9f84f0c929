"""Bad ``--db`` and bad ``assay runs`` requests: exit 2, one clear line, nothing created.

Reading commands (``runs list|show|latest|export``) never create a store: a missing
store is an error and leaves no folder or file behind.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.results import Metric
from assay.store import Store

READS = [
    ["runs", "list"],
    ["runs", "show", "1"],
    ["runs", "latest", "--kind", "k"],
    ["runs", "export", "1"],
]


def _check(res, *needles):
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    for n in needles:
        assert n in res.output, (n, res.output)


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "s.db"
    with Store(str(path)) as st:
        st.save([Metric("Accuracy", 0.5)], kind="k", dataset="d", model="m")
    return path


@pytest.mark.parametrize("argv", READS, ids=[a[1] for a in READS])
def test_reading_a_missing_store_is_an_error_and_creates_nothing(tmp_path, argv):
    db = tmp_path / "newdir" / "sub" / "x.db"
    _check(CliRunner().invoke(app, [*argv, "--db", str(db)]), str(db), "no such store")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", READS, ids=[a[1] for a in READS])
def test_db_paths_that_cannot_be_a_store(tmp_path, argv):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    _check(CliRunner().invoke(app, [*argv, "--db", str(a_file / "x.db")]), "x.db")
    _check(CliRunner().invoke(app, [*argv, "--db", str(tmp_path)]), "is a directory")
    res = CliRunner().invoke(app, [*argv, "--db", "mysql://u:s3cret@127.0.0.1/db"])
    _check(res, "driver is not installed", "u:***@")
    assert "s3cret" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_saving_to_an_unusable_store_fails_before_any_work(tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "prompt": "hi"}\n')
    out = tmp_path / "out.jsonl"
    out.write_text("previous\n")
    for db, needle in [
        (str(a_file / "x.db"), "is a file"),
        (str(tmp_path), "is a directory"),
        ("mysql://u@127.0.0.1/db", "driver"),
    ]:
        argv = ["llm", "run", str(items), "-m", "http://127.0.0.1:9/v1#m", "-q", "--no-cache"]
        res = CliRunner().invoke(app, [*argv, "--out", str(out), "--save", "--db", db])
        _check(res, needle)
        assert out.read_text() == "previous\n"


def test_bad_requests_on_an_existing_store(tmp_path, store):
    db = ["--db", str(store)]
    inv = CliRunner().invoke
    _check(inv(app, ["runs", "show", "999", *db]), "no such evaluation", "999")
    _check(inv(app, ["runs", "list", "--limit", "-1", *db]), "--limit")
    _check(inv(app, ["runs", "list", "--limit", "0", *db]), "--limit")
    _check(inv(app, ["runs", "list", "--status", "bogus", *db]), "status")
    _check(inv(app, ["runs", "list", "--format", "xml", *db]), "--format")
    _check(inv(app, ["runs", "show", "abc", *db]), "evaluation_id")
    _check(inv(app, ["runs", "export", "1", "--kind", "k", *db]), "not both")
    _check(inv(app, ["runs", "export", "1", "--out", str(tmp_path), *db]), "--out", "directory")
    _check(inv(app, ["runs", "latest", *db]), "--kind")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.db")) == []
