"""The ``assay scoring`` command end to end: files written, formats, safety of --out-dir."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.scoring import scoring_tables

runner = CliRunner()


def _frame(seed: int = 6, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2[rng.random(n) > 0.25] = np.nan
    return pd.DataFrame(
        {
            "h": h,
            "h2": h2,
            "m": t + rng.normal(0, 0.5, n),
            "g": rng.choice(list("abc"), n),
            "L1": rng.choice(["en", "es"], n),
        }
    )


@pytest.fixture
def scores(tmp_path):
    df = _frame()
    df.loc[0, "h"] = np.nan
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return df, path


def _run(*args: str):
    return runner.invoke(app, ["scoring", *args])


def test_cli_writes_rsmtool_named_csvs_and_prints_json_by_default(scores, tmp_path):
    df, path = scores
    out = tmp_path / "out"
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m", "--human2", "h2"),
        *("--subgroup", "g", "--subgroup", "L1", "--out-dir", str(out)),
    )
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)  # JSON is the default format, as for every command
    names = (
        "eval",
        "eval_short",
        "consistency",
        "true_score_eval",
        "eval_by_g",
        "eval_by_L1",
        "fairness_metrics_by_g",
        "fairness_metrics_by_L1",
        "undefined_metrics",
    )
    for name in names:
        assert (out / f"{name}.csv").exists(), name
    back = pd.read_csv(out / "eval.csv", index_col=0)
    res = scoring_tables(df, human="h", system="m", human2="h2", group_columns=["g", "L1"])
    np.testing.assert_allclose(back.to_numpy(float), res["eval"].to_numpy(float), rtol=1e-12)
    records = json.loads((out / "metrics.json").read_text())
    assert records == printed
    assert any(rec["type"] == "PRMSE" for rec in records)
    by_group = [rec for rec in records if rec["parameters"].get("group_column") == "g"]
    assert by_group and all("subgroup" not in rec["parameters"] for rec in records)
    assert "dropped responses" in r.stderr


def test_out_writes_the_printed_records_beside_the_tables(scores, tmp_path):
    _, path = scores
    base = ("--data", str(path), "--human", "h", "--system", "m", "--subgroup", "g")
    printed = _run(*base, "--out-dir", str(tmp_path / "a"))
    assert printed.exit_code == 0, printed.output
    out = tmp_path / "records.json"
    r = _run(*base, "--out-dir", str(tmp_path / "b"), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert r.stdout == ""  # JSON goes to --out, not also to the terminal
    assert json.loads(out.read_text()) == json.loads(printed.stdout)
    assert out.read_text() == (tmp_path / "b" / "metrics.json").read_text()
    # --format table prints the tables and still writes the records to --out
    out.unlink()
    r = _run(*base, "--out-dir", str(tmp_path / "c"), "-o", str(out), "-f", "table")
    assert r.exit_code == 0, r.output
    assert "all tables written to" in r.stdout
    assert json.loads(out.read_text()) == json.loads(printed.stdout)


def test_out_is_refused_in_rsmeval_mode(scores, tmp_path):
    _, path = scores
    out = tmp_path / "records.json"
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m", "--trim-min", "1"),
        *("--trim-max", "6", "--out-dir", str(tmp_path / "o"), "--out", str(out)),
    )
    assert r.exit_code == 2
    assert "--out" in r.stderr and "rsmeval" in r.stderr
    assert "Traceback" not in r.output
    assert not out.exists() and not (tmp_path / "o" / "metrics.json").exists()


def test_every_file_is_readable_under_umask_022(scores, tmp_path):
    _, path = scores
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        r = _run("--data", str(path), "--human", "h", "--system", "m", "--out-dir", str(out))
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    files = list(out.iterdir())
    assert len(files) >= 4
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o644, f


def test_table_format_has_no_negative_zero(tmp_path):
    # m - h has mean exactly 0 up to rounding: SMD prints as 0.0000, never -0.0000
    h = np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5.0])
    m = h + np.array([0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.05, -0.05, 0.7, -0.7])
    path = tmp_path / "s.csv"
    pd.DataFrame({"h": h, "m": m}).to_csv(path, index=False)
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m"),
        *("--out-dir", str(tmp_path / "o"), "--format", "table"),
    )
    assert r.exit_code == 0, r.output
    assert "SMD" in r.stdout
    assert "-0.0000" not in r.stdout
    smd = float(pd.read_csv(tmp_path / "o" / "eval.csv", index_col=0).loc["m", "SMD"])
    assert abs(smd) < 1e-12


def test_group_column_names_never_escape_the_out_dir(tmp_path):
    df = _frame(1, 120).rename(columns={"g": "x/../../PWNED"})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "esc" / "out"
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m"),
        *("--subgroup", "x/../../PWNED", "--out-dir", str(out)),
    )
    assert r.exit_code == 0, r.output
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert written - {"d.csv"} == {f"esc/out/{p.name}" for p in out.iterdir()}
    assert "eval_by_x_.._.._PWNED.csv" in {p.name for p in out.iterdir()}
    assert not (tmp_path / "PWNED.csv").exists() and not (tmp_path / "esc" / "PWNED.csv").exists()


def test_colliding_safe_names_get_distinct_files(tmp_path):
    df = _frame(2, 120)
    df["a/b"] = df["g"]
    df["a_b"] = df["L1"]
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m"),
        *("--subgroup", "a/b", "--subgroup", "a_b", "--out-dir", str(out)),
    )
    assert r.exit_code == 0, r.output
    by = sorted(p.name for p in out.glob("eval_by_*"))
    assert len(by) == 2 and len(set(by)) == 2, by


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_huge_scores_exit_2_and_leave_the_old_out_dir_untouched(scores, tmp_path):
    df, path = scores
    out = tmp_path / "out"
    ok = _run("--data", str(path), "--human", "h", "--system", "m", "--out-dir", str(out))
    assert ok.exit_code == 0, ok.output
    before = _snapshot(out)
    for value in (1e308, -1e308):
        bad = df.copy()
        bad.loc[5, "m"] = value
        bad_path = tmp_path / "bad.csv"
        bad.to_csv(bad_path, index=False)
        r = _run("--data", str(bad_path), "--human", "h", "--system", "m", "--out-dir", str(out))
        assert r.exit_code == 2, r.output
        assert "bad.csv" in r.output and "row 6" in r.output and "'m'" in r.output
        assert "Traceback" not in r.output
        assert _snapshot(out) == before


def test_failing_save_leaves_the_out_dir_untouched(scores, tmp_path):
    _, path = scores
    out = tmp_path / "out"
    out.mkdir()
    (out / "metrics.json").write_text("old\n")
    not_a_db = tmp_path / "store.db"
    not_a_db.write_text("not a database\n")
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m", "--out-dir", str(out)),
        *("--save", "--db", str(not_a_db)),
    )
    assert r.exit_code == 2, r.output
    assert _snapshot(out) == {"metrics.json": b"old\n"}


def test_save_records_the_evaluation(scores, tmp_path):
    _, path = scores
    db = tmp_path / "assay.db"
    r = _run(
        *("--data", str(path), "--human", "h", "--system", "m"),
        *("--out-dir", str(tmp_path / "o"), "--save", "--db", str(db)),
    )
    assert r.exit_code == 0, r.output
    from assay.store import Store

    with Store(str(db)) as store:
        rows = store.list()
    assert [row.kind for row in rows] == ["scoring"]


def test_help_is_fast_to_import():
    # the command module imports no scoring computation, pandas-free parts only
    import subprocess
    import sys

    code = (
        "import sys, assay.cli.scoring;"
        "bad = [m for m in ('assay.scoring.evaluator', 'statsmodels', 'scipy.stats') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
