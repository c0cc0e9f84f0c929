"""The one-pass read of score objects (few distinct values converted through a table) gives
exactly what the general path gives, and falls back to it for failed scores, the partial
letter, continuous values, unhashable values and values that do not convert."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from inspect_ai.scorer import SampleScore as ISampleScore
from inspect_ai.scorer import Score as IScore
from inspect_ai.scorer import accuracy as i_accuracy
from inspect_ai.scorer import stderr as i_stderr

import assay.stats as st
from assay.errors import InvalidInputError
from assay.stats.frame import ScoreFrame
from assay.stats.frame_build import _one_pass, scores_columns
from assay.stats.score_input import as_frame

POOL = ["C", "I", "P", "N", 0, 1, 0.5, True, False, 1.0, 2, None, "yes", "no"]


def _iscore(v):
    # Inspect refuses a None value when validating; a failed scorer's object can hold one
    return IScore.model_construct(value=None) if v is None else IScore(value=v)


def _objects(values, *, inspect: bool = True):
    if inspect:
        return [
            ISampleScore(score=_iscore(v), sample_id=i, sample_metadata={"g": i % 3})
            for i, v in enumerate(values)
        ]
    return [st.SampleScore(st.Score(v), i, 1, {"g": i % 3}) for i, v in enumerate(values)]


def _frames(objs, to_float=None):
    fast = ScoreFrame(**scores_columns(objs, None, 0.5, to_float, "sample", lazy=True))
    general = ScoreFrame(**scores_columns(objs, None, 0.5, to_float, "sample", lazy=False))
    return fast, general


def _same(a: ScoreFrame, b: ScoreFrame) -> None:
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.partial, b.partial)
    np.testing.assert_array_equal(a.failed_ids, b.failed_ids)
    np.testing.assert_array_equal(a.sample_id, b.sample_id)
    np.testing.assert_array_equal(a.epoch, b.epoch)
    assert a.raw.tolist() == b.raw.tolist()
    assert a.column("g").tolist() == b.column("g").tolist()


@settings(max_examples=80, deadline=None)
@given(hst.lists(hst.sampled_from(POOL), min_size=1, max_size=40), hst.booleans())
def test_one_pass_equals_the_general_path(values, inspect):
    objs = _objects(values, inspect=inspect)
    fast, general = _frames(objs)
    _same(fast, general)


def test_the_usual_case_takes_the_one_pass_and_the_rest_fall_back():
    assert (
        _one_pass(lambda s: s.score.value, _objects(["C", "I", 1, True]), 4, 0.5, None) is not None
    )
    for values in (["C", None], ["C", "P"], [[1, 2], "C"], ["C", "maybe"]):
        assert _one_pass(lambda s: s.score.value, _objects(values), len(values), 0.5, None) is None
    many = [float(i) / 7 for i in range(600)]  # continuous: more distinct values than the table
    assert _one_pass(lambda s: s.score.value, _objects(many), 600, 0.5, None) is None
    fast, general = _frames(_objects(many))
    _same(fast, general)


def test_a_value_that_does_not_convert_is_named_as_before():
    objs = _objects(["C", "I", "maybe", "C"])
    with pytest.raises(InvalidInputError, match="maybe"):
        st.accuracy()(objs)


def test_a_mapping_converts_through_the_table():
    objs = _objects(["good", "bad", "good", "meh"])
    mapping = {"values": {"good": 1.0, "bad": 0.0, "meh": 0.25}}
    fast, general = _frames(objs, mapping)
    _same(fast, general)
    assert fast.values.tolist() == [1.0, 0.0, 1.0, 0.25]


def test_metric_calls_on_inspect_objects_equal_inspect():
    rng = np.random.default_rng(3)
    values = rng.choice(["C", "I"], 500).tolist()
    objs = [
        ISampleScore(score=IScore(value=v), sample_id=i, sample_metadata={"cluster": i % 20})
        for i, v in enumerate(values)
    ]
    assert st.accuracy()(objs) == pytest.approx(i_accuracy()(objs), abs=1e-15)
    assert st.stderr()(objs) == pytest.approx(i_stderr()(objs), abs=1e-15)
    clustered = st.stderr(cluster="cluster")(objs)
    assert clustered == pytest.approx(i_stderr(cluster="cluster")(objs), abs=1e-15)


def test_as_frame_copies_the_list_unless_borrowed():
    objs = _objects(["C", "I", "C"])
    kept = list(objs)
    frame = as_frame(objs)
    objs[0] = _objects(["I"])[0]
    objs.append(_objects(["C"])[0])
    assert frame.sample_id.tolist() == [0, 1, 2]  # read later, from the copy
    borrowed = as_frame(kept, borrow=True)
    assert borrowed.values.tolist() == [1.0, 0.0, 1.0]
