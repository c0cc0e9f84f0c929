"""ScoreEvaluator on the evaluator contract: JSON config, plain-array state, merge refusal,
the renamed entry point and the names 0.2.0 removed."""

import io
import json
import warnings

import numpy as np
import pytest

import assay.stats as st
from assay.errors import InvalidInputError
from assay.stats import compute


def _scores():
    rng = np.random.default_rng(1)
    kinds = ["C", "I", "P", 0.5, 2, True, None]
    out = []
    for i in range(60):
        v = kinds[int(rng.integers(0, len(kinds)))]
        out.append(
            st.SampleScore(
                st.Score(v, answer=f"a{i % 3}", metadata={"k": i}),
                sample_id=f"q{i % 20}",
                epoch=i // 20 + 1,
                sample_metadata={"topic": ["x", "y", 3][i % 3], "doc": i % 5},
            )
        )
    return out


METRICS = [
    st.accuracy(),
    st.stderr(cluster="doc"),
    st.bootstrap_stderr(100, seed=3),
    st.grouped(st.mean(), "topic", all="groups"),
]
REDUCERS = ["mean", "mode", "pass_at_2", st.at_least(2, value=0.5)]


def _round_trip(ev):
    buf = io.BytesIO()
    np.savez(buf, **ev.state())
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        return st.ScoreEvaluator.from_state(dict(z))


def test_config_is_json_of_registry_names_and_rebuilds_the_same_metrics():
    ev = st.ScoreEvaluator(METRICS, REDUCERS)
    config = json.loads(json.dumps(ev.config()))
    assert [m["metric"] for m in config["metrics"]] == [
        "Accuracy",
        "Stderr",
        "BootstrapStderr",
        "Mean",
    ]
    assert config["metrics"][2]["params"] == {"num_samples": 100, "seed": 3}
    assert config["metrics"][3]["grouped"]["group_column"] == "topic"
    assert config["reducers"][:3] == ["mean", "mode", "pass_at_2"]
    assert config["reducers"][3] == {"reducer": "at_least", "params": {"k": 2, "value": 0.5}}
    again = st.ScoreEvaluator(**config)
    assert again.config() == ev.config()


@pytest.mark.parametrize("form", ["objects", "frame", "mixed", "dict-values"])
def test_state_round_trip_is_exact_and_plain(form):
    scores = _scores()
    if form == "dict-values":
        scores = [
            st.SampleScore(
                st.Score({"em": s.score.value, "f1": 0.25}), s.sample_id, s.epoch, s.sample_metadata
            )
            for s in scores
        ]
    ev = st.ScoreEvaluator(METRICS, REDUCERS)
    if form in ("objects", "dict-values"):
        ev.add(scores[:25]).add(scores[25:])
    elif form == "frame":
        ev.add(st.ScoreFrame.from_scores(scores[:25])).add(st.ScoreFrame.from_scores(scores[25:]))
    else:
        ev.add(scores[:25]).add(st.ScoreFrame.from_scores(scores[25:]))
    state = ev.state()
    assert all(isinstance(v, np.ndarray) and v.dtype != object for v in state.values())
    back = _round_trip(ev)
    want = ev.compute()
    assert len(want) > 20
    assert back.compute().to_json() == want.to_json()
    # the rebuilt evaluator keeps accumulating like the original
    assert back.add(scores[:7]).compute().to_json() == ev.add(scores[:7]).compute().to_json()


def test_state_of_a_fast_frame_keeps_typed_columns():
    f = st.ScoreFrame.from_arrays(
        [1.0, 0.0, 0.5], sample_id=[1, 2, 3], metadata={"doc": [1, 1, 2], "t": ["a", "b", "a"]}
    )
    state = st.ScoreEvaluator([st.mean()]).add(f).state()
    assert state["batches.values"].dtype == np.float64
    assert state["batches.sample_id"].dtype.kind == "i"
    assert state["batches.meta.0"].dtype.kind == "i"
    assert state["batches.meta.1"].dtype.kind == "U"


def test_merge_refuses_other_metrics_reducers_or_seed():
    base = st.ScoreEvaluator([st.accuracy()], ["mean"]).add(_scores())
    for other in [
        st.ScoreEvaluator([st.mean()], ["mean"]),
        st.ScoreEvaluator([st.accuracy(partial_credit=False)], ["mean"]),
        st.ScoreEvaluator([st.accuracy()], ["max"]),
        st.ScoreEvaluator([st.grouped(st.accuracy(), "topic")], ["mean"]),
    ]:
        with pytest.raises(InvalidInputError, match="configured differently"):
            base.merge(other.add(_scores()))
    a = st.ScoreEvaluator([st.bootstrap_stderr(50, seed=1)])
    with pytest.raises(InvalidInputError, match="seed"):
        a.merge(st.ScoreEvaluator([st.bootstrap_stderr(50, seed=2)]))
    n = len(base)
    base.merge(st.ScoreEvaluator(["accuracy"], "mean").add(_scores()[:3]))
    assert len(base) == n + 3  # the same configuration by Inspect's name merges


def test_empty_refuses_and_bad_batch_leaves_state():
    ev = st.ScoreEvaluator()
    with pytest.raises(InvalidInputError, match="no data was added"):
        ev.compute()
    ev.add(_scores()[:4])
    with pytest.raises(InvalidInputError, match="item 1"):
        ev.add([_scores()[0], "C"])
    assert len(ev) == 4


def test_unregistered_metric_works_but_cannot_be_rebuilt():
    m = st.MetricFn("Share", {}, lambda frame: float(frame.values.mean()))
    ev = st.ScoreEvaluator([m]).add(_scores())
    want = st.evaluate_scores(_scores(), [st.mean()]).get("Mean").value
    assert ev.compute().get("Share").value == pytest.approx(want, rel=1e-15)
    with pytest.raises(InvalidInputError, match="registered factory"):
        st.ScoreEvaluator.from_state(ev.state())


def test_custom_registered_metric_travels_by_name():
    @st.metric
    def share_at_or_above(threshold: float = 0.5):
        return lambda frame: float((frame.values >= threshold).mean())

    ev = st.ScoreEvaluator([share_at_or_above(0.75)]).add(_scores())
    back = _round_trip(ev)
    assert back.compute().to_json() == ev.compute().to_json()
    assert back.compute()[0].type == "ShareAtOrAbove"


def test_the_names_removed_in_0_2_0_are_gone_or_name_their_replacement():
    with pytest.raises(AttributeError):
        st.evaluate  # noqa: B018  (evaluate_scores)
    for keyword in ("key", "group_key"):
        with pytest.raises(TypeError, match=f"{keyword}= was renamed; use group_column="):
            st.grouped(st.accuracy(), **{keyword: "topic"})
    with pytest.raises(InvalidInputError, match="group_column"):
        st.grouped(st.accuracy())
    scores = _scores()
    assert st.grouped(st.accuracy(), group_column="topic")(scores) == st.grouped(
        st.accuracy(), "topic"
    )(scores)


def test_camel_case_types_and_inspect_aliases():
    scores = _scores()
    pairs = [
        ("accuracy", "Accuracy"),
        ("mean", "Mean"),
        ("var", "Var"),
        ("std", "Std"),
        ("stderr", "Stderr"),
        ("bootstrap_stderr", "BootstrapStderr"),
    ]
    for alias, name in pairs:
        assert name in st.registered_metrics()
        params = {"seed": 0} if alias == "bootstrap_stderr" else {}
        a, b = st.get_metric(alias, **params), st.get_metric(name, **params)
        assert a.name == b.name == name and a(scores) == b(scores)
    ms = st.evaluate_scores(scores, [alias for alias, _ in pairs[:5]])
    assert [m.type for m in ms] == [name for _, name in pairs[:5]]


def test_grouped_record_parameters_follow_the_vocabulary():
    ms = st.evaluate_scores(_scores(), [st.grouped(st.accuracy(), "topic")])
    assert {m.parameters["group"] for m in ms} == {"x", "y", "3", "all"}
    assert all(m.parameters["group_column"] == "topic" for m in ms)
    assert not any("group_key" in m.parameters or "name" in m.parameters for m in ms)
    assert ms.get("Accuracy", group="all").parameters["all"] == "samples"


def test_input_faults_are_invalid_input_errors():
    with pytest.raises(InvalidInputError, match="clusters"):
        compute.clustered_stderr(np.array([1.0, 0.0, 1.0]), np.array([0, 1]))
    with pytest.raises(InvalidInputError, match="num_samples"):
        compute.bootstrap_means(np.array([1.0, 0.0]), 1)
    with pytest.raises(InvalidInputError, match="num_samples"):
        st.bootstrap_stderr(1)
    with pytest.raises(InvalidInputError, match="index 0"):
        compute.mean(np.array(["x"], dtype=object))
    with pytest.raises(InvalidInputError, match="kind"):
        st.ScoreEvaluator.from_state(
            {**st.ScoreEvaluator().state(), "batches.kind": np.array("other")}
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidInputError, match="unknown metric"):
            st.ScoreEvaluator(["acuracy"])


def test_old_import_paths_still_work():
    from assay.stats.frame import ScoreFrame
    from assay.stats.grouped import GroupedMetricFn
    from assay.stats.metric_registry import MetricFn, get_metric
    from assay.stats.reducer_registry import EpochGroups, Reducer, reduce_scores
    from assay.stats.score import SampleScore, Score
    from assay.stats.score_input import as_frame

    assert ScoreFrame is st.ScoreFrame and MetricFn is st.MetricFn and Reducer is st.Reducer
    assert Score is st.Score and SampleScore is st.SampleScore
    assert GroupedMetricFn and as_frame and get_metric and EpochGroups and reduce_scores
