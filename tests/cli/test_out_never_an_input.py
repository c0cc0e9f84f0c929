"""An ``--out`` (or a file under ``--out-dir``) that is a file the command reads is refused:
the store, the response cache, an input; by path, through ``..``, a symbolic or a hard link;
one line, exit 2, every file byte for byte as before, no evaluation stored, no model call
(issue 36, item 1)."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.results import Metric
from assay.store import Store

runner = CliRunner()


@pytest.fixture
def work(tmp_path: Path) -> dict[str, Path]:
    """A store with one run, classification inputs, an LLM items file."""
    gts = pd.DataFrame({"uid": ["a", "b", "c", "d"], "value": ["x", "y", "x", "y"]})
    pds = pd.DataFrame(
        {
            "uid": ["a", "a", "b", "b", "c", "c", "d", "d"],
            "value": ["x", "y"] * 4,
            "score": [0.9, 0.1, 0.3, 0.7, 0.4, 0.6, 0.2, 0.8],
        }
    )
    gts.to_csv(tmp_path / "g.csv", index=False)
    pds.to_csv(tmp_path / "p.csv", index=False)
    with Store(f"sqlite:///{tmp_path / 'n.db'}") as st:
        st.save([Metric("Accuracy", 0.5)], kind="classification", dataset="d")
    gc.collect()  # every connection closed: the store is one file, as a copied store is
    with sqlite3.connect(tmp_path / "n.db") as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "prompt": "hi"}\n')
    return {
        "db": tmp_path / "n.db",
        "g": tmp_path / "g.csv",
        "p": tmp_path / "p.csv",
        "items": tmp_path / "items.jsonl",
    }


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _refused(args: list[str], root: Path, *needles: str) -> str:
    before = _snapshot(root)
    r = runner.invoke(app, args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert _snapshot(root) == before  # nothing written, nothing replaced
    return lines[0]


def _runs(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM assay_evaluations").fetchone()[0])


def _classification(w: dict[str, Path]) -> list[str]:
    return ["classification", "--groundtruths", str(w["g"]), "--predictions", str(w["p"])]


def test_export_and_report_onto_their_store(work, tmp_path):
    db = str(work["db"])
    _refused(["runs", "export", "--db", db, "--out", db], tmp_path, "--out", "evaluation store")
    _refused(["report", "1", "--db", db, "--out", db], tmp_path, "evaluation store")
    # the same file through another path: a folder and back, a symbolic link, a hard link
    (tmp_path / "sub").mkdir()
    os.symlink(work["db"], tmp_path / "link.db")
    os.link(work["db"], tmp_path / "hard.db")
    for other in (tmp_path / "sub" / ".." / "n.db", tmp_path / "link.db", tmp_path / "hard.db"):
        _refused(["runs", "export", "--db", db, "--out", str(other)], tmp_path, str(other))
    assert _runs(work["db"]) == 1


def test_save_then_out_onto_the_store_stores_nothing(work, tmp_path):
    db = str(work["db"])
    args = [*_classification(work), "--save", "--db", db, "--out", db]
    _refused(args, tmp_path, "--out", "evaluation store")
    assert _runs(work["db"]) == 1  # refused before the evaluation was stored
    # a store --save would create: the same path, refused before it exists
    new = tmp_path / "new.db"
    args = [*_classification(work), "--save", "--db", str(new), "--out", str(new)]
    _refused(args, tmp_path, "evaluation store")
    assert not new.exists()


def test_out_onto_an_input(work, tmp_path):
    _refused([*_classification(work), "--out", str(work["g"])], tmp_path, "--groundtruths")
    _refused([*_classification(work), "--out", str(work["p"])], tmp_path, "--predictions")
    os.link(work["g"], tmp_path / "g-again.csv")
    _refused([*_classification(work), "--out", str(tmp_path / "g-again.csv")], tmp_path, "input")
    # a file of a Parquet dataset given as a folder
    ds = tmp_path / "ds"
    ds.mkdir()
    pd.DataFrame({"y": [0, 1, 1, 0], "s": [0.1, 0.9, 0.6, 0.3]}).to_parquet(ds / "a.parquet")
    wide = ["classification", "--data", str(ds), "--y-true", "y", "--y-score", "s"]
    _refused([*wide, "--out", str(ds / "a.parquet")], tmp_path, "--data", "a.parquet")
    # the default store and the default cache are never an --out either
    home = Path(os.environ["ASSAY_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "assay.db").write_bytes(work["db"].read_bytes())
    _refused([*_classification(work), "--out", str(home / "assay.db")], tmp_path, "store")


def test_llm_run_out_onto_its_cache_or_items_makes_no_call(work, tmp_path, chat_server):
    srv = chat_server(responder=lambda messages: "hello")
    cache = tmp_path / "c.sqlite"
    sqlite3.connect(cache).close()
    base = ["llm", "run", str(work["items"]), "--model", srv.spec(), "--quiet"]
    _refused([*base, "--cache", str(cache), "--out", str(cache)], tmp_path, "response cache")
    _refused([*base, "--no-cache", "--out", str(work["items"])], tmp_path, "input")
    assert srv.calls == 0


def test_scoring_out_dir_never_replaces_its_input(tmp_path):
    out_dir = tmp_path / "tables"
    out_dir.mkdir()
    data = out_dir / "eval.csv"  # the name of a table the command writes
    pd.DataFrame({"h": [1, 2, 3, 4] * 5, "m": [1.2, 2.1, 2.9, 4.2] * 5}).to_csv(data, index=False)
    args = ["scoring", "--data", str(data), "--human", "h", "--system", "m"]
    _refused([*args, "--out-dir", str(out_dir)], tmp_path, "eval.csv", "input")
    r = runner.invoke(app, [*args, "--out-dir", str(tmp_path / "elsewhere")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "elsewhere" / "metrics.json").read_text())
