"""Score, SampleScore, value conversion and ScoreFrame."""

import math

import numpy as np
import pytest

from assay.errors import InvalidInputError
from assay.stats import SampleScore, Score, ScoreFrame, value_to_float


@pytest.mark.parametrize(
    "value, expected",
    [
        ("C", 1.0),
        ("I", 0.0),
        ("P", 0.5),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        (np.bool_(True), 1.0),
        ("yes", 1.0),
        ("YES", 1.0),
        ("True", 1.0),
        ("no", 0.0),
        ("false", 0.0),
        ("FALSE", 0.0),
        (3, 3.0),
        (-2.5, -2.5),
        (np.int64(7), 7.0),
        ("0.25", 0.25),
        (" 12 ", 12.0),
        ("-1e-3", -0.001),
    ],
)
def test_value_to_float_table(value, expected):
    assert value_to_float(value) == expected
    assert Score(value).as_float() == expected


def test_partial_credit_value_is_configurable():
    assert value_to_float("P", partial=0.0) == 0.0
    assert Score("P").as_float(partial=0.25) == 0.25


@pytest.mark.parametrize("value", ["maybe", "c", "correct", "", "nan", "inf", "1/2"])
def test_unknown_strings_raise_a_clear_error(value):
    with pytest.raises(InvalidInputError) as e:
        value_to_float(value, record="q7")
    msg = str(e.value)
    assert repr(value) in msg and "q7" in msg and "C/I/P/N" in msg


@pytest.mark.parametrize("value", [math.nan, math.inf, None, [1, 0], {"a": 1}])
def test_non_scalar_or_non_finite_values_raise(value):
    with pytest.raises(InvalidInputError):
        value_to_float(value)


def test_score_accessors():
    assert Score("C").as_bool() is True
    assert Score(2.0).as_int() == 2
    with pytest.raises(InvalidInputError):
        Score(2.5).as_int()
    assert Score("C").as_str() == "C"
    assert Score([1, 0]).as_list() == [1, 0]
    assert Score({"a": 1}).as_dict() == {"a": 1}
    with pytest.raises(InvalidInputError):
        Score("C").as_dict()
    with pytest.raises(InvalidInputError):
        Score({"a": 1}).as_list()


def test_frame_from_scores_excludes_and_counts_none():
    scores = [
        SampleScore(Score("C"), "a"),
        SampleScore(Score(None), "b"),
        SampleScore(Score("P"), "c"),
        SampleScore(Score(None), "d"),
    ]
    f = ScoreFrame.from_scores(scores)
    assert len(f) == 2 and f.n_none == 2
    assert f.values.tolist() == [1.0, 0.5]
    assert f.partial.tolist() == [False, True]
    assert f.failed_ids.tolist() == ["b", "d"]
    assert [s.sample_id for s in f] == ["a", "c"]
    assert f.values_for(partial_credit=False).tolist() == [1.0, 0.0]


def test_frame_conversion_error_names_the_sample():
    scores = [SampleScore(Score("C"), "a"), SampleScore(Score("bogus"), "q-17")]
    with pytest.raises(InvalidInputError, match="q-17"):
        ScoreFrame.from_scores(scores)


def test_frame_from_arrays_validates_lengths_and_nan():
    with pytest.raises(InvalidInputError, match="sample_id"):
        ScoreFrame.from_arrays([1, 0], sample_id=[1])
    with pytest.raises(InvalidInputError, match="metadata"):
        ScoreFrame.from_arrays([1, 0], metadata={"k": [1, 2, 3]})
    with pytest.raises(InvalidInputError, match="index 1"):
        ScoreFrame.from_arrays([1, np.nan])


def test_frame_column_missing_key_names_the_sample():
    scores = [
        SampleScore(Score(1), "s1", sample_metadata={"topic": "a"}),
        SampleScore(Score(0), "s2", sample_metadata={"other": "b"}),
    ]
    f = ScoreFrame.from_scores(scores)
    with pytest.raises(InvalidInputError) as e:
        f.column("topic")
    assert "'s2'" in str(e.value) and "topic" in str(e.value)
    g = ScoreFrame.from_arrays(
        [1, 0], sample_id=["x", "y"], metadata={"k": np.array(["a", None], dtype=object)}
    )
    with pytest.raises(InvalidInputError, match="'y'"):
        g.column("k")
    h = ScoreFrame.from_arrays([1, 0], sample_id=["x", "y"], metadata={"k": [1.0, np.nan]})
    with pytest.raises(InvalidInputError, match="'y'"):
        h.column("k")
    # and through the per-row dicts (NaN counts as missing, as in Inspect)
    rows = [
        SampleScore(Score(1), "p", sample_metadata={"k": 1.0}),
        SampleScore(Score(0), "q", sample_metadata={"k": np.nan}),
    ]
    with pytest.raises(InvalidInputError, match="'q'"):
        ScoreFrame.from_scores(rows).column("k")


def test_frame_concat_mixed_sources_keeps_rows_in_order():
    a = ScoreFrame.from_arrays([1.0, 0.0], sample_id=[1, 2], metadata={"k": ["x", "y"]})
    b = ScoreFrame.from_scores([SampleScore(Score("C"), 3, sample_metadata={"k": "z"})])
    c = ScoreFrame.concat([a, b])
    assert c.values.tolist() == [1.0, 0.0, 1.0]
    assert c.column("k").tolist() == ["x", "y", "z"]
    assert c.sample_id.tolist() == [1, 2, 3]


def test_scores_without_ids_are_separate_samples_even_next_to_int_ids():
    scores = [SampleScore(Score(1), 0), SampleScore(Score(0)), SampleScore(Score(1), 1)]
    f = ScoreFrame.from_scores(scores)
    assert f.n_samples == 3
