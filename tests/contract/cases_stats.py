"""Score statistics evaluators for the contract test.

Two cases: SampleScore objects (letters, numbers and failed ``None`` scores of 40 samples
over 3 epochs, with topic and document metadata) through several metrics, grouped ones
included, under four epoch reducers; and ScoreFrames (the fast path) with a clustered
stderr and a grouped accuracy under the median and at_least_2 reducers. The batches cut
through samples' epochs. ``bootstrap_stderr`` is left out on purpose: its resamples are
drawn by position, so merging in another order gives another (equally valid) draw.
"""

from __future__ import annotations

import numpy as np

import assay.stats as st
from contract import ContractCase


def _scores() -> list[st.SampleScore]:
    rng = np.random.default_rng(5)
    letters = ["C", "I", "P", "C", 0.25, 1, None]
    out = []
    for epoch in (1, 2, 3):
        for sid in range(40):
            v = letters[int(rng.integers(0, len(letters)))]
            meta = {"topic": f"t{sid % 4}", "doc": sid // 5}
            out.append(st.SampleScore(st.Score(v), f"s{sid}", epoch, meta))
    return out


SCORES = _scores()
BATCHES = [SCORES[:50], SCORES[50:51], SCORES[51:]]


def _metrics() -> list[st.MetricFn]:
    return [
        st.accuracy(),
        st.accuracy(partial_credit=False),
        st.stderr(),
        st.stderr(cluster="doc"),
        st.grouped(st.mean(), "topic"),
        st.grouped(st.std(), "topic", all="groups", name_template="topic_{group_name}"),
    ]


def _frames() -> list[st.ScoreFrame]:
    rng = np.random.default_rng(9)
    n = 300
    values = rng.choice([0.0, 0.5, 1.0], n)
    sample = np.repeat(np.arange(100), 3)
    epoch = np.tile([1, 2, 3], 100)
    cluster = sample % 7
    meta = {"cluster": cluster, "topic": np.array([f"g{c % 3}" for c in cluster], dtype=object)}
    frames = []
    for lo, hi in [(0, 100), (100, 101), (101, 300)]:
        frames.append(
            st.ScoreFrame.from_arrays(
                values[lo:hi],
                sample_id=sample[lo:hi],
                epoch=epoch[lo:hi],
                metadata={k: v[lo:hi] for k, v in meta.items()},
            )
        )
    return frames


def _panel_scores() -> list[st.SampleScore]:
    """Categorical verdicts (some failed) and dict-valued scores with missing fields."""
    rng = np.random.default_rng(12)
    verdicts = ["yes", "no", "yes", "C", "I", None]
    out = []
    for epoch in (1, 2, 3):
        for sid in range(30):
            v = verdicts[int(rng.integers(0, len(verdicts)))]
            out.append(st.SampleScore(st.Score(v), f"s{sid}", epoch, {"doc": sid // 4}))
    return out


def _dict_scores() -> list[st.SampleScore]:
    rng = np.random.default_rng(13)
    out = []
    for sid in range(60):
        d = {"em": "CI"[int(rng.integers(0, 2))], "f1": round(float(rng.random()), 3)}
        if sid % 7 == 0:
            del d["f1"]
        tokens = {"num_tokens": sid % 9, "sum_log_probs": -0.7 * (sid % 9)}
        out.append(st.SampleScore(st.Score(d, metadata=tokens), sid, 1, {"doc": sid // 6}))
    return out


def _graded_scores(topics: bool = False) -> list[st.SampleScore]:
    rng = np.random.default_rng(14)
    grades = ["pass", "fail", "meh", "pass", None]
    return [
        st.SampleScore(
            st.Score(grades[int(rng.integers(0, 5))]),
            sid,
            epoch,
            {"topic": f"t{sid % 3}"} if topics else None,
        )
        for epoch in (1, 2)
        for sid in range(25)
    ]


GRADES = {"correct": "pass", "incorrect": "fail", "partial": "meh", "noanswer": "skip"}
PANEL = _panel_scores()
DICTS = _dict_scores()


def _panel_metrics() -> list[st.MetricFn]:
    return [
        st.frequency(["yes", "no", "maybe"]),
        st.krippendorff_alpha("nominal"),
        st.ci(0.9, cluster="doc"),
        st.ci_wilson(cluster="doc"),
        st.mean(),
    ]


CASES = [
    ContractCase(
        name="stats-panel-frequency-krippendorff-intervals-collect-majority",
        make=lambda: st.ScoreEvaluator(_panel_metrics(), ["mean", "collect", "majority"]),
        make_other=lambda: st.ScoreEvaluator(_panel_metrics(), ["collect"]),
        batches=[PANEL[:40], PANEL[40:41], PANEL[41:]],
        concat=lambda bs: [s for b in bs for s in b],
    ),
    ContractCase(
        name="stats-custom-value-mapping",
        make=lambda: st.ScoreEvaluator(
            [st.accuracy(partial_credit=False), st.stderr()], ["mean", "at_least_2"], GRADES
        ),
        make_other=lambda: st.ScoreEvaluator([st.accuracy()], ["mean"], GRADES),
        batches=[_graded_scores()[:20], _graded_scores()[20:]],
        concat=lambda bs: [s for b in bs for s in b],
    ),
    ContractCase(
        name="stats-per-metric-and-per-reducer-value-mappings",
        make=lambda: st.ScoreEvaluator(
            [
                st.accuracy(to_float={**GRADES, "values": {"meh": 0.0}}),
                st.accuracy(),
                st.stderr(to_float={"values": {"meh": 1.0}, **GRADES}),
                st.grouped(st.mean(to_float={**GRADES, "values": {"meh": 0.25}}), "topic"),
            ],
            [
                "mean",
                "mode",
                st.max_score(to_float={**GRADES, "values": {"meh": 2.0}}),
                st.at_least(1, value=0.5, to_float={**GRADES, "values": {"meh": 1.0}}),
            ],
            GRADES,
        ),
        make_other=lambda: st.ScoreEvaluator(
            [st.accuracy(to_float={**GRADES, "values": {"meh": 1.0}})], ["mean"], GRADES
        ),
        batches=[_graded_scores(topics=True)[:20], _graded_scores(topics=True)[20:]],
        concat=lambda bs: [s for b in bs for s in b],
    ),
    ContractCase(
        name="stats-aggregate-dict-fields",
        make=lambda: st.ScoreEvaluator(
            [
                st.aggregate("f1", st.mean(), on_missing="skip"),
                st.aggregate("f1", st.stderr(cluster="doc"), on_missing="zero"),
                st.aggregate("em", st.accuracy()),
                st.aggregate("em", st.frequency()),
                st.perplexity_per_token(),
                st.perplexity_per_seq(),
            ]
        ),
        make_other=lambda: st.ScoreEvaluator([st.aggregate("f1", st.mean(), on_missing="zero")]),
        batches=[DICTS[:25], DICTS[25:]],
        concat=lambda bs: [s for b in bs for s in b],
    ),
    ContractCase(
        name="stats-objects-several-metrics-epoch-reducers",
        make=lambda: st.ScoreEvaluator(_metrics(), ["mean", "max", "mode", "pass_at_2"]),
        make_other=lambda: st.ScoreEvaluator(_metrics(), ["mean", "at_least_2"]),
        batches=BATCHES,
        concat=lambda bs: [s for b in bs for s in b],
    ),
    ContractCase(
        name="stats-frames-clustered-grouped-median",
        make=lambda: st.ScoreEvaluator(
            [st.mean(), st.stderr(cluster="cluster"), st.grouped(st.accuracy(), "topic")],
            ["median", "at_least_2"],
        ),
        make_other=lambda: st.ScoreEvaluator([st.mean(), st.var()], ["median", "at_least_2"]),
        batches=_frames(),
        concat=st.ScoreFrame.concat,
    ),
    ContractCase(
        name="stats-ci-bootstrap-over-clusters-grouped",
        make=lambda: st.ScoreEvaluator(
            [st.accuracy(), st.grouped(st.mean(), "topic")],
            ["mean", "median"],
            ci=0.9,
            num_bootstrap=200,
            seed=3,
            cluster="cluster",
        ),
        make_other=lambda: st.ScoreEvaluator(
            [st.accuracy(), st.grouped(st.mean(), "topic")], ["mean", "median"], ci=0.9
        ),
        batches=_frames(),
        concat=st.ScoreFrame.concat,
    ),
    ContractCase(
        name="stats-ci-t-and-wilson",
        make=lambda: st.ScoreEvaluator([st.mean(), st.accuracy()], ["mean"], ci=0.8, ci_method="t"),
        make_other=lambda: st.ScoreEvaluator(
            [st.mean(), st.accuracy()], ["mean"], ci=0.8, ci_method="wilson"
        ),
        batches=_frames(),
        concat=st.ScoreFrame.concat,
    ),
]
