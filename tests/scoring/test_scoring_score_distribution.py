"""``ScoreDistribution``: rounded human and system scores per level (RSMTool's score_dist)."""

import numpy as np
import pandas as pd

from assay.scoring import ScoringEvaluator, evaluate_scoring


def _data(seed, n=500):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float)
    return pd.DataFrame({"h": h, "m": h + rng.normal(0, 0.8, n), "g": rng.choice(["a", "b"], n)})


def test_counts_equal_value_counts_of_the_rounded_scores():
    df = _data(0)
    ms = evaluate_scoring(df, human="h", system="m", group_columns=["g"])
    v = ms.get("ScoreDistribution").value
    levels = np.array(v["levels"])
    for col, key in (("h", "human"), ("m", "system")):
        counts = pd.Series(np.rint(df[col])).value_counts()
        want = [int(counts.get(float(lv), 0)) for lv in levels]
        assert v[key] == want
    assert sum(v["human"]) == sum(v["system"]) == len(df)
    assert ms.get("ScoreDistribution").parameters == {"table": "score_dist", "score": "m"}


def test_batches_merge_to_the_same_distribution():
    df = _data(1)
    one = evaluate_scoring(df, human="h", system="m").get("ScoreDistribution").value
    ev = ScoringEvaluator(human="h", system="m").add(df[:200])
    ev.merge(ScoringEvaluator(human="h", system="m").add(df[200:]))
    assert ev.compute().get("ScoreDistribution").value == one
