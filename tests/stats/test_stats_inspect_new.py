"""Differential tests against Inspect AI for the newer metrics and reducers: ``ci``,
``ci_wilson`` (t and bootstrap), ``krippendorff_alpha``, ``frequency``, ``aggregate`` and
``grouped`` over them (reducers, mappings and perplexity: test_stats_inspect_panel.py).
Same generated scores through both, awkward cases included; where assay
differs on purpose (undefined is None, not 0 or NaN) the difference itself is asserted.
"""

import math

import numpy as np
import pytest
from inspect_ai.scorer import accuracy as i_accuracy
from inspect_ai.scorer import aggregate as i_aggregate
from inspect_ai.scorer import ci as i_ci
from inspect_ai.scorer import ci_wilson as i_ci_wilson
from inspect_ai.scorer import frequency as i_frequency
from inspect_ai.scorer import krippendorff_alpha as i_krippendorff_alpha
from inspect_ai.scorer import mean as i_mean
from inspect_ai.scorer import stderr as i_stderr
from inspect_ai.scorer import var as i_var
from stats_inspect_helpers import TOL, close, pair

import assay.stats as st
from assay.errors import InvalidInputError


def _interval_cases():
    rng = np.random.default_rng(11)
    for n in (2, 3, 5, 17, 60, 400):
        for kind in ("binary", "letters", "continuous", "same"):
            if kind == "binary":
                vals = rng.integers(0, 2, n).tolist()
            elif kind == "letters":
                vals = rng.choice(["C", "I", "P"], n).tolist()
            elif kind == "continuous":
                vals = rng.random(n).round(3).tolist()
            else:
                vals = [0.5] * n
            clusters = rng.integers(0, max(2, n // 4), n).tolist()
            yield vals, [{"doc": int(c)} for c in clusters]


def _compare_intervals(ours_metric, theirs_metric, level):
    """Both interval metrics, plain and clustered, on every generated case."""
    compared = 0
    for vals, meta in _interval_cases():
        ours, theirs = pair(vals, meta)
        for cluster in (None, "doc"):
            if cluster and len({m["doc"] for m in meta}) < 2:
                continue
            ours_v = ours_metric(level, cluster=cluster)(ours)
            theirs_v = theirs_metric(level, cluster=cluster)(theirs)
            for k in ("lower", "upper"):
                assert close(ours_v[k], theirs_v[k]), (vals, cluster, k, ours_v, theirs_v)
                compared += 1
    return compared


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_ci_t_agrees_plain_and_clustered(level):
    assert _compare_intervals(st.ci, i_ci, level) > 80


@pytest.mark.parametrize("level", [0.8, 0.95, 0.999])
def test_ci_wilson_agrees_plain_and_clustered(level):
    compared = _compare_intervals(st.ci_wilson, i_ci_wilson, level)
    # all-correct and all-wrong (p̂ = 0 or 1), clustered: the unadjusted n is used
    for v in ("C", "I"):
        ours, theirs = pair([v] * 9, [{"doc": i % 3} for i in range(9)])
        a, b = st.ci_wilson(level, cluster="doc")(ours), i_ci_wilson(level, cluster="doc")(theirs)
        assert close(a["lower"], b["lower"]) and close(a["upper"], b["upper"])
        compared += 2
    assert compared > 60


def test_intervals_undefined_where_inspect_collapses_to_a_point():
    ours, theirs = pair([0.7], [{"doc": 1}])
    assert i_ci()(theirs) == {"lower": 0.7, "upper": 0.7}
    assert st.evaluate_scores(ours, [st.ci()]).get("Ci").value is None
    ours, theirs = pair([1, 0, 1], [{"doc": 1}] * 3)  # one cluster
    assert i_ci(cluster="doc")(theirs)["lower"] == i_ci(cluster="doc")(theirs)["upper"]
    rec = st.evaluate_scores(ours, [st.ci(cluster="doc")]).get("Ci")
    assert rec.value is None and "2 clusters" in rec.parameters["undefined"]
    with pytest.raises(ValueError):
        i_ci_wilson(cluster="doc")(theirs)
    assert st.evaluate_scores(ours, [st.ci_wilson(cluster="doc")]).get("CiWilson").value is None
    assert i_ci_wilson()([]) == {"lower": 0.0, "upper": 0.0}
    assert (
        st.evaluate_scores([st.SampleScore(st.Score(None), 1)], [st.ci_wilson()])
        .get("CiWilson")
        .is_undefined
    )


def test_ci_wilson_rejects_values_outside_the_unit_interval_naming_the_sample():
    ours, theirs = pair([0.5, 2.0])
    with pytest.raises(ValueError):
        i_ci_wilson()(theirs)
    with pytest.raises(InvalidInputError, match="sample 1"):
        st.ci_wilson()(ours)


def _units(rng, n_units, kind, max_raters=5, missing=0.0):
    units = []
    for _ in range(n_units):
        m = int(rng.integers(1, max_raters + 1))
        if kind == "nominal":
            unit = rng.choice(["a", "b", "c", "d"], m).tolist()
        elif kind == "ints":
            base = int(rng.integers(1, 6))
            unit = np.clip(base + rng.integers(-1, 2, m), 1, 5).tolist()
        else:
            base = float(rng.normal())
            unit = (base + 0.5 * rng.normal(size=m)).round(4).tolist()
        unit = [None if rng.random() < missing else v for v in unit]
        units.append(unit)
    return units


@pytest.mark.parametrize("seed", range(6))
def test_krippendorff_alpha_agrees(seed):
    rng = np.random.default_rng(seed)
    compared = 0
    for level, kind in [
        ("nominal", "nominal"),
        ("nominal", "ints"),
        ("ordinal", "ints"),
        ("interval", "ints"),
        ("interval", "floats"),
        ("ordinal", "floats"),
    ]:
        for n_units in (1, 2, 5, 40, 300):
            units = _units(rng, n_units, kind)
            ours, theirs = pair(units)
            expected = i_krippendorff_alpha(level)(theirs)
            if math.isnan(expected):  # no unit with two ratings
                rec = st.evaluate_scores(ours, [st.krippendorff_alpha(level)]).get(
                    "KrippendorffAlpha"
                )
                assert rec.value is None
                continue
            assert close(st.krippendorff_alpha(level)(ours), expected), (level, units)
            compared += 1
    assert compared >= 24


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_awkward_cases_agree(level):
    cases = [
        [[3, 3], [3, 3, 3]],  # every rating the same: α = 1 by convention
        [[1, 2], [2, 1]],  # systematic disagreement
        [[1, 1], [2, 2], [3, 3]],  # perfect agreement
        [[1, 2, 3]],  # one unit
        [[True, False], [True, True], [1, 0]],  # booleans count as 0/1
        [[1, 1], [2], [2, 1]],  # a unit with one rating is left out
    ]
    for units in cases:
        ours, theirs = pair(units)
        assert close(st.krippendorff_alpha(level)(ours), i_krippendorff_alpha(level)(theirs))


def test_krippendorff_alpha_rejects_non_list_values_inspect_skips():
    ours, theirs = pair([[1, 1], [2, 2], 3])
    assert i_krippendorff_alpha()(theirs) == 1.0
    with pytest.raises(InvalidInputError, match="sample 2"):
        st.krippendorff_alpha()(ours)


def _categorical(rng, n):
    return rng.choice(["yes", "no", "unsure", "C", "I"], n).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_frequency_agrees(seed):
    rng = np.random.default_rng(seed)
    compared = 0
    for n in (0, 1, 7, 200):
        vals = _categorical(rng, n) + [True, 1, 2.5][: n % 4]
        ours, theirs = pair(vals)
        for categories in (None, ["no", "yes", "never"], []):
            for normalize in (True, False):
                expected = i_frequency(categories, normalize)(theirs)
                if n == 0 and normalize:
                    got = st.evaluate_scores(ours, [st.frequency(categories, normalize)])
                    assert got.get("Frequency").value is None and expected == {
                        k: 0.0 for k in expected
                    }
                    continue
                got_v = st.frequency(categories, normalize)(ours)
                assert list(got_v) == list(expected)  # same labels, same order
                assert all(close(got_v[k], expected[k]) for k in expected)
                compared += len(expected)
    assert compared > 50


def _dict_scores(rng, n, missing):
    out = []
    for _ in range(n):
        d = {"em": str(rng.choice(["C", "I", "P"])), "f1": round(float(rng.random()), 3)}
        r = rng.random()
        if r < missing:
            del d["f1"]
        elif r < 2 * missing:
            d["f1"] = None
        elif r < 3 * missing:
            d["f1"] = float("nan")
        out.append(d)
    return out


@pytest.mark.parametrize("on_missing", ["skip", "zero", "error"])
def test_aggregate_agrees(on_missing):
    rng = np.random.default_rng(3)
    compared = 0
    pairs = [(st.mean, i_mean), (st.stderr, i_stderr), (st.var, i_var)]
    for n in (2, 5, 80):
        for missing in (0.0, 0.1, 0.3):
            vals = _dict_scores(rng, n, missing)
            ours, theirs = pair(vals)
            for ours_f, theirs_f in pairs:
                try:
                    expected = i_aggregate("f1", theirs_f(), on_missing=on_missing)(theirs)
                except ValueError:
                    with pytest.raises(InvalidInputError):
                        st.aggregate("f1", ours_f(), on_missing=on_missing)(ours)
                    continue
                got = st.evaluate_scores(ours, [st.aggregate("f1", ours_f(), on_missing)])
                rec = got.get("Aggregate")
                if rec.value is None:  # too few values: Inspect says 0 (or NaN)
                    assert expected == 0 or math.isnan(expected)
                    continue
                assert close(rec.value, expected), (vals, ours_f)
                compared += 1
            expected = i_aggregate("em", i_accuracy())(theirs)
            assert close(st.aggregate("em", st.accuracy())(ours), expected)
            compared += 1
    assert compared > 15


@pytest.mark.parametrize("cluster", [None, "doc"])
def test_bootstrap_ci_agrees_with_inspect_within_monte_carlo_error(cluster):
    """Different random draws (seeded Generator vs np.random), so the bounds agree only
    to Monte-Carlo error: within 15% of the t interval's half-width (30 seeds: at most 10%)."""
    rng = np.random.default_rng(17)
    n = 400
    vals = rng.integers(0, 2, n).tolist()
    meta = [{"doc": int(d)} for d in rng.integers(0, 60, n)]
    ours, theirs = pair(vals, meta)
    np.random.seed(17)
    expected = i_ci(method="bootstrap", num_samples=4000, cluster=cluster)(theirs)
    got = st.ci(method="bootstrap", num_samples=4000, cluster=cluster, seed=17)(ours)
    t = st.ci(cluster=cluster)(ours)
    half = (t["upper"] - t["lower"]) / 2
    for k in ("lower", "upper"):
        assert abs(got[k] - expected[k]) < 0.15 * half, (k, got, expected)


def test_grouped_krippendorff_and_frequency_agree():
    from inspect_ai.scorer import grouped as i_grouped

    rng = np.random.default_rng(33)
    units = _units(rng, 80, "ints", max_raters=4)
    topics = [{"topic": f"t{int(t)}"} for t in rng.integers(0, 3, len(units))]
    ours, theirs = pair(units, topics)
    got = st.grouped(st.krippendorff_alpha("ordinal"), "topic")(ours)
    expected = i_grouped(i_krippendorff_alpha("ordinal"), "topic")(theirs)
    assert list(got) == list(expected) and len(got) == 4
    assert all(close(got[k], expected[k]) for k in expected)
    verdicts = rng.choice(["yes", "no", "unsure"], len(units)).tolist()
    ours, theirs = pair(verdicts, topics)
    recs = st.evaluate_scores(ours, [st.grouped(st.frequency(), "topic", all=False)])
    by_group = {r.parameters["group"]: r.value for r in recs}
    for group in by_group:
        members = [s for s in theirs if s.sample_metadata["topic"] == group]
        expected = i_frequency()(members)
        assert by_group[group] == pytest.approx(expected, abs=TOL)
    assert len(by_group) == 3
