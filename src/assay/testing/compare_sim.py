"""Simulated pairs of runs on the same units, with the true difference known: the coverage
of the paired intervals and the type-I error of the paired tests (``assay.compare``).

Each scenario draws ``n`` units of a population and two runs on them, correlated through
the units (a unit hard for one run is hard for the other), and gives the paired
comparison's interval and p-value. With ``null=True`` both runs come from the same model
with independent noise (true difference 0: a rejection at 0.05 is a type-I error); else the
second run is better by a known amount (the interval should cover it).

``accuracy``
    200 datums; right/wrong of the two runs from a 2x2 table (``p11 p10 p01 p00`` = .65
    .0775 .15 .1225, accuracies .7275 and .80; null .65 .10 .10 .15); the classification
    evaluator's tally; McNemar (Newcombe's interval) and the paired bootstrap.
``roc_auc``
    150 datums, 40% positive; scores ``mu_r y + z + e_r`` with a shared ``z ~ N(0, 0.5)``
    and own ``e_r ~ N(0, 0.5)``, so ``AUC_r = Phi(mu_r / sqrt 2)``; ``mu`` = 1.0 and 1.4
    (null 1.0 and 1.0); DeLong's test.
``map``
    60 images of 2 objects; each run detects an object with probability ``p_r`` (a shared
    image difficulty moves both), plus one false alarm per image; the detection evaluator's
    mAP at IoU 0.5 tally; the truth from 20000 images (:func:`map_truth`); the paired
    bootstrap.
``qwk``
    300 responses, human 1-5 uniform, each system ``h + N(0, s_r)`` with a shared
    ``N(0, 0.4)`` part; QWK of continuous scores ``2 cov / (var_h + var_m + (mean
    diff)^2)`` (the scoring domain's), true ``2 var_h / (2 var_h + s^2)``; the paired
    bootstrap of a tally of per-response moments.
``judge``
    150 items; a judge's 1-10 score per item: item quality plus each run's shift and
    noise, rounded and clipped (the truth from 2 x 10^6 draws); paired t and the paired
    bootstrap.
``win_rate``
    200 questions judged against one reference answer: win / tie / loss probabilities
    per question from a shared difficulty, run A (.40 .20 .40 on average), run B
    (.483 .20 .317);
    win rate ``mean(win + tie / 2)`` (exact truth); the paired bootstrap.

Example:
    >>> r = simulate("accuracy", np.random.default_rng(0), num_bootstrap=200)
    >>> sorted(r), r["mcnemar"][1] <= 1.0
    (['mcnemar', 'paired_bootstrap'], True)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from math import sqrt
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from assay.compare import Paired, delong_test, mcnemar, paired_bootstrap, paired_t
from assay.uncertainty.tally import Tally

__all__ = ["SCENARIOS", "map_truth", "simulate", "truth"]

F64 = NDArray[np.float64]
#: test name -> (covered, p-value) of one repetition (covered None: the test has no interval)
Outcome = dict[str, tuple[bool | None, float]]


def _outcome(r: Paired, truth: float) -> tuple[bool | None, float]:
    covered = r.ci is not None and r.ci[0] <= truth <= r.ci[1]
    return covered, r.p_value


def _only(results: dict, name: str) -> Paired:
    (key,) = [k for k in results if k[0] == name]
    return results[key]


def _mean_tally(x: F64) -> Tally:
    cells = np.column_stack([x, np.ones_like(x)])
    return Tally(
        (("mean",),),
        lambda w: (w @ cells)[:, :1] / (w @ cells)[:, 1:],
        np.ones(x.size, np.int64),
        ids=np.arange(x.size),
    )


# ---------------------------------------------------------------- accuracy

#: off the lattice of 1/200: an interval's end on a lattice point equal to the truth would
#: make coverage depend on rounding in the last bit
_TABLE = {False: (0.65, 0.0775, 0.15, 0.1225), True: (0.65, 0.10, 0.10, 0.15)}


def _accuracy(rng: np.random.Generator, b: int, seed: int, null: bool) -> Outcome:
    from assay.classification import ClassificationEvaluator

    n = 200
    cell = rng.choice(4, n, p=_TABLE[null])
    a_right, b_right = np.isin(cell, (0, 1)), np.isin(cell, (0, 2))
    y = rng.integers(0, 2, n)

    def run(right: NDArray[np.bool_]) -> Tally:
        s = np.where(right == (y == 1), 0.9, 0.1)
        ev = ClassificationEvaluator(metrics=["Accuracy"], score_thresholds=[0.5])
        ev.add_arrays(np.where(y == 1, "p", "n"), s, labels=["n", "p"], uids=np.arange(n))
        return ev.tally()[0]

    t = truth("accuracy", null)
    boot = _only(
        paired_bootstrap(run(a_right), run(b_right), num_bootstrap=b, seed=seed), "Accuracy"
    )
    test = mcnemar(a_right, b_right)
    # a comparison shows McNemar's (Newcombe's interval); the bootstrap's for the other records
    return {"mcnemar": _outcome(test, t), "paired_bootstrap": _outcome(boot, t)}


# ---------------------------------------------------------------- ROC AUC


def _roc_auc(rng: np.random.Generator, b: int, seed: int, null: bool) -> Outcome:
    n = 150
    y = (rng.random(n) < 0.4).astype(int)
    z = rng.normal(0, sqrt(0.5), n)
    mu_b = 1.0 if null else 1.4
    sa = 1.0 * y + z + rng.normal(0, sqrt(0.5), n)
    sb = mu_b * y + z + rng.normal(0, sqrt(0.5), n)
    return {"delong": _outcome(delong_test(y, sa, sb), truth("roc_auc", null))}


# ---------------------------------------------------------------- mAP


def _images(
    rng: np.random.Generator, n: int, null: bool
) -> tuple[list[dict], list[dict], list[dict]]:
    gts: list[dict] = []
    runs: tuple[list[dict], list[dict]] = ([], [])
    p_hit = (0.7, 0.7 if null else 0.8)
    for i in range(n):
        uid = f"i{i:05d}"
        hard = rng.normal(0, 0.6)  # shared: an image hard for one run is hard for the other
        boxes = []
        for j in range(2):
            x, y0 = 40.0 * j + rng.uniform(0, 20), rng.uniform(0, 60)
            boxes.append([x, y0, x + 15, y0 + 15])
        gts.append({"uid": uid, "annotations": [{"label": "obj", "box": b} for b in boxes]})
        for r, preds in enumerate(runs):
            p = []
            for x, y0, _, _ in boxes:
                logit = np.log(p_hit[r] / (1 - p_hit[r])) - hard
                hit = rng.random() < 1 / (1 + np.exp(-logit))
                dx = rng.normal(0, 1) if hit else 30.0
                score = float(rng.beta(5, 2) if hit else rng.beta(2, 5))
                p.append(
                    {"label": "obj", "box": [x + dx, y0, x + dx + 15, y0 + 15], "score": score}
                )
            x, y0 = rng.uniform(0, 60, 2)
            fa = [float(x), float(y0), float(x + 10), float(y0 + 10)]
            p.append({"label": "obj", "box": fa, "score": float(rng.beta(2, 5))})
            preds.append({"uid": uid, "annotations": p})
    return gts, runs[0], runs[1]


def _detection(gts: list[dict], preds: list[dict]):  # noqa: ANN202
    from assay.detection import DetectionEvaluator

    ev = DetectionEvaluator(iou_thresholds=[0.5])
    ev.add_datums(gts, preds)
    return ev


@lru_cache(maxsize=2)
def map_truth(null: bool, images: int = 20000) -> float:
    """The mAP difference of one very large draw (its own sampling error about 0.003)."""
    gts, pa, pb = _images(np.random.default_rng(2024), images, null)
    if null:
        return 0.0
    va = _detection(gts, pa).compute(["mAP"]).get("mAP").value
    vb = _detection(gts, pb).compute(["mAP"]).get("mAP").value
    return float(vb - va)


def _map(rng: np.random.Generator, b: int, seed: int, null: bool) -> Outcome:
    gts, pa, pb = _images(rng, 60, null)
    ta, tb = _detection(gts, pa).tally(), _detection(gts, pb).tally()
    found: dict = {}
    for x, y in zip(ta, tb):
        found |= paired_bootstrap(x, y, num_bootstrap=b, seed=seed)
    return {"paired_bootstrap": _outcome(_only(found, "mAP"), map_truth(null))}


# ---------------------------------------------------------------- QWK


def _qwk_tally(h: F64, m: F64) -> Tally:
    cells = np.column_stack([np.ones_like(h), h, m, h * h, m * m, h * m])

    def values(w: F64) -> F64:
        s = w @ cells
        n, sh, sm, shh, smm, shm = (s[:, i] for i in range(6))
        mh, mm = sh / n, sm / n
        vh, vm, cov = shh / n - mh * mh, smm / n - mm * mm, shm / n - mh * mm
        return (2 * cov / (vh + vm + (mh - mm) ** 2))[:, None]

    return Tally((("QWK",),), values, np.ones(h.size, np.int64), ids=np.arange(h.size))


_QWK_SD = {False: (0.8, 0.6), True: (0.8, 0.8)}


def _qwk(rng: np.random.Generator, b: int, seed: int, null: bool) -> Outcome:
    n = 300
    h = rng.integers(1, 6, n).astype(np.float64)
    shared = rng.normal(0, 0.4, n)
    sa, sb = (sqrt(s * s - 0.16) for s in _QWK_SD[null])
    ma, mb = h + shared + rng.normal(0, sa, n), h + shared + rng.normal(0, sb, n)
    r = paired_bootstrap(_qwk_tally(h, ma), _qwk_tally(h, mb), num_bootstrap=b, seed=seed)
    return {"paired_bootstrap": _outcome(r[("QWK",)], truth("qwk", null))}


# ---------------------------------------------------------------- a judge's mean


def _judge_scores(rng: np.random.Generator, n: int, null: bool) -> tuple[F64, F64]:
    quality = rng.normal(6.0, 1.5, n)
    shift = 0.0 if null else 0.3
    a = np.clip(np.round(quality + rng.normal(0, 1.2, n)), 1, 10)
    b = np.clip(np.round(quality + shift + rng.normal(0, 1.2, n)), 1, 10)
    return a, b


def _judge(rng: np.random.Generator, b: int, seed: int, null: bool) -> Outcome:
    a, bb = _judge_scores(rng, 150, null)
    t = truth("judge", null)
    boot = paired_bootstrap(_mean_tally(a), _mean_tally(bb), num_bootstrap=b, seed=seed)[("mean",)]
    return {"paired_t": _outcome(paired_t(a, bb), t), "paired_bootstrap": _outcome(boot, t)}


# ---------------------------------------------------------------- a pairwise win rate

#: run B's win rate is .0830 higher: off the lattice of 1/400, as accuracy's
_WIN = {False: ((0.40, 0.20, 0.40), (0.483, 0.20, 0.317)), True: ((0.40, 0.20, 0.40),) * 2}


def _outcomes(
    rng: np.random.Generator, n: int, probs: tuple[float, float, float], hard: F64
) -> F64:
    """Each question's win (1), tie (1/2) or loss (0): the run's win and loss
    probabilities moved by the question's shared difficulty ``hard`` (mean zero)."""
    win, tie, _ = probs
    p_win = np.clip(win - hard, 0.0, 1.0 - tie)
    u = rng.random(n)
    return np.where(u < p_win, 1.0, np.where(u < p_win + tie, 0.5, 0.0))


def _win_rate(rng: np.random.Generator, b: int, seed: int, null: bool) -> Outcome:
    n = 200
    hard = rng.uniform(-0.25, 0.25, n)
    pa, pb = _WIN[null]
    a, bb = _outcomes(rng, n, pa, hard), _outcomes(rng, n, pb, hard)
    r = paired_bootstrap(_mean_tally(a), _mean_tally(bb), num_bootstrap=b, seed=seed)[("mean",)]
    return {"paired_bootstrap": _outcome(r, truth("win_rate", null))}


# ---------------------------------------------------------------- truths


@lru_cache(maxsize=16)
def truth(name: str, null: bool) -> float:
    """The true difference (second run minus first) of a scenario."""
    if null:
        return 0.0
    phi = NormalDist().cdf
    if name == "accuracy":
        p11, p10, p01, _ = _TABLE[False]
        return (p11 + p01) - (p11 + p10)
    if name == "roc_auc":
        return phi(1.4 / sqrt(2)) - phi(1.0 / sqrt(2))
    if name == "map":
        return map_truth(False)
    if name == "qwk":
        return float(np.diff([4.0 / (4.0 + s * s) for s in _QWK_SD[False]])[0])
    if name == "judge":
        a, b = _judge_scores(np.random.default_rng(99), 2_000_000, False)
        return float(b.mean() - a.mean())
    if name == "win_rate":  # the shared difficulty is symmetric and never clips these rates
        (wa, ta, _), (wb, tb, _) = _WIN[False]
        return (wb + tb / 2) - (wa + ta / 2)
    raise KeyError(name)


SCENARIOS: dict[str, Callable[[np.random.Generator, int, int, bool], Outcome]] = {
    "accuracy": _accuracy,
    "roc_auc": _roc_auc,
    "map": _map,
    "qwk": _qwk,
    "judge": _judge,
    "win_rate": _win_rate,
}


def simulate(
    name: str, rng: np.random.Generator, num_bootstrap: int = 500, seed: int = 0, null: bool = False
) -> Outcome:
    """One repetition of scenario ``name``: each test's (interval covers the truth, p-value);
    ``None`` for a test without an interval."""
    return SCENARIOS[name](rng, num_bootstrap, seed, null)
