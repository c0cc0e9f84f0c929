"""Hand-worked values for each metric, undefined cases, grouped(), custom metrics."""

import math

import numpy as np
import pytest

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.stats import (
    SampleScore,
    Score,
    ScoreFrame,
    accuracy,
    bootstrap_stderr,
    compute,
    evaluate_scores,
    get_metric,
    grouped,
    mean,
    metric,
    registered_metrics,
    std,
    stderr,
    var,
)


def ss(values, meta=None):
    return [
        SampleScore(Score(v), sample_id=i, sample_metadata=None if meta is None else meta[i])
        for i, v in enumerate(values)
    ]


# Letters C, I, P, C -> 1, 0, 0.5, 1: sum 2.5, n 4.
LETTERS = ["C", "I", "P", "C"]


def test_accuracy_hand_worked():
    assert accuracy()(ss(LETTERS)) == 2.5 / 4
    # without partial credit P counts 0: 2 / 4
    assert accuracy(partial_credit=False)(ss(LETTERS)) == 0.5
    # a numeric 0.5 is not the letter P: partial_credit does not touch it
    assert accuracy(partial_credit=False)(ss(["C", 0.5])) == 0.75


def test_mean_var_std_stderr_hand_worked():
    y = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]  # mean 5, Σ(y-ȳ)² = 32
    assert mean()(y) == 5.0
    assert var()(y) == pytest.approx(32 / 7, abs=1e-15)
    assert std()(y) == pytest.approx(math.sqrt(32 / 7), abs=1e-15)
    assert stderr()(y) == pytest.approx(math.sqrt(32 / 7 / 8), abs=1e-15)
    # letters: 1, 0, .5, 1 -> mean .625, Σ(y-ȳ)² = .140625+.390625+.015625+.140625 = .6875
    assert var()(ss(LETTERS)) == pytest.approx(0.6875 / 3, abs=1e-15)
    assert stderr()(ss(LETTERS)) == pytest.approx(math.sqrt(0.6875 / 3 / 4), abs=1e-15)


def test_clustered_stderr_hand_worked():
    # y = 1 1 0 0 1 0 (ȳ = .5), clusters {1,1},{0,0},{1,0}: residual sums 1, -1, 0
    # V = G/(G-1) Σ e_g² / n² = 3/2 · 2 / 36 = 1/12
    f = ScoreFrame.from_arrays([1, 1, 0, 0, 1, 0], metadata={"doc": ["a", "a", "b", "b", "c", "c"]})
    assert stderr(cluster="doc")(f) == pytest.approx(math.sqrt(1 / 12), abs=1e-15)
    # singleton clusters: V = n/(n-1) Σ (y-ȳ)²/n² = var/n -> the plain stderr
    y = np.array([0.3, 1.2, -0.4, 2.0, 0.9])
    assert compute.clustered_stderr(y, np.arange(5)) == pytest.approx(compute.stderr(y), rel=1e-13)


def test_clustered_stderr_from_sample_metadata():
    meta = [{"doc": d} for d in "aabbcc"]
    assert stderr(cluster="doc")(ss([1, 1, 0, 0, 1, 0], meta)) == pytest.approx(
        math.sqrt(1 / 12), abs=1e-15
    )


def test_clustered_stderr_missing_key_names_sample():
    meta = [{"doc": "a"}, {"doc": "b"}, {}]
    with pytest.raises(InvalidInputError, match="sample 2"):
        stderr(cluster="doc")(ss([1, 0, 1], meta))


@pytest.mark.parametrize(
    "fn, values, needs",
    [
        (mean(), [], "at least 1"),
        (accuracy(), [], "at least 1"),
        (var(), [1.0], "at least 2"),
        (std(), [1.0], "at least 2"),
        (stderr(), [1.0], "at least 2"),
        (bootstrap_stderr(seed=1), [], "at least 1"),
    ],
)
def test_undefined_raises_strictly(fn, values, needs):
    with pytest.raises(UndefinedMetricError, match=needs):
        fn(ScoreFrame.from_arrays(values))


def test_one_cluster_is_undefined():
    f = ScoreFrame.from_arrays([1, 0, 1], metadata={"c": ["x", "x", "x"]})
    with pytest.raises(UndefinedMetricError, match="2 clusters"):
        stderr(cluster="c")(f)


def test_evaluate_reports_undefined_records_not_zero():
    ms = evaluate_scores(ss([1.0]), [mean(), stderr(), var()])
    assert ms.get("Mean").value == 1.0
    rec = ms.get("Stderr")
    assert rec.value is None and "at least 2" in rec.parameters["undefined"]
    assert ms.get("Var").is_undefined


def test_bootstrap_is_seed_deterministic_and_seed_sensitive():
    y = np.random.default_rng(0).normal(size=3000)  # many levels: block path
    a = bootstrap_stderr(300, seed=11)(y)
    assert a == bootstrap_stderr(300, seed=11)(y)
    assert a != bootstrap_stderr(300, seed=12)(y)
    b = (np.arange(3000) % 3).astype(float)  # few levels: multinomial path
    assert bootstrap_stderr(300, seed=5)(b) == bootstrap_stderr(300, seed=5)(b)
    # seed=None draws one seed at construction and records it
    m = bootstrap_stderr(100)
    assert isinstance(m.params["seed"], int)
    assert m(y) == m(y)


def test_bootstrap_of_constant_is_zero_and_single_value_is_zero():
    assert bootstrap_stderr(50, seed=0)([0.7] * 40) == 0.0
    assert bootstrap_stderr(50, seed=0)([0.7]) == 0.0


@pytest.mark.parametrize("kind", ["binary", "letters", "normal", "uniform_small"])
def test_bootstrap_agrees_with_analytic_stderr_on_large_samples(kind):
    rng = np.random.default_rng(42)
    n = 20_000
    y = {
        "binary": (rng.random(n) < 0.3).astype(float),
        "letters": rng.choice([0.0, 0.5, 1.0], n),
        "normal": rng.normal(3, 2, n),
        "uniform_small": rng.random(9000),
    }[kind]
    b = compute.bootstrap_stderr(y, 2000, seed=3)
    a = compute.stderr(y)
    # Monte-Carlo relative error ≈ 1/√(2B) = 1.6%; allow 4 sd
    assert abs(b / a - 1) < 0.065


def test_bootstrap_means_are_resample_means_exactly_for_tiny_data():
    # n=2, values 0 and 1: every resample mean is in {0, .5, 1} with probs 1/4, 1/2, 1/4
    m = compute.bootstrap_means(np.array([0.0, 1.0]), 20000, seed=9)
    assert set(np.unique(m).tolist()) <= {0.0, 0.5, 1.0}
    assert abs((m == 0.5).mean() - 0.5) < 0.02
    # block path with a short last block: means stay within the data range and average ȳ
    y = np.arange(10_001, dtype=float)
    mb = compute.bootstrap_means(y, 400, seed=2)
    assert abs(mb.mean() - y.mean()) < 4 * y.std() / math.sqrt(len(y) * 400)


@pytest.mark.parametrize("tail", [17, 4096, 1])
def test_bootstrap_block_path_draws_every_block_value_uniformly(tail):
    # many distinct values (so the block path runs), n = 3 blocks + a short last block of
    # `tail` values offset by 1: n * (resample mean) ≈ draws in the last block ~ Binomial(n, tail/n)
    n = 3 * 4096 + tail
    y = np.arange(n) * 1e-12
    y[-tail:] += 1.0
    assert len(np.unique(y)) * 10 > n  # not the few-levels path
    b = 2000
    k = compute.bootstrap_means(y, b, seed=1) * n
    k = np.round(k)  # drop the 1e-12 · index part (< 2e-4)
    p = tail / n
    assert abs(k.mean() - n * p) < 5 * math.sqrt(n * p * (1 - p) / b)
    assert abs(k.var(ddof=1) / (n * p * (1 - p)) - 1) < 5 * math.sqrt(2 / b)
    # and a value in the middle of a full block: draws of one position ~ Binomial(n, 1/n)
    z = np.arange(n) * 1e-12
    z[5000] += 1.0
    c = np.round(compute.bootstrap_means(z, b, seed=2) * n)
    assert abs(c.mean() - 1) < 5 * math.sqrt(1 / b)
    assert abs(c.var(ddof=1) - (1 - 1 / n)) < 5 * math.sqrt(2 / b)


def test_grouped_values_names_and_all_modes():
    meta = [{"topic": t} for t in ["math", "math", "art", "art", "art"]]
    s = ss(["C", "I", "C", "C", "I"], meta)
    assert grouped(accuracy(), "topic")(s) == {"math": 0.5, "art": 2 / 3, "all": 0.6}
    assert grouped(accuracy(), "topic", all="groups")(s) == {
        "math": 0.5,
        "art": 2 / 3,
        "all": (0.5 + 2 / 3) / 2,
    }
    assert grouped(accuracy(), "topic", all=False, name_template="topic_{group_name}")(s) == {
        "topic_math": 0.5,
        "topic_art": 2 / 3,
    }
    assert grouped(accuracy(), "topic", all_label="overall")(s)["overall"] == 0.6


def test_grouped_records_carry_group_parameters():
    meta = [{"topic": t} for t in ["a", "a", "b", "b"]]
    ms = evaluate_scores(
        ss([1, 0, 1, 1], meta), [grouped(stderr(), "topic", name_template="t_{group_name}")]
    )
    a = ms.get("Stderr", group="a")
    assert (
        a.parameters["name"] == "t_a"
        and a.parameters["group_column"] == "topic"
        and a.parameters["n"] == 2
    )
    assert a.value == pytest.approx(0.5)
    assert ms.get("Stderr", group="b").value == 0.0
    assert ms.get("Stderr", group="all").parameters["all"] == "samples"


def test_grouped_missing_key_names_sample_and_label_collision():
    meta = [{"topic": "a"}, {"topic": "b"}, {"nope": 1}]
    with pytest.raises(InvalidInputError, match="sample 2"):
        grouped(accuracy(), "topic")(ss([1, 0, 1], meta))
    meta = [{"topic": "all"}, {"topic": "b"}]
    with pytest.raises(InvalidInputError, match="collides"):
        grouped(accuracy(), "topic")(ss([1, 0], meta))
    assert grouped(accuracy(), "topic", all=False)(ss([1, 0], meta)) == {"all": 1.0, "b": 0.0}


def test_grouped_all_groups_undefined_when_a_group_is():
    meta = [{"t": t} for t in "abb"]
    ms = evaluate_scores(ss([1.0, 0.0, 1.0], meta), [grouped(stderr(), "t", all="groups")])
    assert ms.get("Stderr", group="a").is_undefined
    agg = ms.get("Stderr", group="all")
    assert agg.is_undefined and "'a'" in agg.parameters["undefined"]


def test_grouped_names_groups_by_str_in_first_appearance_order():
    f = ScoreFrame.from_arrays([1, 0, 1, 0], metadata={"k": [3, 1, 3, 2]})
    assert list(grouped(mean(), "k")(f)) == ["3", "1", "2", "all"]


def test_custom_metric_registry_and_params():
    @metric
    def share_at_least(threshold: float = 0.5):
        def compute_(scores: ScoreFrame) -> float:
            return float((scores.values >= threshold).mean())

        return compute_

    assert "ShareAtLeast" in registered_metrics()
    m = get_metric("share_at_least", threshold=0.75)
    assert m([0.5, 0.75, 1.0, 0.0]) == 0.5
    ms = evaluate_scores(ss([0.5, 0.75, 1.0, 0.0]), ["share_at_least"])
    assert ms.get("ShareAtLeast").parameters["threshold"] == 0.5
    assert ms.get("ShareAtLeast").value == 0.75


def test_custom_metric_inspect_style_iteration_and_name():
    @metric(name="mean_answer_length")
    def answer_length():
        def compute_(scores):
            return float(np.mean([len(s.score.answer or "") for s in scores]))

        return compute_

    s = [SampleScore(Score(1, answer="abc"), 1), SampleScore(Score(0, answer="a"), 2)]
    assert answer_length()(s) == 2.0
    assert get_metric("mean_answer_length").name == "mean_answer_length"


def test_custom_metric_returning_nan_or_none_is_undefined():
    @metric
    def broken():
        return lambda scores: float("nan")

    ms = evaluate_scores(ss([1.0, 2.0]), [broken()])
    assert ms.get("Broken").is_undefined
    with pytest.raises(UndefinedMetricError):
        broken()([1.0])


def test_unknown_metric_name():
    with pytest.raises(InvalidInputError, match="unknown metric"):
        get_metric("acuracy")


def test_grouped_when_every_sample_failed():
    s = [SampleScore(Score(None), 1, sample_metadata={"t": "a"})]
    ms = evaluate_scores(s, [grouped(mean(), "t")])
    assert len(ms) == 1
    agg = ms[0]
    assert agg.is_undefined and agg.parameters["n_failed"] == 1 and agg.parameters["group"] == "all"


def test_uncalled_factory_gets_a_helpful_error():
    with pytest.raises(InvalidInputError, match=r"call it, e.g. accuracy\(\)"):
        evaluate_scores(ss([1.0]), [accuracy])
    with pytest.raises(InvalidInputError, match="parentheses"):
        grouped(accuracy, "k")
