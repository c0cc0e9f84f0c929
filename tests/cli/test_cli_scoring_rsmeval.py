"""``assay scoring --config FILE.json`` (an rsmeval experiment) and ``--trim-min/--trim-max``:
files named as RSMTool names them, the same tables as the API, clear exit 2 on bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.scoring import run_rsmeval

runner = CliRunner()


def _write(tmp_path, n=150, seed=5):
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1.2, n)
    df = pd.DataFrame(
        {
            "ID": [f"r{i}" for i in range(n)],
            "sc1": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "sc2": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "score": t * 1.3 - 0.9,
            "L1": rng.choice(["en", "fr"], n),
        }
    )
    df.to_csv(tmp_path / "pred.csv", index=False)
    cfg = {
        "experiment_id": "exp1",
        "predictions_file": "pred.csv",
        "system_score_column": "score",
        "second_human_score_column": "sc2",
        "id_column": "ID",
        "subgroups": ["L1"],
        "trim_min": 1,
        "trim_max": 5,
    }
    (tmp_path / "exp.json").write_text(json.dumps(cfg))
    return tmp_path / "exp.json"


def test_config_writes_rsmtool_named_tables(tmp_path):
    config = _write(tmp_path)
    out = tmp_path / "out"
    r = runner.invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    names = {p.name for p in out.iterdir()}
    for t in (
        "eval",
        "eval_short",
        "eval_by_L1",
        "confMatrix",
        "confMatrix_h1h2",
        "score_dist",
        "data_composition",
        "data_composition_by_L1",
        "test_excluded_composition",
        "estimates_osa_by_L1",
        "estimates_osd_by_L1",
        "estimates_csd_by_L1",
        "pred_processed",
        "true_score_eval",
        "consistency",
    ):
        assert f"exp1_{t}.csv" in names, t
    assert "exp1_test_excluded_responses.csv" not in names  # nothing excluded: no file
    api = run_rsmeval(config)
    mine = pd.read_csv(out / "exp1_eval.csv", index_col=0)
    assert list(mine.index) == ["raw", "raw_trim", "raw_trim_round"]
    np.testing.assert_allclose(mine.to_numpy(), api["eval"].to_numpy(), rtol=1e-15)
    by = pd.read_csv(out / "exp1_eval_by_L1.csv", index_col=0)
    assert list(by.index) == ["All data", "en", "fr"]


def test_trim_options_without_a_config(tmp_path):
    _write(tmp_path)
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        [
            "scoring",
            "--data",
            str(tmp_path / "pred.csv"),
            "--human",
            "sc1",
            "--system",
            "score",
            "--trim-min",
            "1",
            "--trim-max",
            "5",
            "--scale-with",
            "asis",
            "--subgroup",
            "L1",
            "--out-dir",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    ev = pd.read_csv(out / "eval.csv", index_col=0)
    assert list(ev.index) == ["scale", "scale_trim", "scale_trim_round"]
    assert ev.loc["scale_trim_round", "sys_min"] >= 1 and ev.loc["scale_trim_round", "sys_max"] <= 5
    assert ev.loc["scale", "sys_max"] > 5.5
    # one rater: no true_score_eval (as rsmeval), and a note saying why
    assert not (out / "true_score_eval.csv").exists()
    assert "note: true_score_eval not computed" in r.stderr


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--trim-min", "1"], "--trim-max"),
        (["--human", "sc1"], "drop the other scoring options"),
        (["--keep-zero-scores"], "drop the other scoring options"),
    ],
)
def test_option_mistakes_exit_2(tmp_path, args, expect):
    config = _write(tmp_path)
    base = ["scoring", "--out-dir", str(tmp_path / "o")]
    if "--human" in args or "--keep-zero-scores" in args:
        base += ["--config", str(config)]
    else:
        base += ["--data", str(tmp_path / "pred.csv"), "--human", "sc1", "--system", "score"]
    r = runner.invoke(app, [*base, *args])
    assert r.exit_code == 2
    assert expect in r.output
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        ("{not json", "cannot read the configuration"),
        ('{"experiment_id": "x"}', "missing required key 'predictions_file'"),
        (
            '{"experiment_id": "x", "predictions_file": "nope.csv", "system_score_column": "s",'
            ' "trim_min": 1, "trim_max": 5}',
            "nope.csv",
        ),
    ],
)
def test_bad_config_exits_2_with_one_line(tmp_path, content, expect):
    (tmp_path / "c.json").write_text(content)
    r = runner.invoke(
        app, ["scoring", "--config", str(tmp_path / "c.json"), "--out-dir", str(tmp_path / "o")]
    )
    assert r.exit_code == 2, r.output
    assert expect in r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


def test_missing_data_without_config_exits_2(tmp_path):
    r = runner.invoke(app, ["scoring", "--out-dir", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "--config" in r.output


def test_plain_mode_takes_a_tsv(tmp_path):
    _write(tmp_path)
    df = pd.read_csv(tmp_path / "pred.csv")
    df.to_csv(tmp_path / "pred.tsv", sep="\t", index=False)
    outs = []
    for name in ("pred.csv", "pred.tsv"):
        out = tmp_path / name.replace(".", "_")
        r = runner.invoke(
            app,
            [
                "scoring",
                "--data",
                str(tmp_path / name),
                "--human",
                "sc1",
                "--system",
                "score",
                "--out-dir",
                str(out),
            ],
        )
        assert r.exit_code == 0, r.output
        outs.append((out / "eval.csv").read_text())
    assert outs[0] == outs[1]


def _config_with(tmp_path, **extra):
    config = _write(tmp_path)
    cfg = json.loads(config.read_text())
    cfg.update(extra)
    config.write_text(json.dumps(cfg))
    return config


def test_save_stores_the_rsmeval_run_and_its_records(tmp_path):
    from assay.store import Store

    config = _config_with(tmp_path, scale_with="asis")
    db = tmp_path / "assay.db"
    out = tmp_path / "out"
    r = runner.invoke(
        app, ["scoring", "--config", str(config), "--out-dir", str(out), "--save", "--db", str(db)]
    )
    assert r.exit_code == 0, r.output
    with Store(str(db)) as store:
        rows = store.list()
        assert [row.kind for row in rows] == ["scoring"]
        ev = store.get(rows[0].id)
    assert ev.parameters["rsmeval"] == "exp1"
    assert ev.parameters["score_types"] == ["scale", "scale_trim", "scale_trim_round"]
    assert ev.dataset.endswith("pred.csv")
    table = pd.read_csv(out / "exp1_eval.csv", index_col=0)
    for score in ("scale", "scale_trim", "scale_trim_round"):
        rec = ev.metrics.get("QWK", table="eval", score=score)
        assert rec.value == pytest.approx(table.loc[score, "wtkappa"], abs=1e-12)
    by = pd.read_csv(out / "exp1_eval_by_L1.csv", index_col=0)
    rec = ev.metrics.get("DSM", table="eval_by_L1", score="scale_trim", group="fr")
    assert rec.value == pytest.approx(by.loc["fr", "DSM.scale_trim"], abs=1e-12)


def test_failing_save_leaves_the_out_dir_untouched(tmp_path):
    config = _write(tmp_path)
    not_a_db = tmp_path / "store.db"
    not_a_db.write_text("not a database\n")
    out = tmp_path / "out"
    r = runner.invoke(
        app,
        [
            "scoring",
            "--config",
            str(config),
            "--out-dir",
            str(out),
            "--save",
            "--db",
            str(not_a_db),
        ],
    )
    assert r.exit_code == 2, r.output
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["tsv", "xlsx", "TSV"])
def test_file_format_writes_the_same_tables(tmp_path, fmt):
    out_csv, out_fmt = tmp_path / "csv", tmp_path / "fmt"
    config = _write(tmp_path)
    r = runner.invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out_csv)])
    assert r.exit_code == 0, r.output
    config = _config_with(tmp_path, file_format=fmt)
    r = runner.invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out_fmt)])
    assert r.exit_code == 0, r.output
    ext = fmt.lower()
    csv_names = sorted(p.name for p in out_csv.iterdir())
    assert sorted(p.name for p in out_fmt.iterdir()) == [
        n.replace(".csv", f".{ext}") for n in csv_names
    ]
    for name in csv_names:
        a = pd.read_csv(out_csv / name)
        other = out_fmt / name.replace(".csv", f".{ext}")
        b = pd.read_excel(other) if ext == "xlsx" else pd.read_csv(other, sep="\t")
        b.columns = [str(c) for c in b.columns]  # confMatrix: numbers as headers in xlsx
        pd.testing.assert_frame_equal(a, b, check_dtype=False, rtol=1e-15)


def test_flags_and_candidates_filter_the_responses(tmp_path):
    config = _config_with(
        tmp_path,
        flag_column={"ok": "yes"},
        candidate_column="cand",
        min_items_per_candidate=2,
        min_n_per_group=10,
        flag_column_test={"ok": ["no"]},
    )
    df = pd.read_csv(tmp_path / "pred.csv")
    df["ok"] = ["yes" if i % 5 else "no" for i in range(len(df))]
    df["cand"] = [f"c{i // 3}" if i < 120 else f"d{i}" for i in range(len(df))]
    df.to_csv(tmp_path / "pred.csv", index=False)
    out = tmp_path / "out"
    r = runner.invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    assert "ignored (as rsmeval ignores them): flag_column_test" in r.output
    flagged = pd.read_csv(out / "exp1_test_responses_with_excluded_flags.csv")
    assert set(flagged["ok"]) == {"no"} and len(flagged) == 30
    excluded = pd.read_csv(out / "exp1_test_excluded_responses.csv")
    assert set(excluded["candidate"]).isdisjoint({f"c{i}" for i in range(40)})
    comp = pd.read_csv(out / "exp1_data_composition.csv")
    assert list(comp.columns) == ["partition", "responses", "candidates", "L1"]
    assert comp.loc[0, "responses"] == 150 - 30 - len(excluded)
    cells = pd.read_csv(out / "exp1_test_excluded_composition.csv")
    assert cells.loc[0, "numeric system score"] == len(excluded)  # a count, not empty


def test_xlsx_output_writes_formula_like_values_as_text(tmp_path):
    """Ids and group labels from the data that start like a formula (=, +, -, @) are text
    cells in the .xlsx tables, never formulas; numbers stay numbers."""
    import openpyxl

    config = _config_with(tmp_path, file_format="xlsx")
    df = pd.read_csv(tmp_path / "pred.csv")
    df["ID"] = [f'=HYPERLINK("http://x/{i}")' if i % 2 else f"@r{i}" for i in range(len(df))]
    df["L1"] = ["=1+1" if i % 3 else "-en" for i in range(len(df))]
    df.to_csv(tmp_path / "pred.csv", index=False)
    out = tmp_path / "out"
    r = runner.invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    checked = 0
    for name in ("exp1_pred_processed.xlsx", "exp1_test_metadata.xlsx", "exp1_eval_by_L1.xlsx"):
        ws = openpyxl.load_workbook(out / name).active
        for row in ws.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (name, cell.coordinate, cell.value)
                if isinstance(cell.value, str) and cell.value[:1] in "=+-@":
                    assert cell.data_type == "s" and cell.quotePrefix
                    checked += 1
    assert checked > 300
    ws = openpyxl.load_workbook(out / "exp1_pred_processed.xlsx").active
    assert ws["A2"].value == "@r0" and ws["B2"].data_type == "n"
