"""The interval of a mean aggregate (text metrics, judge metrics) under ``ci``: the t-interval
equals scipy's, Wilson's (values all 0 or 1) equals statsmodels', other values asked for
Wilson get the bootstrap and say so, and without ``ci`` the record is as before."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from assay.llm.judge.evaluator import JudgeEvaluator
from assay.stats.means import datum_record, mean_record
from assay.text.evaluator import TextEvaluator
from assay.uncertainty.intervals import CIOptions

UIDS = [f"u{i}" for i in range(30)]


def test_t_interval_equals_scipy() -> None:
    y = np.random.default_rng(1).random(30)
    p = mean_record("ROUGE", y, UIDS, {}, ci=CIOptions(0.8, "t")).parameters
    want = sps.t.interval(0.8, 29, loc=y.mean(), scale=sps.sem(y))
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(want, abs=1e-12)
    assert p["ci_method"] == "t" and p["confidence_level"] == 0.8 and "num_bootstrap" not in p
    one = mean_record("ROUGE", [0.5], ["a"], {}, ci=CIOptions(0.8, "t")).parameters
    assert one["ci_low"] is None and one["ci_undefined"] == "needs two values"


def test_wilson_for_a_proportion_and_the_bootstrap_otherwise() -> None:
    y = (np.random.default_rng(2).random(30) < 0.3).astype(float)
    p = mean_record("Bias", y, UIDS, {}, ci=CIOptions(0.9, "wilson")).parameters
    want = proportion_confint(int(y.sum()), 30, alpha=0.1, method="wilson")
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(want, abs=1e-12)
    shares = y / 2 + 0.25
    got = mean_record("Bias", shares, UIDS, {}, ci=CIOptions(0.9, "wilson", 200, 3)).parameters
    boot = mean_record("Bias", shares, UIDS, {}, ci=CIOptions(0.9, "bootstrap", 200, 3)).parameters
    assert got["ci_method"] == "bootstrap" and got == boot


def test_without_ci_the_aggregate_is_unchanged() -> None:
    y = np.random.default_rng(3).random(30)
    assert (
        mean_record("BLEU", y, UIDS, {}).parameters
        == mean_record("BLEU", y, UIDS, {}, num_bootstrap=1000, seed=0).parameters
    )
    p = mean_record("BLEU", y, UIDS, {}).parameters
    assert (p["confidence_level"], p["ci_method"], p["num_bootstrap"]) == (0.95, "bootstrap", 1000)


def test_text_and_judge_evaluators_take_the_interval_options() -> None:
    preds = ["the cat sat", "a dog ran far", "birds sing", "the cat ran"]
    refs = ["the cat sat down", "a dog ran", "birds sang loudly", "a cat ran"]
    ms = TextEvaluator(metrics=["rouge"], rouge_types=["rouge1"], ci=0.9, ci_method="t")
    agg = ms.add(preds, refs).compute().get("ROUGE", aggregate="mean")
    vals = [m.value for m in ms.compute() if "datum_uid" in m.parameters]
    want = sps.t.interval(0.9, 3, loc=np.mean(vals), scale=sps.sem(vals))
    assert (agg.parameters["ci_low"], agg.parameters["ci_high"]) == pytest.approx(want)
    recs = [datum_record("Toxicity", f"d{i}", float(i % 2)) for i in range(9)]
    j = JudgeEvaluator(metrics=["toxicity"], ci=0.95, ci_method="wilson").add(recs).compute()
    p = j.get("Toxicity", aggregate="mean").parameters
    assert p["ci_method"] == "wilson"
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(proportion_confint(4, 9, method="wilson"))
