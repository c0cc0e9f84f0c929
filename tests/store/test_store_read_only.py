"""Reading a store never writes (issue 36, items 3-5).

* a store in a read-only folder (read by a process that file permissions bind: root
  without its overriding capabilities) is listed, shown, compared and reported;
* reads leave every file byte for byte as it was: no WAL switch (a foreign SQLite file, a
  0-byte file), no ``ALTER TABLE`` on an older store (named in the message, upgraded by
  ``assay runs upgrade`` or the first write); a foreign table of the same name is named;
* an id of 2^63 or more, a cell that is not JSON: one line, exit 2, naming the id and field.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.results import Metric
from assay.store import Store

runner = CliRunner()


def _store(path: Path, *, journal: str = "WAL") -> list[int]:
    """Two runs in a store that is one file (every connection closed), as a store copied
    into an archive is; its header keeps ``journal`` as its journal mode."""
    with Store(f"sqlite:///{path}") as st:
        ids = [
            st.save(
                [Metric("Accuracy", 0.5 + i / 10, {"ci_low": 0.4, "ci_high": 0.7})],
                kind="classification",
                dataset="iris",
                model=f"m{i}",
            )
            for i in range(2)
        ]
    gc.collect()
    _sql(path, f"PRAGMA journal_mode = {journal}")
    return ids


def _sql(path: Path, *statements: str) -> None:
    """Run statements on the file and close it (``with sqlite3.connect`` leaves it open)."""
    conn = sqlite3.connect(path)
    try:
        for st in statements:
            conn.execute(st)
        conn.commit()
    finally:
        conn.close()


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, but SQLite's runtime files beside a WAL store (``-wal``,
    ``-shm``: any reader of a WAL database makes them where the folder allows)."""
    files = [p for p in sorted(folder.iterdir()) if p.is_file()]
    return {p.name: p.read_bytes() for p in files if not p.name.endswith(("-wal", "-shm"))}


def _one_line_exit_2(args: list[str], *needles: str) -> str:
    r = runner.invoke(app, args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def _as_reader(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` by a user that file permissions bind: as root, root without the
    capabilities that override them (setpriv), so a folder of mode 0555 cannot be written."""
    cmd = [sys.executable, "-m", "assay", *args]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to read without root's overrides")
        drop = "-dac_override,-dac_read_search,-fowner"
        cmd = ["setpriv", f"--bounding-set={drop}", "--", *cmd]
    env = {**os.environ, "ASSAY_HOME": str(cwd / "home")}
    env.pop("ASSAY_DATABASE_URL", None)
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.slow
def test_a_store_in_a_read_only_folder_is_read(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    ids = _store(shared / "s.db")  # a WAL store: its readers need a -shm file beside it
    out = tmp_path / "out"
    out.mkdir()
    (shared / "s.db").chmod(0o444)
    shared.chmod(0o555)  # readable; nothing can be written beside the store
    before = _snapshot(shared)
    db = str(shared / "s.db")
    try:
        for args in (
            ["runs", "list", "--db", db],
            ["runs", "show", str(ids[0]), "--db", db],
            ["compare", *map(str, ids), "--db", db],
            ["report", *map(str, ids), "--db", db, "--out", str(out / "r.html")],
        ):
            r = _as_reader(args, tmp_path)
            assert r.returncode == 0, (args, r.stderr)
        assert '"m1"' in _as_reader(["runs", "list", "--db", db], tmp_path).stdout
        assert (out / "r.html").stat().st_size > 100_000
        assert _snapshot(shared) == before
        assert [p.name for p in shared.iterdir()] == ["s.db"]  # nothing made beside it
    finally:
        shared.chmod(0o755)


def test_reads_leave_every_file_as_it_was(tmp_path):
    folder = tmp_path / "st"
    folder.mkdir()
    ids = _store(folder / "s.db", journal="DELETE")  # a reader must not switch it to WAL
    before = _snapshot(folder)
    db = str(folder / "s.db")
    for args in (
        ["runs", "list", "--db", db],
        ["runs", "show", str(ids[1]), "--db", db],
        ["runs", "latest", "--kind", "classification", "--db", db],
        ["runs", "export", "--db", db],
        ["compare", *map(str, ids), "--db", db],
    ):
        r = runner.invoke(app, args)
        assert r.exit_code == 0, (args, r.output)
    assert _snapshot(folder) == before  # the journal mode too: byte 18 of the header
    assert before["s.db"][18] == 1


def test_a_foreign_or_empty_sqlite_file_is_named_and_untouched(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    foreign = tmp_path / "foreign.db"
    _sql(foreign, "CREATE TABLE assay_evaluations (x INTEGER)",
         "INSERT INTO assay_evaluations VALUES (1)")  # fmt: skip
    before = _snapshot(tmp_path)
    _one_line_exit_2(["runs", "list", "--db", str(empty)], str(empty), "nothing saved")
    line = _one_line_exit_2(["runs", "list", "--db", str(foreign)], str(foreign))
    assert "not an assay evaluation store" in line
    assert _snapshot(tmp_path) == before
    # a write refuses it too, naming it, and changes nothing in it
    r = runner.invoke(app, ["runs", "upgrade", "--db", str(foreign)])
    assert r.exit_code == 2 and "not an assay evaluation store" in r.stderr, r.output
    assert str(foreign) in r.stderr
    assert _snapshot(tmp_path) == before


def test_an_older_store_is_named_on_read_and_upgraded_by_a_write(tmp_path):
    db = tmp_path / "old.db"
    ids = _store(db)
    _sql(
        db,
        "ALTER TABLE assay_evaluations DROP COLUMN served_model",  # a store from before
        "ALTER TABLE assay_items DROP COLUMN info",
    )  # served_model and items.info; fmt: skip
    before = _snapshot(tmp_path)
    line = _one_line_exit_2(["runs", "show", str(ids[0]), "--db", str(db)], str(db), "older")
    assert "assay runs upgrade" in line and "served_model" in line
    assert _snapshot(tmp_path) == before
    r = runner.invoke(app, ["runs", "upgrade", "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "served_model" in r.stderr and "info" in r.stderr
    r = runner.invoke(app, ["runs", "show", str(ids[0]), "--db", str(db)])
    assert r.exit_code == 0 and '"m0"' in r.stdout, r.output
    r = runner.invoke(app, ["runs", "upgrade", "--db", str(db)])
    assert r.exit_code == 0 and "already up to date" in r.stderr


def test_huge_ids_and_cells_that_are_not_json(tmp_path):
    db = tmp_path / "s.db"
    ids = _store(db)
    url = str(db)
    for huge in (str(2**63), str(2**64 + 5), "99999999999999999999999"):
        for args in (
            ["runs", "show", huge],
            ["runs", "export", huge],
            ["compare", str(ids[0]), huge],
            ["report", huge, "--out", str(tmp_path / "r.html")],
        ):
            _one_line_exit_2([*args, "--db", url], f"evaluation {huge}", "id")
    assert not (tmp_path / "r.html").exists()
    _sql(db, f"UPDATE assay_metrics SET parameters = '{{oops' WHERE evaluation_id = {ids[1]}",
         f"UPDATE assay_evaluations SET parameters = 'nan-json' WHERE id = {ids[0]}")  # fmt: skip
    line = _one_line_exit_2(["runs", "show", str(ids[1]), "--db", url], f"evaluation {ids[1]}")
    assert "Accuracy parameters" in line and "not JSON" in line
    _one_line_exit_2(["runs", "list", "--db", url], f"evaluation {ids[0]}", "parameters")
    _one_line_exit_2(["compare", *map(str, ids), "--db", url], "not JSON")
    _one_line_exit_2(["report", str(ids[1]), "--db", url, "-o", str(tmp_path / "r.html")])
