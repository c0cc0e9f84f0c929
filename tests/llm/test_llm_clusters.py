"""``cluster`` on the LLM evaluations (issue 22): every interval resamples whole clusters.

Each interval is checked against a naive loop: draw the clusters (sorted by value) with
``assay.uncertainty.intervals.resample_counts`` over them, copy every item of every drawn cluster as
often as it was drawn, evaluate the copy with a fresh evaluator (no interval), take the
percentile interval of the values (1e-12). Suites run end to end on the loopback chat
server (the calls counted); a bad or missing cluster column exits 2 with one line before
any call; the records keep ``cluster`` through the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm import RunOptions, evaluate
from assay.llm.judge.evaluator import JudgeEvaluator
from assay.llm.pairwise import analyze
from assay.llm.pairwise.tally import ident
from assay.llm.suites.language import LanguageEvaluator, LanguageSuite
from assay.stats.means import datum_record
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table
from assay.text.evaluator import TextEvaluator
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 40, 3
runner = CliRunner()


def _quantiles(values: list[float]) -> list[float]:
    v = np.array(values, dtype=float)
    return np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


def _naive(
    clusters: np.ndarray, values: Callable[[np.ndarray], dict[Any, float]], seed: int = SEED
) -> dict[Any, list[float]]:
    """Percentile intervals of ``values(rows)`` over resamples of whole clusters: the rows
    of each drawn cluster copied as often as it was drawn."""
    names = sorted(set(clusters.tolist()))
    rows = {g: np.flatnonzero(clusters == g) for g in names}
    found: dict[Any, list[float]] = {}
    for k in np.concatenate(list(resample_counts(np.ones(len(names), np.int64), B, seed))):
        idx = np.concatenate([rows[g] for g, c in zip(names, k) for _ in range(int(c))])
        for key, v in values(idx).items():
            found.setdefault(key, []).append(v)
    return {key: _quantiles(v) for key, v in found.items()}


def _whole(ms: Any, type: str, **kw: Any) -> Any:
    (m,) = [m for m in ms.filter(type, **kw) if "slice" not in m.parameters]
    return m


def _num(v: Any) -> float:
    return np.nan if v is None else float(v)


# ---------------------------------------------------------------- suites, end to end


def _exam(path: Path) -> Path:
    rows = ["language,subject,school,question,options,answer"]
    for i in range(30):
        lang, subject, school = ["en", "fr"][i % 2], ["math", "art"][i % 3 % 2], f"s{i % 6}"
        rows.append(
            f'{lang},{subject},{school},Question number {i}?,"[""opt a{i}"", ""opt b{i}""]",{i % 2}'
        )
    path.write_text("\n".join(rows) + "\n")
    return path


def _answer(messages: list[dict[str, Any]]) -> str:
    text = str(messages[-1]["content"])
    options = [line for line in text.splitlines() if line.startswith("opt ")]
    h = sum(map(ord, text))
    return "no idea" if h % 7 == 0 else json.dumps({"choice": options[h % len(options)]})


def test_suite_intervals_slices_and_gaps_equal_a_loop_over_drawn_clusters(tmp_path):
    srv = FakeChatServer(responder=_answer).start()
    try:
        suite = LanguageSuite(str(_exam(tmp_path / "exam.csv")), seed=0)
        opts = RunOptions(cache=tmp_path / "c.sqlite", retries=0, ci=LEVEL, num_bootstrap=B,
                          by=("subject",), cluster="school", bootstrap_seed=SEED)  # fmt: skip
        run = evaluate(suite, srv.spec(), opts)
        assert srv.calls == 30 and run.status == "finished"
        # the interval redrawn with another bootstrap seed: from the cache, no new call
        other = evaluate(LanguageSuite(str(tmp_path / "exam.csv"), seed=0), srv.spec(),
                         opts.replace(bootstrap_seed=SEED + 1))  # fmt: skip
        assert srv.calls == 30
    finally:
        srv.stop()
    args, cols = suite.items(run.calls)
    langs, outs = np.asarray(args["languages"]), np.asarray(args["outcomes"])
    school, subject = np.asarray(cols["school"]), np.asarray(cols["subject"])

    def values(idx: np.ndarray) -> dict[Any, float]:
        if idx.size == 0:
            return {}
        ms = LanguageEvaluator().add(languages=langs[idx], outcomes=outs[idx]).compute()
        return {(m.type, m.parameters["language"]): _num(m.value) for m in ms
                if not isinstance(m.value, dict)}  # fmt: skip

    checked = 0
    for part in (None, "art", "math"):
        keep = np.ones(len(outs), bool) if part is None else subject == part
        where = np.flatnonzero(keep)
        want = _naive(school[keep], lambda i, w=where: values(w[i]))
        for m in run.metrics:
            p = m.parameters
            if p.get("slice") != part or m.value is None or "ci_low" not in p:
                continue
            assert p["cluster"] == "school" and p["ci_method"] == "bootstrap"
            assert p["seed"] == SEED
            low_high = want[(m.type, p["language"])]
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(low_high, abs=1e-12)
            checked += 1
    assert checked >= 18
    # the gap: the slice and the whole set of the same draw of all clusters
    gaps = _naive(school, lambda i: {
        k: values(i[subject[i] == "art"]).get(k, np.nan) - v for k, v in values(i).items()
    })  # fmt: skip
    m = run.metrics.get("Accuracy", language="all", slice="art")
    assert [m.parameters["gap_ci_low"], m.parameters["gap_ci_high"]] == pytest.approx(
        gaps[("Accuracy", "all")], abs=1e-12
    )
    first = _whole(run.metrics, "Accuracy", language="all")
    again = _whole(other.metrics, "Accuracy", language="all")
    assert again.value == first.value and again.parameters["seed"] == SEED + 1
    ends = ("ci_low", "ci_high")
    assert [again.parameters[k] for k in ends] != [first.parameters[k] for k in ends]


def test_a_bad_cluster_column_exits_2_with_one_line_before_any_call(tmp_path):
    exam = _exam(tmp_path / "exam.csv")
    table = tmp_path / "t.csv"
    t = make_table(["quality"] * 4, {"m1": [1, 2, 3, 1], "ref": [2] * 4})
    t.to_csv(table, index=False)
    text = tmp_path / "rows.jsonl"
    text.write_text("".join(json.dumps({"uid": f"d{i}", "query": "q?", "prediction": "a b",
                                        "groundtruth": "a b", "site": "x"}) + "\n"
                            for i in range(3)))  # fmt: skip
    with FakeChatServer(responder=_answer) as srv:
        cases = [
            (["llm", "language", "--data", str(exam), "--ci", "0.9", "--cluster", "nosuch"],
             "--cluster"),
            (["llm", "language", "--data", str(exam), "--cluster", "school"], "--cluster"),
            (["text", "--data", str(text), "--metrics", "rouge,answer_relevance", "--ci", "0.9",
              "--cluster", "nosuch"], "--cluster"),
            (["pairwise", "judge", "--data", str(table), "--models", "m1", "--reference-model",
              "ref", "--out-dir", str(tmp_path / "runs"), "--ci", "0.9", "--cluster", "nosuch"],
             "--cluster"),
            (["pairwise", "judge", "--data", str(table), "--models", "m1", "--reference-model",
              "ref", "--out-dir", str(tmp_path / "runs"), "--cluster", "task"], "--cluster"),
        ]  # fmt: skip
        for args, flag in cases:
            model = ["--judge" if args[0] == "pairwise" else "--model", srv.spec()]
            r = runner.invoke(app, [*args, *model, "--no-cache"])
            assert r.exit_code == 2, (args, r.output)
            lines = r.output.strip().splitlines()
            assert len(lines) == 1 and flag in lines[0], r.output
            assert "Traceback" not in r.output
        assert srv.calls == 0


def test_suite_cli_cluster_and_bootstrap_seed_round_trip_through_the_store(tmp_path):
    exam = _exam(tmp_path / "exam.csv")
    db, out, cache = str(tmp_path / "s.db"), tmp_path / "m.json", str(tmp_path / "c.sqlite")
    with FakeChatServer(responder=_answer) as srv:
        base = ["llm", "language", "--data", str(exam), "-m", srv.spec(), "--quiet", "--ci",
                "0.9", "--num-bootstrap", "30", "--cluster", "school", "--by", "subject",
                "--cache", cache]  # fmt: skip
        r = runner.invoke(app, [*base, "--db", db, "--out", str(out), "--bootstrap-seed", "7"])
        assert r.exit_code == 0, r.output
        assert srv.calls == 30
        r2 = runner.invoke(app, [*base, "--no-save", "--bootstrap-seed", "8"])
        assert r2.exit_code == 0, r2.output
        assert srv.calls == 30  # a new interval, no new call
    written = json.loads(out.read_text())
    shown = runner.invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == written
    exported = runner.invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == written
    acc = [m for m in written if m["type"] == "Accuracy" and m["parameters"]["language"] == "all"]
    assert all(m["parameters"]["cluster"] == "school" for m in acc)
    assert all(m["parameters"]["seed"] == 7 for m in acc)
    sliced = [m for m in acc if "slice" in m["parameters"]]
    assert sorted(m["parameters"]["slice_n"] for m in sliced) == [10, 20]


# ---------------------------------------------------------------- text and judge aggregates


def test_text_aggregates_and_gaps_equal_a_loop_over_drawn_clusters():
    rng = np.random.default_rng(1)
    words = list("abcdef")
    n = 36
    preds = [" ".join(rng.choice(words, 5)) for _ in range(n)]
    refs = [" ".join(rng.choice(words, 5)) for _ in range(n)]
    site = np.array([f"s{i % 7}" for i in range(n)])
    topic = np.array(rng.choice(["x", "y"], n))
    uids = [f"u{i:02d}" for i in range(n)]
    kw = {"metrics": ["rouge", "bleu"], "rouge_types": ["rouge1"], "bleu_weights": [0.5, 0.5]}
    ev = TextEvaluator(**kw, ci=LEVEL, num_bootstrap=B, seed=SEED, by=["topic"], cluster="site")
    ms = ev.add(preds, refs, uids=uids, columns={"topic": topic, "site": site}).compute()

    def values(idx: np.ndarray) -> dict[Any, float]:
        got = TextEvaluator(**kw).add([preds[i] for i in idx], [refs[i] for i in idx]).compute()
        return {m.type: _num(m.value) for m in got if m.parameters.get("aggregate") == "mean"}

    want = _naive(site, values)
    for t in ("ROUGE", "BLEU"):
        p = _whole(ms, t, aggregate="mean").parameters
        assert p["cluster"] == "site" and [p["ci_low"], p["ci_high"]] == pytest.approx(
            want[t], abs=1e-12
        )
        for part in ("x", "y"):
            where = np.flatnonzero(topic == part)
            alone = _naive(site[where], lambda i, w=where: values(w[i]))
            sp = ms.get(t, aggregate="mean", slice=part).parameters
            assert [sp["ci_low"], sp["ci_high"]] == pytest.approx(alone[t], abs=1e-12)
            gap = _naive(site, lambda i, v=part: {
                k: values(i[topic[i] == v])[k] - x for k, x in values(i).items()
            })  # fmt: skip
            assert [sp["gap_ci_low"], sp["gap_ci_high"]] == pytest.approx(gap[t], abs=1e-12)


def test_judge_aggregates_draw_the_clusters_of_undefined_values_too():
    rng = np.random.default_rng(2)
    n = 30
    vals = [None if rng.random() < 0.2 else round(float(rng.random()), 3) for _ in range(n)]
    site = np.array([f"s{i % 5}" for i in range(n)])
    topic = np.array(rng.choice(["a", "b"], n))
    recs = [datum_record("Faithfulness", f"d{i:02d}", v, reason="no claims")
            for i, v in enumerate(vals)]  # fmt: skip
    ev = JudgeEvaluator(metrics=["faithfulness"], ci=LEVEL, num_bootstrap=B, seed=SEED,
                        by=["topic"], cluster="site")  # fmt: skip
    ms = ev.add(recs, {"topic": topic.tolist(), "site": site.tolist()}).compute()
    y = np.array([_num(v) for v in vals])

    def mean(idx: np.ndarray) -> dict[Any, float]:
        v = y[idx]
        return {"mean": float(np.nanmean(v)) if (~np.isnan(v)).any() else np.nan}

    p = _whole(ms, "Faithfulness", aggregate="mean").parameters
    assert p["cluster"] == "site" and p["n"] == int((~np.isnan(y)).sum())
    assert [p["ci_low"], p["ci_high"]] == pytest.approx(_naive(site, mean)["mean"], abs=1e-12)
    for part in ("a", "b"):
        where = np.flatnonzero(topic == part)
        sp = ms.get("Faithfulness", aggregate="mean", slice=part).parameters
        alone = _naive(site[where], lambda i, w=where: mean(w[i]))["mean"]
        assert [sp["ci_low"], sp["ci_high"]] == pytest.approx(alone, abs=1e-12)
        # n: the values behind the mean, as on the whole-set record; slice_n: the datums
        assert sp["n"] == int((~np.isnan(y[where])).sum()) and sp["slice_n"] == where.size


# ---------------------------------------------------------------- pairwise


def _pairwise_rows(n_questions: int, seed: int) -> pd.DataFrame:
    """Judged comparisons of m1 and m2 against ref with every status and 4 options."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n_questions):
        task = ["uml_class-general", "architecture_design-faithfulness"][q % 2]
        for m in ("m1", "m2"):
            for a, b in (("ref", m), (m, "ref")):
                status = str(rng.choice(["ok"] * 8 + ["em", "failed", "unparsed"]))
                choice = str(rng.choice(list("ABCD"))) if status == "ok" else ""
                out.append({"index": f"p{q}_{task}", "model_a": a, "model_b": b, "task": task,
                            "status": status, "choice": choice, "site": f"s{q % 5}",
                            "topic": "xy"[q % 2], "length_a": float(rng.integers(50, 500)),
                            "length_b": float(rng.integers(50, 500))})  # fmt: skip
    return pd.DataFrame(out)


def test_pairwise_intervals_equal_a_loop_over_drawn_clusters_of_questions():
    rows = _pairwise_rows(20, 4)
    questions = sorted(set(rows["index"]))
    kw = {"reference_model": "ref", "num_bootstrap": B, "seed": SEED}
    got = analyze(rows, ci=LEVEL, cluster="site", by=["topic"], **kw).metrics
    q_site = rows.groupby("index")["site"].first().loc[questions].to_numpy()

    def values(idx: np.ndarray) -> dict[Any, float]:
        # question q drawn k times: k copies, renamed c{j}.{q} (the metric after '-' kept)
        parts = [rows[rows["index"] == questions[i]].assign(index=f"c{j}.{questions[i]}")
                 for j, i in enumerate(idx)]  # fmt: skip
        ms = analyze(pd.concat(parts, ignore_index=True), reference_model="ref",
                     num_bootstrap=2).metrics  # fmt: skip
        return {ident(m): _num(m.value) for m in ms if isinstance(m.value, float | int)}

    want = _naive(q_site, values)
    checked = 0
    for m in got:
        p = m.parameters
        if "slice" in p or m.value is None or p.get("ci_low") is None:
            continue
        assert p["cluster"] == "site"
        if m.type in ("BradleyTerryRating", "LengthControlledWinRate"):
            continue  # the same question weights; their fits are checked in tests/pairwise
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want[ident(m)], abs=1e-12)
        checked += 1
    assert checked >= 10


def test_pairwise_slice_n_keeps_each_rate_records_own_count():
    """Regression: a slice's size used to replace a rate's own ``n`` (its denominator)."""
    rows = _pairwise_rows(12, 5)
    got = analyze(rows, reference_model="ref", num_bootstrap=5, by=["topic"]).metrics
    for v in ("x", "y"):
        part = rows[rows["topic"] == v]
        alone = {ident(m): m for m in analyze(part, reference_model="ref", num_bootstrap=5).metrics}
        n_questions = part["index"].nunique()
        own = 0
        for m in got:
            if m.parameters.get("slice") != v:
                continue
            assert m.parameters["slice_n"] == n_questions
            ref = alone.get(ident(m))
            if ref is not None and "n" in ref.parameters:
                assert m.parameters["n"] == ref.parameters["n"]
                own += ref.parameters["n"] != n_questions
        assert own > 0  # records whose own n is not the slice's size


# ---------------------------------------------------------------- the one seed rule


def test_pairwise_seed_seeds_the_interval_and_bootstrap_seed_redraws_it_from_the_cache(tmp_path):
    from assay.testing.pairwise import scripted_judge

    t = make_table(["quality", "first", "both", "quality", "second", "quality"],
                   {"m1": [3, 1, 2, 1, 2, 4], "ref": [2] * 6})  # fmt: skip
    t["site"] = ["a", "a", "b", "b", "c", "c"]
    table = tmp_path / "t.csv"
    t.to_csv(table, index=False)
    cache = str(tmp_path / "c.sqlite")

    def judge(srv: FakeChatServer, *extra: str) -> list[dict[str, Any]]:
        out = tmp_path / f"m{len(list(tmp_path.glob('m*.json')))}.json"
        args = ["pairwise", "judge", "--data", str(table), "--models", "m1", "--reference-model",
                "ref", "--judge", srv.spec(), "--out-dir", str(tmp_path / "runs"), "--quiet",
                "--cache", cache, "--num-bootstrap", "30", "--ci", "0.9", "--out", str(out),
                *extra]  # fmt: skip
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.output
        return json.loads(out.read_text())

    def seeds(ms: list[dict[str, Any]]) -> set[Any]:
        return {
            m["parameters"].get("seed") for m in ms if m["parameters"].get("ci_low") is not None
        }

    with FakeChatServer(responder=scripted_judge()) as srv:
        first = judge(srv, "--seed", "11", "--cluster", "site")
        calls = srv.calls
        assert calls > 0 and seeds(first) == {11}
        again = judge(srv, "--seed", "11", "--cluster", "site", "--bootstrap-seed", "12")
        assert srv.calls == calls  # a new interval from the cache: no new judge call
        assert seeds(again) == {12}
        assert {m["parameters"].get("cluster") for m in again if "ci_low" in m["parameters"]} == {
            "site"
        }
    ends = [[(m["parameters"].get("ci_low"), m["parameters"].get("ci_high")) for m in ms]
            for ms in (first, again)]  # fmt: skip
    assert ends[0] != ends[1]
    records = tmp_path / "runs"
    tsv = next(records.rglob("record_*.tsv"))
    out = tmp_path / "score.json"
    args = ["pairwise", "score", "--records", str(tsv), "--reference-model", "ref",
            "--out-dir", str(tmp_path / "rescored"), "--ci", "0.9", "--num-bootstrap", "30",
            "--cluster", "task", "--out", str(out), "--seed", "12"]  # fmt: skip
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert seeds(json.loads(out.read_text())) == {12}
