"""Pairwise intervals over questions and slices (issue 22), proven against naive loops.

The naive bootstrap draws the same question counts
(``assay.uncertainty.intervals.resample_counts``),
materialises each resample (a question drawn k times becomes k renamed copies of its
comparisons), runs ``analyze``'s point estimate on it, and takes the percentiles: the
vectorised intervals from per-question sufficient statistics must equal it to 1e-12.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError
from assay.llm.pairwise import PairwiseEvaluator, analyze
from assay.llm.pairwise.length import length_design
from assay.llm.pairwise.ratings import logistic_newton
from assay.llm.pairwise.tally import IDENT, ident
from assay.uncertainty.closed_form import wilson
from assay.uncertainty.resampling import resample_counts

REF = "ref"
LEVEL, B, SEED = 0.9, 40, 3


def _rows(n_questions: int, seed: int, models=("m1", "m2")) -> pd.DataFrame:
    """Judged comparisons with every status, 4 options, two tasks and a topic column."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n_questions):
        task = ["uml_class-general", "architecture_design-faithfulness"][q % 2]
        for m in models:
            for a, b in ((REF, m), (m, REF)):
                status = str(rng.choice(["ok"] * 8 + ["em", "failed", "unparsed"]))
                out.append(
                    {
                        "index": f"p{q}_{task}",
                        "model_a": a,
                        "model_b": b,
                        "task": task,
                        "status": status,
                        "choice": str(rng.choice(list("ABCD"))) if status == "ok" else "",
                        "length_a": float(rng.integers(50, 500)),
                        "length_b": float(rng.integers(50, 500)),
                        "words_a": 1.0,
                        "words_b": 1.0,
                        "topic": "xyz"[q % 3],
                    }
                )
    return pd.DataFrame(out)


def _materialise(rows: pd.DataFrame, questions: list[str], counts: np.ndarray) -> pd.DataFrame:
    """Question q drawn k times: k copies of its comparisons, renamed ``c{j}.{q}`` (the part
    after the last '-', the metric, is kept)."""
    parts = []
    for q, k in zip(questions, counts.astype(int)):
        for j in range(k):
            parts.append(rows[rows["index"] == q].assign(index=f"c{j}.{q}"))
    return pd.concat(parts, ignore_index=True)


def _values(rows: pd.DataFrame, **kw: Any) -> dict[tuple, float]:
    a = analyze(rows, reference_model=REF, num_bootstrap=2, **kw)
    out = {}
    for m in a.metrics:
        key = (*ident(m), m.parameters.get("slice"))
        out[key] = math.nan if m.value is None else m.value
    return out


def _naive_ends(reps: list[dict[tuple, float]], key: tuple) -> tuple[float, float]:
    v = np.array([r.get(key, math.nan) for r in reps])
    lo, hi = np.nanquantile(v, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
    return float(lo), float(hi)


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return _rows(9, seed=11)


@pytest.fixture(scope="module")
def fast(data):
    return analyze(data, reference_model=REF, ci=LEVEL, num_bootstrap=B, seed=SEED, by=["topic"])


@pytest.fixture(scope="module")
def naive(data):
    """Per resample: the whole set's point records, and each topic slice's."""
    questions = sorted(set(data["index"]))
    draws = np.concatenate(list(resample_counts(np.ones(len(questions), int), B, SEED)))
    topic = dict(zip(data["index"], data["topic"]))
    whole, slices = [], []
    for w in draws:
        big = _materialise(data, questions, w)
        whole.append(_values(big))
        per = {}
        for v in "xyz":
            mask = np.array([topic[q] == v for q in questions])
            if (w * mask).sum() > 0:
                per[v] = _values(_materialise(data, questions, w * mask))
            else:
                per[v] = {}
        slices.append(per)
    return draws, whole, slices


def test_rate_intervals_equal_a_naive_materialising_bootstrap(fast, naive):
    _, whole, _ = naive
    checked = 0
    for m in fast.metrics:
        if m.parameters.get("slice") is not None or m.type in (
            "BradleyTerryRating",
            "LengthControlledWinRate",
        ):
            continue
        if m.value is None:
            assert "ci_low" not in m.parameters
            continue
        lo, hi = _naive_ends(whole, (*ident(m), None))
        assert m.parameters["ci_method"] == "bootstrap"
        assert m.parameters["ci_low"] == pytest.approx(lo, abs=1e-12), ident(m)
        assert m.parameters["ci_high"] == pytest.approx(hi, abs=1e-12), ident(m)
        checked += 1
    types = {m.type for m in fast.metrics if "ci_low" in m.parameters}
    assert {"ExtractionRate", "ConsistencyRate", "WinRate", "WinRateWithTie"} <= types
    countings = {m.parameters.get("counting") for m in fast.metrics if "ci_low" in m.parameters}
    assert {"win+bothgood", "win+halfdraw", "debiased"} <= countings
    assert checked > 30


def test_rating_intervals_come_from_the_same_draws(fast, naive):
    _, whole, _ = naive
    ratings = [m for m in fast.metrics if m.type == "BradleyTerryRating"]
    assert len(ratings) == 3
    for m in ratings:
        lo, hi = _naive_ends(whole, (*ident(m), None))
        assert m.parameters["ci_low"] == pytest.approx(lo, rel=1e-12)
        assert m.parameters["ci_high"] == pytest.approx(hi, rel=1e-12)
        assert m.parameters["num_bootstrap"] == B and m.parameters["seed"] == SEED


def test_length_controlled_intervals_refit_the_drawn_questions(data, fast, naive):
    """The length fit keeps the whole set's length scale; each resample refits the
    materialised rows (a question drawn k times: its row k times)."""
    draws, _, _ = naive
    questions = sorted(set(data["index"]))
    outcomes = fast.outcomes
    whole = [m for m in fast.metrics if "slice" not in m.parameters]
    for m in (m for m in whole if m.type == "LengthControlledWinRate"):
        d = length_design(outcomes, m.parameters["model"], REF)
        pos = np.array([questions.index(q) for q in d.questions])
        reps = []
        for w in draws:
            k = w[pos].astype(int)
            if k.sum() == 0:
                reps.append([math.nan, math.nan])
                continue
            X, y = np.repeat(d.X, k, axis=0), np.repeat(d.y, k)
            beta = logistic_newton(X, y, np.ones(len(y)), l2=0.01)[0]
            reps.append([1 / (1 + math.exp(-beta[0])), beta[-1]])
        lo, hi = np.nanquantile(np.array(reps), [0.05, 0.95], axis=0)
        p = m.parameters
        assert (p["ci_low"], p["ci_high"]) == pytest.approx((lo[0], hi[0]), abs=1e-12)
        assert p["length_coefficient_ci_low"] == pytest.approx(lo[1], abs=1e-12)
        assert p["length_coefficient_ci_high"] == pytest.approx(hi[1], abs=1e-12)


def test_slice_and_gap_intervals_equal_the_naive_bootstrap(fast, naive):
    _, whole, slices = naive
    checked = 0
    for m in fast.metrics:
        v = m.parameters.get("slice")
        if v is None or m.value is None or m.type == "LengthControlledWinRate":
            continue  # the length fits: the next test
        key = (*ident(m), None)
        per = [s[v] for s in slices]
        lo, hi = _naive_ends(per, key)
        assert m.parameters["ci_low"] == pytest.approx(lo, abs=1e-12), (v, key)
        assert m.parameters["ci_high"] == pytest.approx(hi, abs=1e-12), (v, key)
        gaps = [{key: s.get(key, math.nan) - w.get(key, math.nan)} for s, w in zip(per, whole)]
        glo, ghi = _naive_ends(gaps, key)
        if math.isnan(glo):
            assert m.parameters.get("gap_ci_low") is None
            continue
        assert m.parameters["gap_ci_low"] == pytest.approx(glo, abs=1e-12), (v, key)
        assert m.parameters["gap_ci_high"] == pytest.approx(ghi, abs=1e-12), (v, key)
        checked += 1
    assert checked > 20


_ENDS = {"ci_low", "ci_high", "length_coefficient_ci_low", "length_coefficient_ci_high"}


def test_slices_equal_filtering_the_comparisons_and_analysing_alone(data):
    a = analyze(data, reference_model=REF, num_bootstrap=5, by="topic")
    whole = [m for m in a.metrics if "slice" not in m.parameters]
    sliceable = [m for m in whole if m.type != "BradleyTerryRating"]
    assert any(m.type == "LengthControlledWinRate" for m in sliceable)
    for v in "xyz":
        part = data[data["topic"] == v]
        alone = {ident(m): m for m in analyze(part, reference_model=REF, num_bootstrap=5).metrics}
        got = [m for m in a.metrics if m.parameters.get("slice") == v]
        assert [ident(m) for m in got] == [ident(m) for m in sliceable]
        n_questions = part["index"].nunique()
        for m, w in zip(got, sliceable):
            p = m.parameters
            assert (p["slice_column"], p["slice_n"]) == ("topic", n_questions)
            ref = alone.get(ident(m))
            if ref is None:  # e.g. a task with no consistent comparison in this topic
                assert m.value is None and p["undefined"] == "no such comparison in this slice"
                continue
            assert m.value == ref.value
            # the length fit's interval ends come from the whole set's draw (below)
            # n: the record's own count (a rate's denominator), the slice's as the alone one's
            drop = {"slice_column", "slice", "slice_n", "gap", "gap_ci_low", "gap_ci_high", *_ENDS}
            drop |= set() if "n" in ref.parameters else {"n"}  # no own n: the slice's size
            assert {k: x for k, x in p.items() if k not in drop} == {
                k: x for k, x in ref.parameters.items() if k not in _ENDS
            }
            if m.value is not None and w.value is not None:
                assert p["gap"] == pytest.approx(m.value - w.value, abs=1e-15)
            else:
                assert p["gap"] is None


def _naive_length_fits(d, pos, draws, l2=0.01):
    """Per resample: (win rate, coefficient) refitted on the materialised rows."""
    reps = []
    for w in draws:
        k = w[pos].astype(int)
        if k.sum() == 0:
            reps.append([math.nan, math.nan])
            continue
        X, y = np.repeat(d.X, k, axis=0), np.repeat(d.y, k)
        beta = logistic_newton(X, y, np.ones(len(y)), l2=l2)[0]
        reps.append([1 / (1 + math.exp(-beta[0])), beta[-1] if d.has_slope else math.nan])
    return np.array(reps)


def test_length_controlled_slices_and_gaps_equal_the_naive_refits(data, fast, naive):
    draws, _, _ = naive
    questions = sorted(set(data["index"]))
    o = fast.outcomes
    checked = 0
    for m in fast.metrics:
        v = m.parameters.get("slice")
        if m.type != "LengthControlledWinRate" or v is None or m.value is None:
            continue
        model = m.parameters["model"]
        topic = dict(zip(data["index"], data["topic"]))
        d = length_design(o[o["index"].map(topic) == v], model, REF)
        whole = length_design(o, model, REF)
        reps = _naive_length_fits(d, np.array([questions.index(q) for q in d.questions]), draws)
        base = _naive_length_fits(
            whole, np.array([questions.index(q) for q in whole.questions]), draws
        )
        lo, hi = np.nanquantile(reps[:, 0], [0.05, 0.95])
        glo, ghi = np.nanquantile(reps[:, 0] - base[:, 0], [0.05, 0.95])
        p = m.parameters
        assert (p["ci_low"], p["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
        assert (p["gap_ci_low"], p["gap_ci_high"]) == pytest.approx((glo, ghi), abs=1e-12)
        checked += 1
    assert checked == 6  # 2 models x 3 topics


def test_one_seed_gives_the_same_intervals_and_another_seed_others(data):
    kw = {"reference_model": REF, "ci": 0.95, "num_bootstrap": 30, "by": ["topic"]}
    a = analyze(data, seed=5, **kw).metrics.to_json()
    assert analyze(data, seed=5, **kw).metrics.to_json() == a
    assert analyze(data, seed=6, **kw).metrics.to_json() != a


def test_wilson_for_the_extraction_and_consistency_rates(data):
    a = analyze(data, reference_model=REF, ci=0.9, ci_method="wilson", num_bootstrap=20)
    ext = a.metrics.get("ExtractionRate")
    lo, hi = wilson(ext.parameters["extracted"], ext.parameters["compared"], 0.9)
    assert (ext.parameters["ci_low"], ext.parameters["ci_high"]) == (float(lo), float(hi))
    assert ext.parameters["ci_method"] == "wilson" and "num_bootstrap" not in ext.parameters
    cons = a.metrics.get("ConsistencyRate")
    lo, hi = wilson(cons.parameters["consistent"], cons.parameters["extracted"], 0.9)
    assert (cons.parameters["ci_low"], cons.parameters["ci_high"]) == (float(lo), float(hi))
    wr = next(m for m in a.metrics if m.type == "WinRate" and m.value is not None)
    assert wr.parameters["ci_method"] == "bootstrap"  # not a proportion of independent rows


def test_without_ci_only_ratings_and_length_fits_carry_intervals(data):
    a = analyze(data, reference_model=REF, num_bootstrap=20)
    with_ci = {m.type for m in a.metrics if "ci_low" in m.parameters}
    assert with_ci == {"BradleyTerryRating", "LengthControlledWinRate"}
    rating = a.metrics.get("BradleyTerryRating", model="m1")
    assert rating.parameters["confidence_level"] == 0.95


def test_the_names_removed_in_0_2_0_fail_naming_the_new_ones(data):
    from assay.llm.pairwise.task import PairwiseTask

    for call in (
        lambda **kw: PairwiseEvaluator(reference_model=REF, nopt=4, **kw),
        lambda **kw: analyze(data, reference_model=REF, **kw),
        lambda **kw: PairwiseTask(data, models=["m1"], reference_model=REF, **kw),
    ):
        with pytest.raises(TypeError, match="n_boot= was renamed; use num_bootstrap="):
            call(n_boot=20)
        with pytest.raises(InvalidInputError, match="confidence= was renamed; use ci="):
            call(confidence=0.8)
    rating = analyze(data, reference_model=REF, num_bootstrap=20).metrics.get(
        "BradleyTerryRating", model="m1"
    )
    assert rating.parameters["num_bootstrap"] == 20 and "bootstrap_samples" not in rating.parameters


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"ci": 1.0}, "ci"),
        ({"ci": 0.0}, "ci"),
        ({"ci_method": "magic", "ci": 0.9}, "ci_method"),
        ({"num_bootstrap": 1}, "num_bootstrap"),
        ({"seed": -1}, "seed"),
        ({"by": ["nope"]}, "by"),
    ],
)
def test_bad_interval_and_slice_options_are_refused(data, kw, field):
    with pytest.raises(InvalidInputError) as e:
        PairwiseEvaluator(reference_model=REF, nopt=4, **kw).add(data).compute()
    assert field in str(e.value)


def test_a_column_that_varies_within_a_question_is_refused(data):
    rows = data.assign(topic=[str(i) for i in range(len(data))])
    with pytest.raises(InvalidInputError, match="more than one value"):
        analyze(rows, reference_model=REF, by=["topic"])


def test_identity_parameters_name_every_rate_record(fast):
    keys = [(*ident(m), m.parameters.get("slice")) for m in fast.metrics]
    assert len(keys) == len(set(keys))
    assert IDENT == ("counting", "model", "opponent", "task", "metric")


def test_the_report_figures_show_the_whole_set_not_the_slices(data):
    from datetime import datetime

    from assay.report.pairwise import figures
    from assay.store.records import Evaluation

    def ev(**kw: Any) -> Evaluation:
        ms = analyze(data, reference_model=REF, num_bootstrap=10, **kw).metrics
        return Evaluation(
            1, datetime.now(), None, "pairwise", None, None, {}, "done", None, "0", ms
        )

    assert json_of(figures([ev(by=["topic"])])) == json_of(figures([ev()]))


def json_of(figs: Any) -> str:
    import json

    return json.dumps(figs, sort_keys=True, default=str)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_a_slice_holding_every_question_is_the_whole_set(n, seed):
    """Property: one slice value on every question gives the whole set's values, gap 0 and
    a gap interval of [0, 0] (both from the same draw)."""
    rows = _rows(n, seed).assign(topic="all")
    a = analyze(rows, reference_model=REF, ci=0.9, num_bootstrap=20, seed=seed, by=["topic"])
    whole = {ident(m): m for m in a.metrics if "slice" not in m.parameters}
    sliced = [m for m in a.metrics if m.parameters.get("slice") == "all"]
    assert len(sliced) == len([m for m in whole.values() if m.type != "BradleyTerryRating"])
    for m in sliced:
        w = whole[ident(m)]
        assert m.value == w.value
        if m.value is None:
            continue
        assert m.parameters["gap"] == 0.0
        assert (m.parameters["ci_low"], m.parameters["ci_high"]) == (
            w.parameters["ci_low"],
            w.parameters["ci_high"],
        )
        if m.parameters.get("gap_ci_low") is not None:
            assert (m.parameters["gap_ci_low"], m.parameters["gap_ci_high"]) == (0.0, 0.0)
