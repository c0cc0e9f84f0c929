"""Differential tests against Inspect AI's own metric and reducer functions.

Same generated scores through both; where assay's semantics differ on purpose (see
docs/stats.md, "Differences from Inspect AI") the difference itself is asserted.
"""

import logging
import math
import zlib

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore as ISampleScore
from inspect_ai.scorer import Score as IScore
from inspect_ai.scorer import accuracy as i_accuracy
from inspect_ai.scorer import bootstrap_stderr as i_bootstrap_stderr
from inspect_ai.scorer import grouped as i_grouped
from inspect_ai.scorer import mean as i_mean
from inspect_ai.scorer import std as i_std
from inspect_ai.scorer import stderr as i_stderr
from inspect_ai.scorer import value_to_float as i_value_to_float
from inspect_ai.scorer import var as i_var
from inspect_ai.scorer._reducer.registry import create_reducers

import assay.stats as st
from assay.errors import InvalidInputError

TOL = 1e-12
VALUES = [
    "C",
    "I",
    "P",
    "N",
    True,
    False,
    1,
    0,
    0.25,
    0.75,
    "yes",
    "no",
    "true",
    "false",
    "0.5",
    "2",
]


def _pair(values, meta=None, ids=None, epochs=None):
    ids = list(range(len(values))) if ids is None else ids
    epochs = [1] * len(values) if epochs is None else epochs
    meta = [None] * len(values) if meta is None else meta
    ours = [st.SampleScore(st.Score(v), i, e, m) for v, i, e, m in zip(values, ids, epochs, meta)]
    theirs = [
        ISampleScore(score=IScore(value=v), sample_id=i, sample_metadata=m)
        for v, i, m in zip(values, ids, meta)
    ]
    return ours, theirs


def _random_scores(rng, n, kinds=VALUES):
    picks = rng.integers(0, len(kinds), n)
    return [kinds[i] for i in picks]


def test_value_to_float_agrees_on_every_known_form():
    to_float = i_value_to_float()
    compared = 0
    for v in VALUES + ["YES", "False", "-3.5", "1e3", 7, -2.0]:
        assert st.value_to_float(v) == to_float(v), v
        compared += 1
    assert compared == len(VALUES) + 6


@pytest.mark.parametrize("seed", range(8))
def test_metrics_agree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    values = _random_scores(rng, n)
    meta = [
        {"cat": f"c{int(c)}", "doc": int(d)}
        for c, d in zip(rng.integers(0, 5, n), rng.integers(0, 30, n))
    ]
    ours, theirs = _pair(values, meta)
    pairs = [
        (st.accuracy(), i_accuracy()),
        (st.mean(), i_mean()),
        (st.var(), i_var()),
        (st.std(), i_std()),
        (st.stderr(), i_stderr()),
    ]
    compared = 0
    for a, b in pairs:
        assert a(ours) == pytest.approx(b(theirs), abs=TOL, rel=TOL), a.name
        compared += 1
    if len({m["doc"] for m in meta}) >= 2:
        assert st.stderr(cluster="doc")(ours) == pytest.approx(
            i_stderr(cluster="doc")(theirs), rel=1e-10
        )
        compared += 1
    assert compared >= len(pairs) > 0


@pytest.mark.parametrize("seed", range(6))
def test_grouped_agrees(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 300))
    values = _random_scores(rng, n)
    meta = [{"cat": int(c)} for c in rng.integers(0, 6, n)]
    ours, theirs = _pair(values, meta)
    compared = 0
    for kwargs in [
        {},
        {"all": "groups"},
        {"all": False},
        {"name_template": "cat_{group_name}"},
        {"all_label": "overall"},
    ]:
        a = st.grouped(st.accuracy(), "cat", **kwargs)(ours)
        b = i_grouped(i_accuracy(), "cat", **kwargs)(theirs)
        assert list(a) == list(b)
        for k in a:
            assert a[k] == pytest.approx(b[k], abs=TOL), (kwargs, k)
            compared += 1
    assert compared > 0


@pytest.mark.parametrize(
    "name",
    [
        "mean",
        "median",
        "mode",
        "max",
        "pass_at_1",
        "pass_at_2",
        "pass_at_3",
        "pass_k_1",
        "pass_k_2",
        "pass_k_3",
        "at_least_1",
        "at_least_2",
        "at_least_4",
    ],
)
def test_reducers_agree(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    theirs = create_reducers(name)[0]
    ours = st.get_reducer(name)
    kinds = ["C", "I", "P", "N", 1.0, 0.0, 0.5, 0.25, True, "yes"]
    compared = 0
    for _ in range(150):
        n = int(rng.integers(3, 8))
        values = _random_scores(rng, n, kinds)
        a = ours([st.Score(v) for v in values]).value
        b = theirs([IScore(value=v) for v in values]).value
        if isinstance(b, (int, float)) and not isinstance(b, bool) and not isinstance(a, str):
            assert float(a) == pytest.approx(float(b), abs=TOL), values
        else:
            assert a == b, values
        compared += 1
    assert compared == 150


def test_dict_valued_reduction_agrees():
    rng = np.random.default_rng(7)
    compared = 0
    for name in ["mean", "median", "mode", "max", "pass_at_2", "at_least_2"]:
        theirs = create_reducers(name)[0]
        ours = st.get_reducer(name)
        for _ in range(30):
            n = int(rng.integers(2, 6))
            values = [
                {"a": _random_scores(rng, 1, ["C", "I", "P"])[0], "b": float(rng.random())}
                for _ in range(n)
            ]
            a = ours([st.Score(v) for v in values]).value
            b = theirs([IScore(value=v) for v in values]).value
            assert a.keys() == b.keys()
            for k in a:
                if isinstance(b[k], str):
                    assert a[k] == b[k]
                else:
                    assert float(a[k]) == pytest.approx(float(b[k]), abs=TOL)
                compared += 1
    assert compared > 0


def test_epoch_pipeline_agrees_with_inspect_reduce_then_metric():
    """Inspect reduces epochs per sample (reduce_scores) then applies metrics; so do we."""
    from inspect_ai._eval.task.results import reduce_scores as i_reduce_scores

    rng = np.random.default_rng(11)
    n_samples, n_epochs = 60, 4
    ids = [i for i in range(n_samples) for _ in range(n_epochs)]
    eps = [e + 1 for _ in range(n_samples) for e in range(n_epochs)]
    values = _random_scores(rng, len(ids), ["C", "I", "P"])
    meta = [{"doc": i % 7} for i in ids]
    ours, theirs = _pair(values, meta, ids, eps)
    reducers = ["mean", "mode", "max", "median", "pass_at_2", "pass_k_2", "at_least_3"]
    ms = st.evaluate_scores(
        ours, [st.accuracy(), st.stderr(), st.stderr(cluster="doc")], reducers=reducers
    )
    compared = 0
    for name in reducers:
        reduced = i_reduce_scores(theirs, create_reducers(name)[0])
        assert ms.get("Accuracy", reducer=name).value == pytest.approx(
            i_accuracy()(reduced), abs=TOL
        )
        assert ms.get("Stderr", reducer=name, n=n_samples, cluster=None).value == pytest.approx(
            i_stderr()(reduced), abs=TOL
        )
        assert ms.get("Stderr", reducer=name, cluster="doc").value == pytest.approx(
            i_stderr(cluster="doc")(reduced), rel=1e-10
        )
        compared += 3
    assert compared == 3 * len(reducers)


def test_bootstrap_agrees_statistically():
    """Inspect resamples with numpy's global RNG (std with ddof=0); assay with a seeded
    Generator (ddof=1). Same data: the two estimates agree within Monte-Carlo error."""
    rng = np.random.default_rng(3)
    values = rng.choice([0.0, 0.5, 1.0], 4000).tolist()
    ours, theirs = _pair(values)
    np.random.seed(0)
    b = i_bootstrap_stderr(num_samples=1000)(theirs)
    a = st.bootstrap_stderr(1000, seed=0)(ours)
    assert abs(a / b - 1) < 0.15  # each is within ~2.2% (1 sd) of the truth


# ---------------------------------------------------------------- deliberate differences
def test_difference_unknown_string_raises_instead_of_zero(caplog):
    with caplog.at_level(logging.WARNING):
        assert i_value_to_float()("maybe") == 0.0  # Inspect: warning and 0
    with pytest.raises(InvalidInputError, match="maybe"):
        st.value_to_float("maybe")
    # lower-case letters are not the C/I/P/N letters in either library
    assert i_value_to_float()("c") == 0.0
    with pytest.raises(InvalidInputError):
        st.value_to_float("c")


def test_difference_undefined_instead_of_zero():
    one_ours, one_theirs = _pair(["C"])
    assert i_stderr()(one_theirs) == 0 and i_var()(one_theirs) == 0 and i_std()(one_theirs) == 0
    ms = st.evaluate_scores(one_ours, [st.stderr(), st.var(), st.std()])
    assert all(m.is_undefined for m in ms)
    assert i_mean()([]) == 0.0 and i_accuracy()([]) == 0.0
    assert st.evaluate_scores([], [st.mean(), st.accuracy()]).get("Mean").is_undefined
    meta = [{"doc": 1}, {"doc": 1}]
    ours, theirs = _pair(["C", "I"], meta)
    assert i_stderr(cluster="doc")(theirs) == 0.0
    assert st.evaluate_scores(ours, [st.stderr(cluster="doc")])[0].is_undefined


def test_difference_failed_samples_are_none_not_nan():
    # Inspect marks an unscored sample with a NaN value; assay with None (NaN is bad input)
    ours = [st.SampleScore(st.Score("C"), 1), st.SampleScore(st.Score(None), 2)]
    rec = st.evaluate_scores(ours, [st.accuracy()])[0]
    assert rec.value == 1.0 and rec.parameters["n_failed"] == 1
    with pytest.raises(InvalidInputError, match="not finite"):
        st.evaluate_scores([st.SampleScore(st.Score(math.nan), 1)])
    # Inspect's reducer skips NaN epochs the way assay skips None epochs
    a = st.get_reducer("mean")([st.Score("C"), st.Score(None), st.Score("I")]).value
    b = create_reducers("mean")[0](
        [IScore(value="C"), IScore(value=math.nan), IScore(value="I")]
    ).value
    assert a == b == 0.5


def test_difference_at_least_value_type_and_partial_switch():
    # Inspect's at_least gives the int 1/0; assay the float 1.0/0.0 (equal as numbers)
    b = create_reducers("at_least_1")[0]([IScore(value="C")]).value
    a = st.get_reducer("at_least_1")([st.Score("C")]).value
    assert a == b and type(b) is int and type(a) is float
    # Inspect always credits P with 0.5; assay can switch it off
    ours, theirs = _pair(["P", "C"])
    assert i_accuracy()(theirs) == st.accuracy()(ours) == 0.75
    assert st.accuracy(partial_credit=False)(ours) == 0.5


def test_difference_bootstrap_ddof():
    # same resample means -> Inspect's std (ddof=0) is √((B-1)/B) times assay's (ddof=1)
    means = st.bootstrap_means(np.array([0.0, 1.0, 1.0, 0.5] * 50), 500, seed=4)
    ours = st.bootstrap_stderr(500, seed=4)([0.0, 1.0, 1.0, 0.5] * 50)
    assert ours == pytest.approx(np.std(means, ddof=1), rel=1e-12)
    assert np.std(means) == pytest.approx(ours * math.sqrt(499 / 500), rel=1e-12)


def test_list_valued_reduction_agrees():
    rng = np.random.default_rng(8)
    compared = 0
    for name in ["mean", "median", "mode", "max", "pass_at_2", "pass_k_2", "at_least_2"]:
        theirs = create_reducers(name)[0]
        ours = st.get_reducer(name)
        for _ in range(30):
            n = int(rng.integers(2, 6))
            values = [
                [_random_scores(rng, 1, ["C", "I", "P"])[0], float(rng.integers(0, 3)) / 2]
                for _ in range(n)
            ]
            a = ours([st.Score(v) for v in values]).value
            b = theirs([IScore(value=v) for v in values]).value
            assert len(a) == len(b)
            for x, y in zip(a, b):
                assert (
                    x == y if isinstance(y, str) else float(x) == pytest.approx(float(y), abs=TOL)
                )
                compared += 1
    assert compared > 0
