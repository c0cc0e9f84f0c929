"""ci (t and bootstrap), ci_wilson, frequency and the panel reducers inside assay's
pipeline: properties, the bootstrap interval, and bad input."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

import assay.stats as st
from assay.errors import InvalidInputError

values = hs.lists(hs.floats(0, 1, allow_nan=False), min_size=2, max_size=60)


@settings(max_examples=80, deadline=None)
@given(values, hs.floats(0.5, 0.99))
def test_t_interval_contains_the_mean_and_grows_with_the_level(ys, level):
    lo_hi = st.ci(level)(ys)
    wider = st.ci(min(level + 0.005, 0.999))(ys)
    m = float(np.mean(ys))
    assert lo_hi["lower"] <= m + 1e-12 and m - 1e-12 <= lo_hi["upper"]
    assert math.isclose(lo_hi["lower"] + lo_hi["upper"], 2 * m, abs_tol=1e-9)
    assert wider["upper"] - wider["lower"] >= lo_hi["upper"] - lo_hi["lower"] - 1e-12


@settings(max_examples=80, deadline=None)
@given(values, hs.floats(0.5, 0.999))
def test_wilson_interval_stays_in_the_unit_interval_around_the_proportion(ys, level):
    assume(len(set(ys)) > 1)
    out = st.ci_wilson(level)(ys)
    assert 0.0 <= out["lower"] <= out["upper"] <= 1.0
    assert out["lower"] <= float(np.mean(ys)) + 1e-12 <= out["upper"] + 2e-12


def test_bootstrap_interval_is_seeded_and_near_the_t_interval_for_many_scores():
    rng = np.random.default_rng(0)
    ys = rng.integers(0, 2, 4000).astype(float)
    boot = st.ci(method="bootstrap", num_samples=4000, seed=3)
    assert boot(ys) == boot(ys)
    t = st.ci()(ys)
    b = boot(ys)
    half = (t["upper"] - t["lower"]) / 2
    assert abs(b["lower"] - t["lower"]) < 0.1 * half
    assert abs(b["upper"] - t["upper"]) < 0.1 * half
    rec = st.evaluate_scores(st.ScoreFrame.from_arrays(ys), [boot]).get("Ci")
    assert rec.parameters["seed"] == 3 and rec.parameters["ci_method"] == "bootstrap"


def test_cluster_bootstrap_widens_the_interval_for_correlated_clusters():
    rng = np.random.default_rng(1)
    doc = np.repeat(np.arange(40), 25)
    ys = (rng.random(40)[doc] > 0.5).astype(float)  # every cluster all 0 or all 1
    frame = st.ScoreFrame.from_arrays(ys, metadata={"doc": doc})
    plain = st.ci(method="bootstrap", seed=0)(frame)
    clustered = st.ci(method="bootstrap", cluster="doc", seed=0)(frame)
    t_clustered = st.ci(cluster="doc")(frame)
    width = clustered["upper"] - clustered["lower"]
    assert width > 3 * (plain["upper"] - plain["lower"])
    assert abs(width - (t_clustered["upper"] - t_clustered["lower"])) < 0.25 * width
    means = st.metrics.cluster_bootstrap_means(ys, doc, 2000, seed=5)
    assert abs(means.mean() - ys.mean()) < 0.02


def test_bad_parameters_are_refused():
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(InvalidInputError, match="level"):
            st.ci(bad)
        with pytest.raises(InvalidInputError, match="level"):
            st.ci_wilson(bad)
    with pytest.raises(InvalidInputError, match="method"):
        st.ci(method="normal")
    with pytest.raises(InvalidInputError, match="on_missing"):
        st.aggregate("f1", st.mean(), on_missing="drop")
    with pytest.raises(InvalidInputError, match="one string"):
        st.frequency("yes")


def test_specs_rebuild_every_new_metric():
    metrics = [
        st.ci(0.9, cluster="doc"),
        st.ci(method="bootstrap", seed=4),
        st.ci_wilson(0.8),
        st.krippendorff_alpha("ratio", to_float={"correct": "ok"}),
        st.frequency(["a", "b"], normalize=False),
        st.aggregate("f1", st.grouped(st.mean(), "topic"), on_missing="zero"),
        st.grouped(st.krippendorff_alpha("interval"), "topic", all="groups"),
    ]
    for m in metrics:
        again = st.metric_from_spec(m.spec)
        assert again.spec == m.spec and again.name == m.name and again.takes == m.takes
    assert st.get_metric("krippendorff_alpha").name == "KrippendorffAlpha"
    assert st.get_metric("frequency").name == "Frequency"
    assert st.get_metric("ci_wilson").name == "CiWilson"
    assert st.get_reducer("collect").collects and st.get_reducer("majority").keep_failed


def test_frequency_counts_every_epoch_once_whatever_the_reducers():
    scores = [
        st.SampleScore(st.Score(v), sid, epoch)
        for sid, votes in enumerate([["yes", "yes", "no"], ["no", None, "unsure"]])
        for epoch, v in enumerate(votes, 1)
    ]
    recs = st.evaluate_scores(scores, [st.frequency(["yes", "no"])], reducers=["mean", "mode"])
    (rec,) = recs.filter("Frequency")
    assert rec.value == {"yes": 0.4, "no": 0.4, "unsure": 0.2}
    assert rec.parameters["n"] == 5 and rec.parameters["n_failed"] == 1


def test_majority_reducer_in_the_pipeline_counts_failed_votes():
    scores = [
        st.SampleScore(st.Score(v), sid, epoch)
        for sid, votes in enumerate([["C", "C", "I"], ["C", None, "I"], ["I", None, None]])
        for epoch, v in enumerate(votes, 1)
    ]
    rec = st.evaluate_scores(scores, [st.accuracy()], reducers=["majority"]).get("Accuracy")
    assert rec.value == 1.0 and rec.parameters["n"] == 1 and rec.parameters["n_failed"] == 2
    reduced = st.reduce_scores(scores, "majority")
    assert reduced[1].score.value is None and reduced[1].score.metadata["panel"] == ["C", None, "I"]
    with pytest.raises(InvalidInputError, match="scalar"):
        st.get_reducer("collect")([st.Score({"a": 1}), st.Score({"a": 0})])


def test_custom_metrics_can_take_raw_or_unreduced_scores():
    @st.metric(scores="unreduced")
    def epochs_seen():
        return lambda scores: float(len(scores))

    @st.metric(takes="scores")
    def share_of_verdict(verdict: str = "maybe"):
        return lambda scores: sum(s.score.value == verdict for s in scores) / len(scores)

    scores = [
        st.SampleScore(st.Score(v), sid, epoch)
        for sid, votes in enumerate([["maybe", "maybe"], ["no", "maybe"], ["no", "no"]])
        for epoch, v in enumerate(votes, 1)
    ]
    recs = st.evaluate_scores(scores, [epochs_seen(), share_of_verdict()], reducers=["majority"])
    assert (
        recs.get("EpochsSeen").value == 6.0 and "reducer" not in recs.get("EpochsSeen").parameters
    )
    assert recs.get("ShareOfVerdict").value == 0.5  # majority: maybe, (none), no
    assert recs.get("ShareOfVerdict").parameters["n_failed"] == 1
    with pytest.raises(InvalidInputError, match="takes"):
        st.metric(takes="rows")


@settings(max_examples=60, deadline=None)
@given(values, hs.floats(0.5, 0.99))
def test_one_sample_per_cluster_gives_the_plain_intervals(ys, level):
    frame = st.ScoreFrame.from_arrays(ys, metadata={"doc": np.arange(len(ys))})
    for metric in (st.ci, st.ci_wilson):
        plain, clustered = metric(level)(frame), metric(level, cluster="doc")(frame)
        if metric is st.ci:  # same se and same degrees of freedom
            assert math.isclose(plain["lower"], clustered["lower"], rel_tol=1e-9, abs_tol=1e-12)
            assert math.isclose(plain["upper"], clustered["upper"], rel_tol=1e-9, abs_tol=1e-12)
        else:  # t instead of z: never narrower
            assert clustered["lower"] <= plain["lower"] + 1e-12
            assert clustered["upper"] >= plain["upper"] - 1e-12


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.sampled_from(["a", "b", "c", True, 2]), min_size=1, max_size=50))
def test_frequency_shares_sum_to_one_and_counts_to_n(vals):
    shares = st.frequency(["z"])(vals)
    counts = st.frequency(normalize=False)(vals)
    assert math.isclose(sum(shares.values()), 1.0) and shares["z"] == 0.0
    assert sum(counts.values()) == len(vals)
