"""assay's metrics on Inspect AI's own objects (what an Inspect user holds): the same numbers
as Inspect's metrics on the same list, read in one pass of attribute reads per field (and
only the fields the metric needs)."""

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore as ISampleScore
from inspect_ai.scorer import Score as IScore
from inspect_ai.scorer import accuracy as i_accuracy
from inspect_ai.scorer import ci as i_ci
from inspect_ai.scorer import ci_wilson as i_ci_wilson
from inspect_ai.scorer import grouped as i_grouped
from inspect_ai.scorer import mean as i_mean
from inspect_ai.scorer import std as i_std
from inspect_ai.scorer import stderr as i_stderr
from inspect_ai.scorer import var as i_var
from stats_inspect_helpers import close

import assay.stats as st
from assay.errors import InvalidInputError


def _inspect_scores(seed, n=300, ids="int"):
    rng = np.random.default_rng(seed)
    letters = rng.choice(["C", "I", "P", "C"], n).tolist()
    clusters = rng.integers(0, 12, n).tolist()
    topics = rng.choice(["math", "bio"], n).tolist()

    def sid(i):
        return {"int": i, "str": f"q{i}", "none": None}[ids]

    return [
        ISampleScore(score=IScore(value=v, answer="a"), sample_id=sid(i),
                     sample_metadata={"cluster": c if ids != "str" else f"c{c}", "topic": t})
        for i, (v, c, t) in enumerate(zip(letters, clusters, topics))
    ]  # fmt: skip


PAIRS = [
    ("accuracy", st.accuracy(), i_accuracy()),
    ("mean", st.mean(), i_mean()),
    ("var", st.var(), i_var()),
    ("std", st.std(), i_std()),
    ("stderr", st.stderr(), i_stderr()),
    ("stderr(cluster)", st.stderr(cluster="cluster"), i_stderr(cluster="cluster")),
    ("ci_wilson", st.ci_wilson(), i_ci_wilson()),
    ("ci_wilson(cluster)", st.ci_wilson(cluster="cluster"), i_ci_wilson(cluster="cluster")),
    ("ci", st.ci(), i_ci()),
]


@pytest.mark.parametrize("ids", ["int", "str", "none"])
@pytest.mark.parametrize("name, ours, theirs", PAIRS, ids=[p[0] for p in PAIRS])
def test_metrics_on_inspect_objects_equal_inspect(name, ours, theirs, ids):
    scores = _inspect_scores(1, ids=ids)
    got, want = ours(scores), theirs(scores)
    if isinstance(want, dict):
        assert set(got) == set(want) and all(close(got[k], want[k]) for k in want), (got, want)
    else:
        assert close(got, want), (got, want)


def test_grouped_on_inspect_objects_equals_inspect():
    scores = _inspect_scores(2)
    got = st.grouped(st.accuracy(), "topic")(scores)
    want = i_grouped(i_accuracy(), "topic")(scores)
    assert set(got) == set(want) and all(close(got[k], want[k]) for k in want)


def test_bare_inspect_scores():
    scores = [IScore(value=v) for v in "CICCP"]
    assert close(st.accuracy()(scores), i_accuracy()([ISampleScore(score=s) for s in scores]))


def test_evaluate_scores_and_evaluator_take_inspect_objects():
    theirs = _inspect_scores(3)
    ours = [st.SampleScore(st.Score(s.score.value, "a"), s.sample_id, 1, s.sample_metadata)
            for s in theirs]  # fmt: skip
    metrics = [st.accuracy(), st.stderr(cluster="cluster"), st.grouped(st.mean(), "topic")]
    want = [m.to_dict() for m in st.evaluate_scores(ours, metrics)]
    assert [m.to_dict() for m in st.evaluate_scores(theirs, metrics)] == want
    ev = st.ScoreEvaluator(metrics).add(theirs[:100]).add(theirs[100:])
    assert [m.to_dict() for m in st.ScoreEvaluator.from_state(ev.state()).compute()] == want
    # dict values: read into assay objects, evaluated key by key
    dicts = [ISampleScore(score=IScore(value={"em": s.score.value, "f1": 0.5}), sample_id=i)
             for i, s in enumerate(theirs)]  # fmt: skip
    recs = st.evaluate_scores(dicts, [st.mean()])
    assert {m.parameters["score_key"] for m in recs} == {"em", "f1"}
    assert close(recs.get("Mean", score_key="em").value, i_mean()(theirs))


def test_refusals_name_the_item_or_sample():
    scores = _inspect_scores(4, n=20)
    with pytest.raises(InvalidInputError, match="item 5"):
        st.mean()([*scores[:5], "C", *scores[5:]])
    no_cluster = [*scores[:7], ISampleScore(score=IScore(value="C"), sample_id=99)]
    with pytest.raises(InvalidInputError, match="sample 99: field 'cluster'"):
        st.stderr(cluster="cluster")(no_cluster)


def test_lazy_frame_equals_eager_frame():
    """A metric call reads the ids, epochs, metadata and score objects only if asked: the
    lazy frame gives the same columns as the eager one."""
    from assay.stats.score_input import as_frame

    scores = _inspect_scores(5, n=50, ids="str")
    lazy, eager = as_frame(scores), st.ScoreFrame.from_scores(scores)
    assert lazy.values.tolist() == eager.values.tolist()
    assert lazy.column("cluster").tolist() == eager.column("cluster").tolist()
    for name in ("sample_id", "epoch", "metadata_rows", "scores"):
        assert getattr(lazy, name).tolist() == getattr(eager, name).tolist(), name
    assert [s.sample_id for s in lazy] == [s.sample_id for s in eager]
    assert lazy.take([1, 2]).sample_id.tolist() == ["q1", "q2"]


class Counted:
    """An Inspect-shaped sample score that counts reads of each attribute."""

    reads: dict[str, int] = {}

    def __init__(self, value, sid, meta):
        self._d = {"score": IScore(value=value), "sample_id": sid, "sample_metadata": meta}

    def __getattr__(self, name):
        if name not in ("score", "sample_id", "sample_metadata"):
            raise AttributeError(name)
        Counted.reads[name] = Counted.reads.get(name, 0) + 1
        return self._d[name]


def test_one_pass_of_attribute_reads_and_only_the_fields_needed():
    n = 500
    scores = [Counted("C" if i % 3 else "I", i, {"cluster": i % 7}) for i in range(n)]
    Counted.reads = {}
    got = st.stderr(cluster="cluster")(scores)
    # the type check reads item 0 once; then one read of score and of metadata per object,
    # and none of sample_id (a clustered stderr does not need it)
    assert Counted.reads["score"] <= n + 2
    assert Counted.reads["sample_metadata"] <= n + 2
    assert Counted.reads.get("sample_id", 0) <= 2
    want = i_stderr(cluster="cluster")(
        [ISampleScore(score=s._d["score"], sample_id=s._d["sample_id"],
                      sample_metadata=s._d["sample_metadata"]) for s in scores]
    )  # fmt: skip
    assert close(got, want)
