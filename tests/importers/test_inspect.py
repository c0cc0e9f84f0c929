"""Inspect AI logs, made by inspect-ai itself (conftest.py), imported and read by assay.

The oracle is Inspect: its own ``read_eval_log`` gives the metrics it computed; assay's
numbers (the stored records, its recomputation from the samples, ``assay stats`` on the
log) must equal them within 1e-12, with the errored sample counted as failed.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.importers.inspect_import import inspect_run
from assay.importers.inspect_log import read_inspect_log, sample_scores
from assay.importers.recompute import assay_records
from assay.stats.metric_registry import get_metric
from assay.stats.spec_text import reducer_from_text
from assay.store import Store

runner = CliRunner()
TOL = 1e-12


def _inspect(path: Path):  # type: ignore[no-untyped-def]
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    metrics = {(s.scorer, n): m.value for s in log.results.scores for n, m in s.metrics.items()}
    return log, metrics


@pytest.mark.parametrize("name", ["a.eval", "a.json"])
def test_imported_records_are_the_logs_metrics_and_assay_recomputes_them(logs, name):
    log, theirs = _inspect(logs / name)
    run = inspect_run(logs / name)
    assert run.notices == []
    got = {(m.parameters["scorer"], m.parameters["log_metric"]): m for m in run.metrics}
    assert set(got) == set(theirs) and len(run.metrics) == len(theirs) == 6
    for key, m in got.items():
        assert abs(m.value - theirs[key]) <= TOL, key
        assert "assay_value" not in m.parameters and m.parameters.get("recomputed") is not False
        # assay's own computation from the samples, independently of the stored value
        scores = sample_scores(read_inspect_log(logs / name), key[0])
        [mine] = assay_records(scores, get_metric(key[1]), reducer_from_text("mean"))
        assert abs(mine.value - theirs[key]) <= TOL, key
    scored = {s.scorer: s.scored_samples for s in log.results.scores}
    for m in run.metrics:  # the errored sample is counted as failed, not dropped
        assert m.parameters["n"] == scored[m.parameters["scorer"]] == 8
        assert m.parameters["n_failed"] == 1


def test_record_parameters_follow_the_vocabulary(logs):
    from contract import documented_parameters

    keys = {k for m in inspect_run(logs / "a.eval").metrics for k in m.parameters}
    assert keys and keys <= documented_parameters()


def test_epoch_reducers_of_the_log_are_recomputed(logs):
    log, _ = _inspect(logs / "c.eval")
    theirs = {
        (s.scorer, s.reducer, n): m.value for s in log.results.scores for n, m in s.metrics.items()
    }
    run = inspect_run(logs / "c.eval")
    assert run.notices == [] and len(run.metrics) == len(theirs) == 18
    for m in run.metrics:
        p = m.parameters
        assert abs(m.value - theirs[(p["scorer"], p["reducer"], p["log_metric"])]) <= TOL
    assert {m.parameters["reducer"] for m in run.metrics} == {"max", "pass_at_2", "at_least_2"}


def test_items_are_units_by_sample_and_epoch_errored_ones_kept(logs):
    log, _ = _inspect(logs / "a.eval")
    run = inspect_run(logs / "a.eval")
    assert len(run.items) == len(log.samples) == 27
    keys = [(it["item_id"], it["params"]["epoch"]) for it in run.items]
    assert len(set(keys)) == 27
    by_key = {(it["item_id"], it["params"]["epoch"]): it for it in run.items}
    for s in log.samples:
        it = by_key[(str(s.id), s.epoch)]
        assert it["ok"] is (s.error is None)
        if s.error is not None:
            assert "sample 4 always fails" in it["error"]
            assert it["parsed"] == {"match": None, "length_score": None}
            continue
        assert it["raw_answer"] == s.output.completion
        assert it["prompt"] == s.input and it["info"]["target"] == s.target
        for scorer, score in s.scores.items():
            assert it["parsed"][scorer] == score.value
            assert it["info"]["scores"][scorer]["answer"] == score.answer
        assert it["info"]["metadata"] == s.metadata
    assert run.model == log.eval.model and run.dataset == "doubling"
    assert run.parameters["epochs"] == 3 and run.parameters["failed_samples"] == 3


def test_eval_and_json_forms_give_the_same_scores(logs):
    a, b = inspect_run(logs / "a.eval"), inspect_run(logs / "a.json")
    assert [m.value for m in a.metrics] == [m.value for m in b.metrics]
    assert [(i["item_id"], i["params"], i["parsed"]) for i in a.items] == [
        (i["item_id"], i["params"], i["parsed"]) for i in b.items
    ]


@pytest.mark.parametrize(
    ("scorer", "metrics"),
    [(None, ["accuracy", "stderr"]), ("length_score", ["mean", "stderr", "std", "var"])],
)
def test_stats_on_a_log_gives_inspects_numbers(logs, scorer, metrics):
    _, theirs = _inspect(logs / "a.eval")
    args = ["stats", "--scores", str(logs / "a.eval")]
    args += ["--scorer", scorer] if scorer else []
    for m in metrics:
        args += ["--metric", m]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    recs = json.loads(res.stdout)
    assert [r["type"].lower() for r in recs] == metrics
    for r, name in zip(recs, metrics):
        assert abs(r["value"] - theirs[(scorer or "match", name)]) <= TOL
        assert r["parameters"]["n_failed"] == 1


@pytest.mark.parametrize("scorer", ["match", "length_score"])
def test_stats_on_a_log_defaults_to_the_logs_metrics(logs, scorer):
    _, theirs = _inspect(logs / "a.json")
    res = runner.invoke(app, ["stats", "--scores", str(logs / "a.json"), "--scorer", scorer])
    assert res.exit_code == 0, res.output
    got = {r["type"].lower(): r["value"] for r in json.loads(res.stdout)}
    want = {name: v for (s, name), v in theirs.items() if s == scorer}
    assert set(got) == set(want)
    assert all(abs(got[k] - want[k]) <= TOL for k in want)


def test_stats_refuses_an_unknown_scorer_and_scorer_without_a_log(logs, tmp_path):
    res = runner.invoke(app, ["stats", "--scores", str(logs / "a.eval"), "--scorer", "nope"])
    assert res.exit_code == 2 and "no such scorer" in res.stderr and "match" in res.stderr
    p = tmp_path / "s.jsonl"
    p.write_text('{"value": 1}\n')
    res = runner.invoke(app, ["stats", "--scores", str(p), "--scorer", "match"])
    assert res.exit_code == 2 and "--scorer" in res.stderr


def test_a_metric_the_log_reports_differently_is_noticed(logs):
    obj = json.loads((logs / "a.json").read_text())
    true = obj["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    obj["results"]["scores"][0]["metrics"]["accuracy"]["value"] = true + 0.125
    (logs / "a.json").write_text(json.dumps(obj))
    run = inspect_run(logs / "a.json")
    [note] = run.notices
    assert "'match'" in note and "'accuracy'" in note
    acc = run.metrics.get("Accuracy", scorer="match")
    assert acc.value == true + 0.125 and abs(acc.parameters["assay_value"] - true) <= TOL


def _import(db: str, *paths: object, dry: bool = False):  # type: ignore[no-untyped-def]
    return runner.invoke(
        app, ["import", *map(str, paths), "--db", db] + (["--dry-run"] if dry else [])
    )


def test_import_stores_once_and_recognises_the_same_log(logs, db):
    res = _import(db, logs / "a.eval")
    assert res.exit_code == 0, res.output
    [entry] = json.loads(res.stdout)
    assert entry["status"] == "imported" and entry["items"] == 27
    with Store(db) as st:
        ev = st.get(entry["id"], items=True)
        assert ev.kind == "inspect" and ev.model == "mockllm/model"
        assert len(ev.items) == 27 and ev.parameters["import_format"] == "inspect"
        assert len(ev.parameters["import_sha256"]) == 64
    again = _import(db, logs / "a.eval")
    assert again.exit_code == 0
    [entry2] = json.loads(again.stdout)
    assert entry2 == {**entry, "status": "already_imported"}
    assert again.stderr.count("\n") == 1 and "already imported as evaluation" in again.stderr
    with Store(db) as st:
        assert len(st.list()) == 1


def test_dry_run_lists_and_stores_nothing(logs, db, tmp_path):
    res = _import(db, logs / "a.eval", logs / "b.eval", dry=True)
    assert res.exit_code == 0, res.output
    entries = json.loads(res.stdout)
    assert [e["status"] for e in entries] == ["would_import"] * 2
    assert "would import" in res.stderr
    assert not (tmp_path / "store.db").exists()


def test_a_directory_or_a_glob_imports_every_log(logs, db, tmp_path):
    (logs / "noscore.eval").rename(tmp_path / "noscore.eval")
    (logs / "notes.txt").write_text("not a log")
    res = _import(db, logs)
    assert res.exit_code == 0, res.output
    assert sorted(Path(e["source"]).name for e in json.loads(res.stdout)) == [
        "a.eval", "a.json", "b.eval", "c.eval",
    ]  # fmt: skip
    other = f"sqlite:///{tmp_path / 'other.db'}"
    res = _import(other, str(logs / "[ab].eval"))
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)) == 2


def test_two_imported_logs_of_the_same_samples_line_up(logs, db):
    res = _import(db, logs / "a.eval", logs / "b.eval")
    a_id, b_id = (e["id"] for e in json.loads(res.stdout))
    res = runner.invoke(app, ["compare", str(a_id), str(b_id), "--db", db])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows"]
    assert len(rows) == 6
    for r in rows:  # every record is matched in both runs
        assert r[f"value_{a_id}"] is not None and r[f"value_{b_id}"] is not None
        assert r[f"diff_{b_id}"] == pytest.approx(r[f"value_{b_id}"] - r[f"value_{a_id}"])
    # the units pair by (sample id, epoch), with each run's per-sample scores stored
    from inspect_ai.log import read_eval_log

    with Store(db) as st:
        units = [
            {(i.item_id, i.params["epoch"]): i.parsed for i in st.get(e, items=True).items}
            for e in (a_id, b_id)
        ]
    assert set(units[0]) == set(units[1]) and len(units[0]) == 27
    for unit, name in zip(units, ("a.eval", "b.eval")):
        for s in read_eval_log(str(logs / name)).samples:
            want = {k: v.value for k, v in s.scores.items()} if s.scores else None
            assert unit[(str(s.id), s.epoch)] == (want or {"match": None, "length_score": None})
    assert units[0] != units[1]


def _binary_jsonl(logs: Path) -> Path:
    p = logs / "samples_doubling_2026-01-01T00-00-00.000000.jsonl"
    p.write_bytes(bytes(range(256)) * 4)
    return p


def _zip_not_inspect(logs: Path) -> Path:
    p = logs / "other.eval"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("readme.txt", "hello")
    return p


def _truncated(logs: Path) -> Path:
    data = (logs / "a.eval").read_bytes()
    p = logs / "cut.eval"
    p.write_bytes(data[: len(data) // 2])
    return p


def _nul_id(logs: Path) -> Path:
    obj = json.loads((logs / "a.json").read_text())
    obj["samples"][0]["id"] = "one\u0000two"
    p = logs / "nul.json"
    p.write_text(json.dumps(obj))
    return p


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_nul_id, "NUL"),
        (_binary_jsonl, "a binary file"),
        (_zip_not_inspect, "not an Inspect log"),
        (lambda logs: logs / "noscore.eval", "no scores"),
        (_truncated, "truncated"),
    ],
)
def test_bad_input_is_one_line_naming_the_file_exit_2_nothing_stored(logs, tmp_path, make, says):
    bad = make(logs)
    db = f"sqlite:///{tmp_path / 'bad.db'}"
    for args in ([bad], [logs / "a.eval", bad]):  # alone, and after a good log
        res = _import(db, *args)
        assert res.exit_code == 2, res.output
        assert res.stdout == ""
        [line] = res.stderr.strip().splitlines()
        assert str(bad) in line and says in line, line
        assert not (tmp_path / "bad.db").exists()


def test_stats_on_a_log_stores_the_scorer_after_the_texts(logs, tmp_path):
    db = tmp_path / "runs.db"
    args = ["stats", "--scores", str(logs / "a.eval"), "--scorer", "length_score", "--ci", "0.9"]
    res = runner.invoke(app, [*args, "--save", "--db", str(db)])
    assert res.exit_code == 0, res.output
    with Store(str(db)) as store:
        run = store.get(store.list()[0].id)
    assert list(run.parameters.items())[:5] == [
        ("metrics", []),
        ("reducers", []),
        ("to_float", None),
        ("scorer", "length_score"),
        ("ci", 0.9),
    ]
