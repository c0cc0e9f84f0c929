"""Slices and intervals of the LLM evaluations, end to end on the loopback chat server.

* Every slice equals evaluating that subgroup alone: the data file filtered to the subgroup
  and run again on the same response cache gives the same records (values, intervals) and
  costs zero calls (CAT, language exams, judge metrics); for LLM fairness, whose prompts
  depend on the row's position, the subgroup's calls scored alone.
* The gap's interval equals a Python loop that materialises each resample (the distinct
  items, in sorted order, drawn ``assay.uncertainty.intervals.resample_counts`` times) and
  evaluates the
  whole set and the slice on it with fresh evaluators; the judge's aggregate interval equals
  a loop over materialised resamples of the per-datum values.
* Seeds: the same seed gives the same intervals, another seed others.
"""

from __future__ import annotations

import json
import statistics
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from suitekit import TOY, make_dev

from assay.llm import RunOptions, evaluate
from assay.llm.judge import Datum
from assay.llm.judge.evaluator import JudgeEvaluator
from assay.llm.judge.run import JudgeTask
from assay.llm.slicing import SlicedEvaluator
from assay.llm.suites import CATEvaluator
from assay.llm.suites.cat import OUTCOMES, CATSuite
from assay.llm.suites.fairness import FairnessSuite, load_fairness_data
from assay.llm.suites.language import LanguageSuite
from assay.stats.means import datum_record
from assay.uncertainty.resampling import resample_counts
from contract.llm_tasks import answer

LEVEL, B = 0.9, 60
SLICE_KEYS = ("slice_column", "slice", "slice_n", "gap", "gap_ci_low", "gap_ci_high")


def _hashed(messages: list[dict[str, Any]]) -> str:
    """CAT: an option number, or an unreadable answer, by a hash of the prompt; language
    exams: one of the options in the prompt, or not JSON; judge prompts: the scripted judge."""
    text = str(messages[-1]["content"])
    h = zlib.crc32(text.encode("utf-8"))
    if "Option 1:" in text:
        return ["1", "2", "3", "2", "hmm"][h % 5]
    if '"choice"' in text:
        options = [line for line in text.splitlines() if line.startswith("opt ")]
        return "no idea" if h % 7 == 0 else json.dumps({"choice": options[h % len(options)]})
    return answer(messages)


def _own(m: Any, alone: Any = None) -> dict[str, Any]:
    """A record's own parameters: ``n`` too where the record run ``alone`` has its own
    (a rate's denominator, a mean's values), which the slice record keeps."""
    keep = alone is None or "n" in alone.parameters
    return {k: v for k, v in m.parameters.items() if k not in SLICE_KEYS and (keep or k != "n")}


def _assert_slice_equals_alone(run: Any, alone: Any, column: str, value: str) -> int:
    """Every headline record of ``alone`` (the subgroup run by itself) equals the slice
    record of ``run`` with the same type and own parameters; returns how many."""
    sliced = [m for m in run if m.parameters.get("slice_column") == column]
    sliced = [m for m in sliced if m.parameters["slice"] == value]
    found = 0
    for m in alone:
        if isinstance(m.value, dict) or "datum_uid" in m.parameters:
            continue
        same = [s for s in sliced if s.type == m.type and _own(s, m) == _own(m)]
        assert len(same) == 1, (m, sliced)
        assert same[0].value == m.value
        found += 1
    assert found == len(sliced)
    return found


def _opts(cache: Path, **kw: Any) -> RunOptions:
    return RunOptions(cache=cache, retries=0, ci=LEVEL, num_bootstrap=B, **kw)


def test_cat_slices_equal_each_bias_type_run_alone_from_the_cache(chat_server, tmp_path):
    srv = chat_server(responder=_hashed)
    dev = make_dev(tmp_path / "dev.json", 24)
    cache = tmp_path / "cache.sqlite"
    # seed 0: every query shows the options in the same order, so a prompt does not depend
    # on the item's position and the subgroup's run asks exactly the same prompts
    run = evaluate(CATSuite(str(dev), seed=0), srv.spec(), _opts(cache, by=("bias_type",)))
    assert run.status == "finished" and srv.calls == 24
    doc = json.loads(dev.read_text())
    for bias in ("gender", "race", "profession", "religion"):
        items = [i for i in doc["data"]["intersentence"] if i["bias_type"] == bias]
        part = tmp_path / f"{bias}.json"
        part.write_text(json.dumps({"data": {"intersentence": items}}))
        alone = evaluate(CATSuite(str(part), seed=0), srv.spec(), _opts(cache))
        assert srv.calls == 24  # every answer from the cache: not one call more
        assert _assert_slice_equals_alone(run.metrics, alone.metrics, "bias_type", bias) >= 10
    m = run.metrics.get("LMS", scope="general", slice="race")
    assert m.parameters["n"] == 6 and m.parameters["ci_method"] == "bootstrap"
    assert m.parameters["gap_ci_low"] <= m.parameters["gap"] <= m.parameters["gap_ci_high"]


def _exam(path: Path) -> Path:
    rows = ["language,subject,question,options,answer"]
    for i in range(18):
        lang, subject = ["en", "fr"][i % 2], ["math", "art", "law"][i % 3]
        rows.append(f'{lang},{subject},Question number {i}?,"[""opt a{i}"", ""opt b{i}""]",{i % 2}')
    path.write_text("\n".join(rows) + "\n")
    return path


def test_language_slices_equal_each_subject_run_alone_from_the_cache(chat_server, tmp_path):
    import pandas as pd

    srv = chat_server(responder=_hashed)
    exam = _exam(tmp_path / "exam.csv")
    cache = tmp_path / "cache.sqlite"
    opts = _opts(cache, by=("subject",), ci_method="wilson")
    run = evaluate(LanguageSuite(str(exam), seed=0), srv.spec(), opts)
    assert srv.calls == 18
    df = pd.read_csv(exam, dtype=str)
    for subject in ("art", "law", "math"):
        part = tmp_path / f"{subject}.csv"
        df[df.subject == subject].to_csv(part, index=False)
        alone = evaluate(LanguageSuite(str(part), seed=0), srv.spec(), opts.replace(by=()))
        assert srv.calls == 18
        _assert_slice_equals_alone(run.metrics, alone.metrics, "subject", subject)
    m = run.metrics.get("Accuracy", language="all", slice="art")
    assert m.parameters["ci_method"] == "wilson" and m.parameters["n"] == 6


def test_fairness_slices_equal_the_subgroups_calls_scored_alone(chat_server):
    srv = chat_server(responder=lambda msgs: ["Y", "N", "maybe"][len(str(msgs)) % 3])
    data = load_fairness_data(TOY)
    opts = RunOptions(cache=False, retries=0, ci=LEVEL, num_bootstrap=B, by=("outcome",))
    suite = FairnessSuite(data)
    run = evaluate(suite, srv.spec(), opts)
    made = srv.calls
    alone = FairnessSuite(data)
    alone.configure(opts.replace(by=()))
    for value in sorted({r["outcome"] for r in data.test}):
        rows = {q for q, r in enumerate(data.test) if r["outcome"] == value}
        calls = [c for c in run.calls if c.info["row"] in rows]
        _assert_slice_equals_alone(run.metrics, alone.score(calls), "outcome", value)
    assert srv.calls == made


def _judge_data(n: int) -> tuple[list[Datum], dict[str, list[str]]]:
    data = [
        Datum(f"u{i:02d}", f"Question {i}?", f"Answer {i}. It is fine {i % 4}.", (f"Ref {i}.",),
              (f"Context {i}.", f"More context {i % 3}."))
        for i in range(n)
    ]  # fmt: skip
    return data, {"topic": [["cars", "food", "news"][i % 3] for i in range(n)]}


def test_judge_slices_equal_each_topic_judged_alone_from_the_cache(chat_server, tmp_path):
    srv = chat_server(responder=_hashed)
    data, cols = _judge_data(15)
    cache = tmp_path / "cache.sqlite"
    metrics = ["faithfulness", "answer_relevance"]
    opts = _opts(cache, by=("topic",), ci_method="t")
    run = evaluate(JudgeTask(data, metrics, columns=cols), srv.spec(), opts)
    made = srv.calls
    assert run.status == "finished" and made > 0
    for topic in ("cars", "food", "news"):
        keep = [d for d, t in zip(data, cols["topic"]) if t == topic]
        alone = evaluate(JudgeTask(keep, metrics), srv.spec(), opts.replace(by=()))
        assert srv.calls == made
        assert _assert_slice_equals_alone(run.metrics, alone.metrics, "topic", topic) == 2
    m = run.metrics.get("Faithfulness", aggregate="mean", slice="food")
    assert m.parameters["ci_method"] == "t" and m.parameters["n"] == 5


def _quantiles(values: list[float]) -> list[float]:
    v = np.array(values)
    return np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


def test_sliced_gap_interval_equals_a_loop_over_materialised_resamples() -> None:
    rng = np.random.default_rng(5)
    n = 40
    out = rng.choice(OUTCOMES, n, p=[0.35, 0.3, 0.15, 0.15, 0.05]).tolist()
    tt = rng.choice(["intrasentence", "intersentence"], n).tolist()
    bt = rng.choice(["g", "r"], n).tolist()
    site = rng.choice(["x", "y", "z"], n).tolist()
    ev = SlicedEvaluator(evaluator=CATEvaluator, by=["site"], ci=LEVEL, num_bootstrap=B, seed=2)
    ms = ev.add({"site": site}, outcomes=out, test_types=tt, bias_types=bt).compute()
    items = list(zip(out, tt, bt, site))
    distinct = sorted(set(items))
    counts = np.array([items.count(d) for d in distinct])
    gaps: dict[tuple[str, str, str], list[float]] = {}
    for w in np.concatenate(list(resample_counts(counts, B, 2))):
        drawn = [d for d, k in zip(distinct, w.astype(int)) for _ in range(k)]

        def lms(rows: list[tuple[str, ...]]) -> dict[tuple[str, str], float]:
            if not rows:
                return {}
            got = CATEvaluator().add(*zip(*[r[:3] for r in rows])).compute()
            return {
                (m.type, m.parameters["scope"]): m.value for m in got if m.type in ("LMS", "SS")
            }

        whole = lms(drawn)
        for s in ("x", "y", "z"):
            part = lms([r for r in drawn if r[3] == s])
            for key in (("LMS", "general"), ("SS", "general"), ("LMS", "intrasentence")):
                a, b = part.get(key), whole.get(key)
                gaps.setdefault((s, *key), []).append(np.nan if a is None or b is None else a - b)
    for (s, kind, scope), values in gaps.items():
        p = ms.get(kind, scope=scope, slice=s).parameters
        assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(_quantiles(values), abs=1e-12)


def _judge_records(seed: int) -> tuple[list[Any], list[str]]:
    rng = np.random.default_rng(seed)
    records, topics = [], []
    for i in range(23):
        v = None if rng.random() < 0.2 else float(rng.integers(0, 9)) / 8
        records.append(datum_record("Faithfulness", f"d{i:02d}", v, reason="no claims"))
        topics.append(["a", "b"][i % 2])
    return records, topics


def test_judge_gap_and_aggregate_intervals_equal_loops_over_materialised_resamples() -> None:
    records, topics = _judge_records(3)
    ev = JudgeEvaluator(metrics=["faithfulness"], num_bootstrap=B, seed=4, ci=LEVEL, by=["topic"])
    ms = ev.add(records, {"topic": topics}).compute()
    # the aggregate: the defined values in uid order, n uniform draws per resample
    y = [m.value for m in records if m.value is not None]
    draws = np.random.default_rng(4).integers(0, len(y), size=(B, len(y)), dtype=np.int32)
    means = [statistics.fmean(y[i] for i in row) for row in draws]
    whole = [m for m in ms.filter("Faithfulness", aggregate="mean") if "slice" not in m.parameters]
    p = whole[0].parameters
    assert [p["ci_low"], p["ci_high"]] == pytest.approx(_quantiles(means), abs=1e-12)
    # the gap: every datum drawn (one without a value counts in no mean)
    items = [(0.0 if m.value is None else m.value, m.value is not None, t)
             for m, t in zip(records, topics)]  # fmt: skip
    distinct = sorted(set(items))
    counts = np.array([items.count(d) for d in distinct])
    gaps: dict[str, list[float]] = {"a": [], "b": []}
    for w in np.concatenate(list(resample_counts(counts, B, 4))):
        drawn = [d for d, k in zip(distinct, w.astype(int)) for _ in range(k) if d[1]]
        whole = statistics.fmean(v for v, _, _ in drawn)
        for t in gaps:
            part = [v for v, _, s in drawn if s == t]
            gaps[t].append(statistics.fmean(part) - whole if part else np.nan)
    for t, values in gaps.items():
        p = ms.get("Faithfulness", aggregate="mean", slice=t).parameters
        assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(_quantiles(values), abs=1e-12)


def test_intervals_depend_on_the_seed_only() -> None:
    records, topics = _judge_records(1)

    def run(seed: int) -> Any:
        ev = JudgeEvaluator(metrics=["faithfulness"], num_bootstrap=B, seed=seed, ci=LEVEL,
                            by=["topic"])  # fmt: skip
        return ev.add(records, {"topic": topics}).compute().to_list()

    assert run(7) == run(7) and run(7) != run(8)
    rng = np.random.default_rng(0)
    out, tt = rng.choice(OUTCOMES, 50).tolist(), rng.choice(["intrasentence"], 50).tolist()
    site = rng.choice(["x", "y"], 50).tolist()

    def cat(seed: int) -> Any:
        ev = SlicedEvaluator(evaluator=CATEvaluator, by=["site"], ci=LEVEL, num_bootstrap=B,
                             seed=seed)  # fmt: skip
        return ev.add({"site": site}, outcomes=out, test_types=tt, bias_types=site).compute()

    assert cat(3).to_list() == cat(3).to_list()
    assert cat(3).to_list() != cat(4).to_list()


def test_a_slice_too_small_is_null_with_the_reason() -> None:
    ev = SlicedEvaluator(evaluator=CATEvaluator, by=["site"], ci=LEVEL, num_bootstrap=B)
    ms = ev.add(
        {"site": ["x", "x", "y"]},
        outcomes=["stereotype", "anti-stereotype", "error"],
        test_types=["intrasentence"] * 3,
        bias_types=["g"] * 3,
    ).compute()
    m = ms.get("SS", scope="general", slice="y")
    assert m.value is None and "S + A = 0" in m.parameters["undefined"]
    assert m.parameters["gap"] is None and "gap_ci_low" not in m.parameters


def test_report_plots_the_whole_set_and_leaves_slices_to_the_tables(tmp_path) -> None:
    from assay.report import suites as plots
    from assay.store import Store

    rng = np.random.default_rng(9)
    out, tt = rng.choice(OUTCOMES, 30).tolist(), rng.choice(["intrasentence"], 30).tolist()
    bias = rng.choice(["g", "r"], 30).tolist()
    plain = CATEvaluator().add(out, tt, bias).compute()
    sliced = SlicedEvaluator(evaluator=CATEvaluator, by=["bias_type"])
    sliced.add({"bias_type": bias}, outcomes=out, test_types=tt, bias_types=bias)
    with Store(f"sqlite:///{tmp_path / 's.db'}") as st:
        a = st.get(st.save(plain, kind="llm_cat", dataset="d"))
        b = st.get(st.save(sliced.compute(), kind="llm_cat", dataset="d"))
    assert len(b.metrics) > len(a.metrics)
    assert plots.figures([b]) == plots.figures([a]) != []


def test_the_average_over_datasets_takes_the_whole_set_of_a_sliced_run() -> None:
    from assay.llm.suites.average import average_fairness
    from assay.llm.suites.fairness_metrics import LLMFairnessEvaluator
    from assay.results import MetricSet

    rng = np.random.default_rng(2)
    data = {k: rng.integers(0, 2, 40).tolist() for k in ("target", "predicted", "privileged")}
    region = rng.choice(["n", "s"], 40).tolist()
    plain = LLMFairnessEvaluator().add(**data).compute()
    sliced = SlicedEvaluator(evaluator=LLMFairnessEvaluator, by=["region"])
    ms = sliced.add({"region": region}, **data).compute()
    reordered = MetricSet([m for m in ms if "slice" in m.parameters] + list(plain))
    assert (
        average_fairness({"a": (1, reordered)}).to_list()
        == average_fairness({"a": (1, plain)}).to_list()
    )


def test_compare_matches_the_slices_of_two_runs() -> None:
    from datetime import UTC, datetime

    from assay.store.comparison import compare
    from assay.store.records import Evaluation

    rng = np.random.default_rng(6)
    site = rng.choice(["x", "y"], 40).tolist()
    tt = rng.choice(["intrasentence"], 40).tolist()

    def run(i: int) -> Evaluation:
        out = rng.choice(OUTCOMES, 40).tolist()
        ev = SlicedEvaluator(evaluator=CATEvaluator, by=["site"], ci=LEVEL, num_bootstrap=B)
        ms = ev.add({"site": site}, outcomes=out, test_types=tt, bias_types=site).compute()
        return Evaluation(i, datetime(2026, 1, i, tzinfo=UTC), None, "llm_cat", "d", f"m{i}",
                          {}, "finished", None, "0", metrics=ms)  # fmt: skip

    df = compare([run(1), run(2)])
    sliced = df[df["parameters"].str.contains("slice=x")]
    lms = sliced[sliced["type"] == "LMS"]
    # general, intrasentence, x matched with their differences; intersentence undefined
    assert len(lms) == 4 and lms["diff_2"].notna().sum() == 3
