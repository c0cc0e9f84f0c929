"""Differential tests against Inspect AI for the panel reducers (``collect``,
``majority``), collect-then-α, custom value mappings and the perplexity metrics."""

import math

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore as ISampleScore
from inspect_ai.scorer import Score as IScore
from inspect_ai.scorer import aggregate as i_aggregate
from inspect_ai.scorer import krippendorff_alpha as i_krippendorff_alpha
from inspect_ai.scorer import mean as i_mean
from inspect_ai.scorer import mean_score
from inspect_ai.scorer import stderr as i_stderr
from inspect_ai.scorer import value_to_float as i_value_to_float
from inspect_ai.scorer import var as i_var
from inspect_ai.scorer._reducer.registry import create_reducers
from stats_inspect_helpers import close, pair

import assay.stats as st
from assay.errors import InvalidInputError


def _reduce_inspect(name, values):
    reducer = create_reducers([name])[0]
    out = reducer([IScore(value=float("nan") if v is None else v) for v in values]).value
    return out


def _same(a, b):
    if isinstance(b, float) and math.isnan(b):
        return a is None
    if isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in b)
    if isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def test_collect_and_majority_agree_on_scalars_dicts_lists_and_failures():
    rng = np.random.default_rng(8)
    compared = 0
    for _ in range(150):
        m = int(rng.integers(1, 6))
        shape = rng.choice(["scalar", "dict", "list"])
        values = []
        for _ in range(m):
            v = [str(rng.choice(["C", "I"])), int(rng.integers(0, 2))]
            if rng.random() < 0.2:
                values.append(None)
            elif shape == "scalar":
                values.append(v[0])
            elif shape == "dict":
                values.append({"em": v[0], "n": v[1]})
            else:
                values.append(v)
        if all(v is None for v in values):
            continue
        ours = st.get_reducer("majority")([st.Score(v) for v in values])
        assert _same(ours.value, _reduce_inspect("majority", values)), values
        compared += 1
        if shape == "scalar":
            ours = st.get_reducer("collect")([st.Score(v) for v in values])
            assert _same(ours.value, _reduce_inspect("collect", values)), values
            compared += 1
    assert compared > 100


def test_collect_then_krippendorff_pipeline_agrees():
    """Epochs of each sample are the raters: collect them, then α, in both tools."""
    rng = np.random.default_rng(4)
    compared = 0
    for level in ("nominal", "ordinal", "interval"):
        ours, theirs_by_sample = [], {}
        for sid in range(60):
            base = int(rng.integers(1, 5))
            for epoch in range(1, int(rng.integers(2, 5)) + 1):
                v = int(np.clip(base + rng.integers(-1, 2), 1, 5))
                ours.append(st.SampleScore(st.Score(v), sid, epoch))
                theirs_by_sample.setdefault(sid, []).append(IScore(value=v))
        collect = create_reducers(["collect"])[0]
        theirs = [ISampleScore(score=collect(s), sample_id=k) for k, s in theirs_by_sample.items()]
        expected = i_krippendorff_alpha(level)(theirs)
        recs = st.evaluate_scores(ours, [st.krippendorff_alpha(level)], reducers=["collect"])
        assert close(recs.get("KrippendorffAlpha").value, expected)
        compared += 1
    assert compared == 3


SENTINELS = [
    {"correct": "pass", "incorrect": "fail", "partial": "meh", "noanswer": "skip"},
    {"correct": 2, "incorrect": 0, "partial": 1, "noanswer": -1},
    {"correct": "yes", "incorrect": "no"},
]


@pytest.mark.parametrize("sentinels", SENTINELS)
def test_custom_value_mappings_agree_in_metrics_reducers_and_aggregate(sentinels):
    i_to_float = i_value_to_float(**sentinels)
    mapping = st.ValueMapping(**sentinels)
    pool = [v for v in sentinels.values()] + [0.25, True, "0.5", 3, "true"]
    pool = [v for v in pool if not (isinstance(v, str) and v in "CIPN")]
    rng = np.random.default_rng(len(str(sentinels)))
    compared = 0
    for n in (2, 7, 120):
        vals = [pool[i] for i in rng.integers(0, len(pool), n)]
        assert [mapping(v) for v in vals] == [i_to_float(v) for v in vals]
        ours, theirs = pair(vals)
        for ours_f, theirs_f in [(st.mean, i_mean), (st.stderr, i_stderr), (st.var, i_var)]:
            got = list(st.evaluate_scores(ours, [ours_f()], to_float=sentinels))[0].value
            assert close(got, theirs_f(to_float=i_to_float)(theirs))
            compared += 1
        # reducers: three epochs per sample, Inspect's mean reducer with the same mapping
        epochs = [st.SampleScore(st.Score(v), i // 3, i % 3 + 1) for i, v in enumerate(vals)]
        i_mean_reducer = mean_score(value_to_float=i_to_float)
        reduced = st.reduce_scores(epochs, "mean", to_float=mapping)
        for r in reduced:
            group = [IScore(value=s.score.value) for s in epochs if s.sample_id == r.sample_id]
            assert close(r.score.value, i_mean_reducer(group).value)
            compared += 1
        # aggregate over a dict field with the mapping
        dict_vals = [{"v": v} for v in vals]
        ours_d, theirs_d = pair(dict_vals)
        expected = i_aggregate("v", i_mean(), to_float=i_to_float)(theirs_d)
        assert close(st.aggregate("v", st.mean(), to_float=mapping)(ours_d), expected)
        compared += 1
    assert compared > 20


def test_custom_mapping_refuses_the_default_letters_inspect_counts_as_zero():
    mapping = st.ValueMapping(correct="pass", incorrect="fail")
    ours, _ = pair(["pass", "C"])
    with pytest.raises(InvalidInputError, match="sample 1"):
        st.evaluate_scores(ours, [st.mean()], to_float=mapping)


def test_perplexity_metrics_agree():
    from inspect_ai.scorer import perplexity_per_seq as i_per_seq
    from inspect_ai.scorer import perplexity_per_token as i_per_token

    rng = np.random.default_rng(21)
    compared = 0
    for n in (1, 2, 9, 300):
        tokens = rng.integers(0, 50, n)
        tokens[0] = max(tokens[0], 1)
        log_probs = -rng.random(n) * tokens * 3.0
        metas = [
            {"num_tokens": int(t), "sum_log_probs": float(s)} for t, s in zip(tokens, log_probs)
        ]
        ours = [st.SampleScore(st.Score(0.0, metadata=m), i) for i, m in enumerate(metas)]
        theirs = [
            ISampleScore(score=IScore(value=0.0, metadata=m), sample_id=i)
            for i, m in enumerate(metas)
        ]
        for ours_f, theirs_f in [
            (st.perplexity_per_token, i_per_token),
            (st.perplexity_per_seq, i_per_seq),
        ]:
            assert close(ours_f()(ours), theirs_f()(theirs))
            compared += 1
    # no tokens at all: Inspect NaN, assay undefined; missing metadata: Inspect warns
    zero = [st.SampleScore(st.Score(0, metadata={"num_tokens": 0, "sum_log_probs": 0.0}), 1)]
    recs = st.evaluate_scores(zero, [st.perplexity_per_token(), st.perplexity_per_seq()])
    assert all(r.value is None for r in recs) and len(recs) == 2
    with pytest.raises(InvalidInputError, match="sample 3"):
        st.perplexity_per_token()([st.SampleScore(st.Score(0), 3)])
    assert compared == 8
