"""Units kept with each run (issue 30 item 1) and the paired comparison of stored runs
(items 2-6): store round trips on SQLite and PostgreSQL, the CLI end to end against
statsmodels and scipy on the same arrays, and bad input."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from assay.classification import ClassificationEvaluator
from assay.cli.main import app
from assay.compare import delong_test
from assay.store import Store

runner = CliRunner()
N = 300


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, N)
    scores = [np.clip(s * y + rng.normal(0.3, 0.3, N), 0, 1) for s in (0.4, 0.55, 0.42)]
    return y, scores


def _evaluator(y, s, uids=None) -> ClassificationEvaluator:
    ev = ClassificationEvaluator(metrics=["Accuracy", "ROCAUC"], score_thresholds=[0.5])
    uids = np.array([f"u{i}" for i in range(N)]) if uids is None else uids
    return ev.add_arrays(y, np.column_stack([1 - s, s]), labels=[0, 1], uids=uids)


def test_units_round_trip_on_sqlite_and_postgresql(store_url):
    y, (s, _, _) = _data()
    ev = _evaluator(y, s)
    ms = ev.compute()
    with Store(store_url) as st:
        eid = st.save(ms, kind="classification", name="base", tags={"prompt": "v1"})
        bare = st.save(ms, kind="classification", units=False)
        back = st.units(eid)
        assert st.units(bare) is None
        assert 0 < st.units_size(eid) < 20 * N
        got = st.get(eid)
        assert (got.name, got.tags) == ("base", {"prompt": "v1"})
    assert type(back) is ClassificationEvaluator
    assert back.compute() == ms  # the same records from the rebuilt evaluator
    mine, theirs = ev.state(), back.state()
    assert sorted(mine) == sorted(theirs)
    for k in mine:
        assert np.array_equal(np.asarray(mine[k]), np.asarray(theirs[k])), k
    w = np.random.default_rng(1).integers(0, 3, (4, N)).astype(float)
    for a, b in zip(ev.tally(), back.tally()):
        a, b = a.ready(), b.ready()
        assert a.keys == b.keys and np.array_equal(a.ids, b.ids)
        if a.rows == N and a.unit is None:
            assert np.array_equal(a.values(w), b.values(w), equal_nan=True)


def test_a_store_without_the_units_table_reads_and_upgrades(tmp_path):
    db = tmp_path / "old.db"
    y, (s, _, _) = _data()
    with Store(str(db)) as st:
        a = st.save(_evaluator(y, s).compute(), kind="classification")
        b = st.save(_evaluator(y, s).compute(), kind="classification")
    with sqlite3.connect(db) as c:  # a store from before issue 30
        c.execute("DROP TABLE assay_units")
        c.execute("DROP TABLE assay_names")
    before = db.read_bytes()
    r = runner.invoke(app, ["compare", str(a), str(b), "--db", str(db)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert {row[f"test_{b}"] for row in out["rows"]} == {"unpaired"}
    assert "no units kept" in r.stderr
    assert db.read_bytes() == before  # reading wrote nothing
    r = runner.invoke(app, ["runs", "list", "--db", str(db)])
    assert r.exit_code == 0 and json.loads(r.stdout)[0]["name"] is None
    with Store(str(db)) as st:
        assert set(st.upgraded) == {"assay_units", "assay_names"}


def _save_cli(tmp_path, db, y, s, name, *extra):
    path = tmp_path / f"{name}.csv"
    pd.DataFrame({"uid": [f"d{i}" for i in range(len(y))], "y": y, "p": s}).to_csv(
        path, index=False
    )
    args = ["classification", "--data", str(path), "--y-true", "y", "--y-score", "p"]
    args += ["--uid-column", "uid", "--metrics", "Accuracy,ROCAUC", "--score-thresholds", "0.0"]
    r = runner.invoke(app, [*args, "--save", "--db", str(db), "--name", name, *extra])
    assert r.exit_code == 0, r.output
    return int(r.stderr.split("saved evaluation ")[1].split()[0])


def test_cli_compare_against_statsmodels_and_scipy(tmp_path):
    db = tmp_path / "s.db"
    y, scores = _data(3)
    ids = [_save_cli(tmp_path, db, y, s, f"model-{i}", "--tag", f"i={i}") for i, s in
           enumerate(scores)]  # fmt: skip
    r = runner.invoke(app, ["compare", *map(str, ids), "--db", str(db), "--mde", "0.05"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["labels"][str(ids[1])] == f"model-1 (#{ids[1]})"
    rows = {row["type"]: row for row in out["rows"] if row["parameters"].find("=1") >= 0 or
            row["type"] == "Accuracy"}  # fmt: skip
    right = [((s >= 0.5).astype(int) == y).astype(int) for s in scores]
    acc = rows["Accuracy"]
    ps = []
    for i, b in enumerate(ids[1:], start=1):
        a0, a1 = right[0], right[i]
        table = [[np.sum((a0 == 1) & (a1 == 1)), np.sum((a0 == 1) & (a1 == 0))],
                 [np.sum((a0 == 0) & (a1 == 1)), np.sum((a0 == 0) & (a1 == 0))]]  # fmt: skip
        p = sm_mcnemar(table, exact=True).pvalue
        assert acc[f"test_{b}"] == "mcnemar"
        assert acc[f"p_value_{b}"] == pytest.approx(p, rel=1e-10)
        assert acc[f"diff_{b}"] == pytest.approx(a1.mean() - a0.mean(), abs=1e-12)
        assert acc[f"n_paired_{b}"] == N
        assert acc[f"diff_ci_low_{b}"] < acc[f"diff_{b}"] < acc[f"diff_ci_high_{b}"]
        sd = (a1 - a0).std(ddof=1) / np.sqrt(N)
        assert acc[f"mde_{b}"] == pytest.approx((1.959963984540054 + 0.8416212335729143) * sd)
        ps.append(p)
    holm = multipletests(ps, method="holm")[1]
    for b, q in zip(ids[1:], holm):
        assert acc[f"p_adjusted_{b}"] == pytest.approx(q, rel=1e-10)
    auc = rows["ROCAUC"]
    for i, b in enumerate(ids[1:], start=1):
        ref = delong_test(y, scores[0], scores[i])
        assert auc[f"test_{b}"] == "delong"
        assert auc[f"p_value_{b}"] == pytest.approx(ref.p_value, rel=1e-10)
        z = stats.norm.ppf(0.975)
        assert auc[f"diff_ci_low_{b}"] == pytest.approx(ref.diff - z * ref.se, rel=1e-9)
    r = runner.invoke(app, ["compare", *map(str, ids), "--db", str(db), "--adjust", "bh"])
    got = [row for row in json.loads(r.stdout)["rows"] if row["type"] == "Accuracy"][0]
    bh = multipletests(ps, method="fdr_bh")[1]
    assert [got[f"p_adjusted_{b}"] for b in ids[1:]] == pytest.approx(list(bh), rel=1e-10)


def test_cli_rank_table_names_and_units_that_differ(tmp_path):
    db = tmp_path / "s.db"
    y, scores = _data(5)
    long = "a-model-name-that-is-long-enough-to-wrap-" * 2
    a = _save_cli(tmp_path, db, y, scores[0], "base")
    b = _save_cli(tmp_path, db, y, scores[1], long)
    r = runner.invoke(app, ["compare", str(a), str(b), "--db", str(db), "--rank", "ROCAUC"])
    assert r.exit_code == 0, r.output
    ranks = json.loads(r.stdout)["ranks"]
    assert {x["run"] for x in ranks} == {a, b}
    for x in ranks:
        assert 1 <= x["rank_low"] <= x["rank"] <= x["rank_high"] <= 2 and x["group"]
    r = runner.invoke(app, ["compare", str(a), str(b), "--db", str(db), "-f", "table"],
                      terminal_width=80)  # fmt: skip
    assert r.exit_code == 0, r.output
    flat = "".join(line.strip(" │┃") for line in r.stdout.splitlines())
    assert long.replace(" ", "") in flat.replace(" ", "").replace("│", "").replace("┃", "")
    # units that differ: a run on the first 200 datums only
    c = _save_cli(tmp_path, db, y[:200], scores[2][:200], "part")
    r = runner.invoke(app, ["compare", str(a), str(c), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "200 units paired" in r.stderr and "100 only in" in r.stderr
    acc = [row for row in json.loads(r.stdout)["rows"] if row["type"] == "Accuracy"][0]
    assert acc[f"n_paired_{c}"] == 200


def test_runs_list_shows_names_and_no_units_skips(tmp_path):
    db = tmp_path / "s.db"
    y, scores = _data(1)
    a = _save_cli(tmp_path, db, y, scores[0], "first", "--no-units", "--tag", "k=v")
    r = runner.invoke(app, ["runs", "list", "--db", str(db)])
    row = json.loads(r.stdout)[0]
    assert (row["id"], row["name"], row["tags"]) == (a, "first", {"k": "v"})
    r = runner.invoke(app, ["runs", "list", "--db", str(db), "-f", "table"])
    assert "first" in r.stdout
    with Store(str(db), create=False) as st:
        assert st.units(a) is None


def _one_line(args, *needles):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    for n in needles:
        assert n in lines[0], lines[0]


def test_bad_input_is_one_line_exit_2(tmp_path):
    db = tmp_path / "s.db"
    y, scores = _data(2)
    a = _save_cli(tmp_path, db, y, scores[0], "a")
    b = _save_cli(tmp_path, db, y, scores[1], "b")
    with Store(str(db)) as st:
        from assay.results import Metric, MetricSet

        other = st.save(MetricSet([Metric("Mean", 0.5)]), kind="stats")
    d = ["--db", str(db)]
    _one_line(["compare", str(a), str(other), *d], "different kinds")
    _one_line(["compare", str(a), "999", *d], "999")
    _one_line(["compare", str(a), str(b), "--rank", "Nope", *d], "--rank", "Nope")
    _one_line(["compare", str(a), str(b), "--adjust", "bonf", *d], "--adjust", "bonf")
    _one_line(["compare", str(a), str(b), "--mde", "0", *d], "--mde")
    _one_line(["compare", str(a), str(b), "--mde", "-1", *d], "--mde")
    _one_line(["plan", "--from", str(a), "--mde", "0", *d], "--mde")
    path = tmp_path / "x.csv"
    pd.DataFrame({"y": y, "p": scores[0]}).to_csv(path, index=False)
    base = ["classification", "--data", str(path), "--y-true", "y", "--y-score", "p", "--save"]
    _one_line([*base, *d, "--tag", "novalue"], "--tag", "KEY=VALUE")


def test_plan_from_a_pilot_run(tmp_path):
    db = tmp_path / "s.db"
    y, scores = _data(4)
    a = _save_cli(tmp_path, db, y, scores[0], "pilot")
    r = runner.invoke(app, ["plan", "--from", str(a), "--mde", "0.02", "--db", str(db)])
    assert r.exit_code == 0, r.output
    acc = [row for row in json.loads(r.stdout)["rows"] if row["type"] == "Accuracy"][0]
    right = ((scores[0] >= 0.5).astype(int) == y).astype(float)
    se = right.std(ddof=1) / np.sqrt(N)  # the bootstrap se is close to the binomial one
    assert acc["se"] == pytest.approx(se, rel=0.15)
    k = (1.959963984540054 + 0.8416212335729143) * np.sqrt(2) * acc["se"] * np.sqrt(N) / 0.02
    assert acc["n_needed"] == int(np.ceil(k * k))


def test_ignore_param_lines_up_runs_that_differ_in_a_setting(tmp_path):
    from assay.results import Metric, MetricSet

    db = tmp_path / "s.db"
    with Store(str(db)) as st:
        a = st.save(MetricSet([Metric("Accuracy", 0.5, {"answer_mode": "letter", "k": 1})]),
                    kind="llm_exam")  # fmt: skip
        b = st.save(MetricSet([Metric("Accuracy", 0.7, {"answer_mode": "logprob", "k": 1})]),
                    kind="llm_exam")  # fmt: skip
    r = runner.invoke(app, ["compare", str(a), str(b), "--db", str(db)])
    assert len(json.loads(r.stdout)["rows"]) == 2  # nothing matched
    r = runner.invoke(app, ["compare", str(a), str(b), "--db", str(db), "--ignore-param",
                            "answer_mode"])  # fmt: skip
    (row,) = json.loads(r.stdout)["rows"]
    assert row["parameters"] == "k=1" and row[f"diff_{b}"] == pytest.approx(0.2)
    assert row[f"test_{b}"] == "unpaired" and row[f"p_value_{b}"] is None


def test_units_of_an_evaluator_this_assay_lacks_compare_unpaired(tmp_path):
    db = tmp_path / "s.db"
    y, scores = _data(6)
    a = _save_cli(tmp_path, db, y, scores[0], "a")
    b = _save_cli(tmp_path, db, y, scores[1], "b")
    for bad in ("assay.nowhere:Gone", "os:system"):
        with sqlite3.connect(db) as c:
            c.execute("UPDATE assay_units SET evaluator = ? WHERE evaluation_id = ?", (bad, a))
        r = runner.invoke(app, ["compare", str(a), str(b), "--db", str(db)])
        assert r.exit_code == 0, r.output
        assert "cannot be rebuilt" in r.stderr
        assert {row[f"test_{b}"] for row in json.loads(r.stdout)["rows"]} == {"unpaired"}
