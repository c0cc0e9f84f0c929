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


def test_confusion_matrix_equals_sklearn_on_the_rounded_scores():
    from sklearn.metrics import confusion_matrix

    df = _data(2)
    for groups in ([], ["g"]):  # the level-coded path with and without group columns
        ms = evaluate_scoring(df, human="h", system="m", group_columns=groups)
        v = ms.get("ConfusionMatrix").value
        want = confusion_matrix(np.rint(df["h"]), np.rint(df["m"]), labels=v["levels"])
        assert v["counts"] == want.tolist()
        assert ms.get("ConfusionMatrix").parameters == {"table": "confMatrix", "score": "m"}


def test_confusion_matrix_from_unlevelled_scores_and_merged_batches():
    from sklearn.metrics import confusion_matrix

    from assay.scoring.sufficient_stats import PairStats

    rng = np.random.default_rng(3)
    h = rng.normal(3, 1, 400)  # continuous human scores: the per-response path
    m = h + rng.normal(0, 0.7, 400)
    a = PairStats.from_arrays(h[:150], m[:150]).merge(PairStats.from_arrays(h[150:], m[150:]))
    one = PairStats.from_arrays(h, m)
    assert np.array_equal(a.hist_xy, one.hist_xy)
    levels = list(range(one.hist_lo, one.hist_lo + one.hist_xy.shape[1]))
    want = confusion_matrix(np.rint(h), np.rint(m), labels=levels)
    assert one.hist_xy[0].tolist() == want.tolist()
    df = _data(4)
    ev = ScoringEvaluator(human="h", system="m", group_columns=["g"]).add(df[:250])
    ev.merge(ScoringEvaluator(human="h", system="m", group_columns=["g"]).add(df[250:]))
    whole = evaluate_scoring(df, human="h", system="m", group_columns=["g"])
    assert ev.compute().get("ConfusionMatrix").value == whole.get("ConfusionMatrix").value
    back = ScoringEvaluator.from_state(ev.state())  # the joint counts travel in the state
    assert back.compute().get("ConfusionMatrix").value == whole.get("ConfusionMatrix").value
