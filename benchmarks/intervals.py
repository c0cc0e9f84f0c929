"""Confidence-interval benchmark: the time of an interval against the point estimate alone.

Each case times the evaluator computing its records without ``ci`` (the point estimate) and
with ``ci=0.95`` (the same records, with intervals), in this process, best of ``--repeat``
runs, CPU time (the work is single-threaded; CPU time moves far less than wall time on a
shared machine), and prints the ratio:

* ``binary P/R/F1/Acc``: ``ClassificationEvaluator(metrics=[Precision, Recall, F1,
  Accuracy])`` on ``--n`` binary datums, 1000-resample bootstrap (the datums collapse to four
  cells, so the resamples cost nothing next to the point estimate);
* ``binary ROCAUC bootstrap``: ``metrics=[ROCAUC]``, 1000 resamples over datums (continuous
  scores: the datums collapse to about 4 x 10^5 classes of interchangeable ones;
  ``--auc-resamples`` resamples, the time scaled to 1000 when fewer are asked for, and
  said so);
* ``binary ROCAUC bootstrap, rounded``: the same with scores rounded to 4 decimals (as
  ``benchmarks/classification.py`` has them): the datums collapse to tie groups;
* ``binary ROCAUC DeLong``: ``metrics=[ROCAUC]``, ``ci_method="delong"``;
* ``bbox mAP``: ``DetectionEvaluator`` on ``--images`` synthetic COCO images, AP/mAP records,
  1000 resamples over images; and the same with ``by`` an image column of 4 values (each
  slice's records, intervals and gap intervals);
* ``QWK``: ``evaluate_scoring`` on ``--n`` responses (integer human scores, system scores
  with one decimal), 1000 resamples over responses; percentile and BCa (``ci_method="bca"``:
  the same resamples plus the jackknife, from the totals minus each response's terms).
* ``all tables, 8 groups``: ``ScoringEvaluator`` with a second human score (on 20% of the
  responses) and a group column of 8 groups, every table, without and with ``ci``
  (percentile and BCa); then the time of the ``fairness_metrics_by`` and ``consistency_by``
  intervals alone (``attach_fairness``, ``attach_consistency_by``). System scores with one
  decimal at ``--n``, and continuous (every response distinct) at ``min(--n, 10^5)``.

Usage: ``python benchmarks/intervals.py [--n 1000000] [--images 500] [--auc-resamples 1000]
[--repeat 1]``. The goal (issue 22): under 20x the point estimate for 1000 resamples, DeLong
under 2x.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _row(name: str, point: float, with_ci: float, note: str = "") -> None:
    ratio = with_ci / point
    print(f"{name:28s} point {point:8.3f}s   with ci {with_ci:8.3f}s   x{ratio:7.1f}  {note}")


def classification(n: int, auc_resamples: int, repeat: int) -> None:
    from assay.classification import ClassificationEvaluator

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    s = 1 / (1 + np.exp(-rng.normal(y.astype(float), 1.0)))
    labels = np.where(y == 1, "pos", "neg")

    def run(metrics: list[str], scores: np.ndarray = s, **kw: object) -> Callable[[], object]:
        def go() -> object:
            ev = ClassificationEvaluator(metrics=metrics, **kw)
            return ev.add_arrays(labels, scores, labels=["neg", "pos"]).compute()

        return go

    counts = ["Precision", "Recall", "F1", "Accuracy"]
    _row("binary P/R/F1/Acc", _best(run(counts), repeat), _best(run(counts, ci=0.95), repeat))
    point = _best(run(["ROCAUC"]), repeat)
    boot = _best(run(["ROCAUC"], ci=0.95, num_bootstrap=auc_resamples), repeat)
    scaled = point + (boot - point) * 1000 / auc_resamples
    note = "" if auc_resamples == 1000 else f"({auc_resamples} resamples, scaled to 1000)"
    _row("binary ROCAUC bootstrap", point, scaled, note)
    r4 = np.round(s, 4)
    point4 = _best(run(["ROCAUC"], r4), repeat)
    _row("  rounded to 4 decimals", point4, _best(run(["ROCAUC"], r4, ci=0.95), repeat))
    delong = _best(run(["ROCAUC"], ci=0.95, ci_method="delong"), repeat)
    _row("binary ROCAUC DeLong", point, delong)


def detection(images: int, repeat: int) -> None:
    from dataclasses import replace

    from assay.detection import DetectionEvaluator
    from assay.detection.io import load_coco
    from assay.io.metadata import metadata_from_records
    from assay.testing.detection import make_coco

    data = load_coco(*make_coco(n_images=images, n_categories=10, seed=0))
    cameras = [{"camera": "abcd"[i % 4]} for i in range(data.n_datums)]
    data = replace(data, metadata=metadata_from_records(cameras, source="camera"))
    wanted = ["AP", "mAP", "mAPAveragedOverIOUs"]

    def run(**kw: object) -> Callable[[], object]:
        return lambda: DetectionEvaluator(**kw).add(data).compute(wanted)

    _row(f"bbox mAP ({images} images)", _best(run(), repeat), _best(run(ci=0.95), repeat))
    by = {"by": ["camera"]}
    _row("  by a column of 4 values", _best(run(**by), repeat), _best(run(ci=0.95, **by), repeat))


def scoring(n: int, repeat: int) -> None:
    import pandas as pd

    from assay.scoring import evaluate_scoring

    rng = np.random.default_rng(1)
    h = rng.integers(1, 6, n)
    df = pd.DataFrame({"h": h, "m": np.round(np.clip(h + rng.normal(0, 0.8, n), 1, 5), 1)})

    def run(**kw: object) -> Callable[[], object]:
        return lambda: evaluate_scoring(df, human="h", system="m", **kw)

    point = _best(run(), repeat)
    _row(f"QWK etc. ({n} responses)", point, _best(run(ci=0.95), repeat))
    _row("QWK etc., BCa", point, _best(run(ci=0.95, ci_method="bca"), repeat))


def scoring_groups(n: int, repeat: int, decimals: int | None) -> None:
    """The by-group tables: 8 groups, a second human on 20%; then the part of the interval
    time that the ``fairness_metrics_by`` and ``consistency_by`` intervals take."""
    import pandas as pd

    from assay.scoring import ScoringEvaluator

    rng = np.random.default_rng(2)
    t = rng.normal(3.5, 1.0, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2 = np.where(rng.random(n) < 0.2, np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6), np.nan)
    m = np.clip(t + rng.normal(0, 0.5, n), 0.5, 6.5)  # trimmed to the scale, as rsmeval does
    df = pd.DataFrame({"h": h, "h2": h2, "m": m if decimals is None else np.round(m, decimals)})
    df["g"] = rng.choice([f"L{i}" for i in range(8)], n)
    kw = {"human": "h", "system": "m", "human2": "h2", "group_columns": ["g"]}

    def run(**ci: object) -> Callable[[], object]:
        return lambda: ScoringEvaluator(**kw, **ci).add(df).compute()

    what = "continuous" if decimals is None else f"{decimals} decimals"
    run()()  # warm up: the first fit imports statsmodels
    point = _best(run(), repeat)
    for method in ("bootstrap", "bca"):
        with_ci = _best(run(ci=0.95, ci_method=method), repeat)
        _row(f"all tables, 8 groups, {method}", point, with_ci, f"({n} responses, {what})")
        ev = ScoringEvaluator(**kw, ci=0.95, ci_method=method).add(df)
        fair, cons = _group_parts(ev, repeat)
        print(f"{'':28s} of which fairness_metrics_by {fair:.3f}s, consistency_by {cons:.3f}s")


def _group_parts(ev: object, repeat: int) -> tuple[float, float]:
    """CPU seconds of the ``fairness_metrics_by`` and ``consistency_by`` intervals alone
    (each tally made from the responses, then its intervals from the engine)."""
    from assay.scoring import tally
    from assay.uncertainty.intervals import tally_intervals

    units, opts, shift = ev._units, ev.ci, ev._shift  # type: ignore[attr-defined]

    def part(make: Callable[..., Any]) -> Callable[[], object]:
        return lambda: tally_intervals(make(tally._Maker(units, shift, None), "g"), opts)

    fair = part(tally._fairness_tally)
    cons = part(tally._consistency_by_tally)
    return _best(fair, repeat), _best(cons, repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--images", type=int, default=500)
    ap.add_argument("--auc-resamples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", choices=["classification", "detection", "scoring", "scoring-groups"])
    a = ap.parse_args()
    if a.only in (None, "classification"):
        classification(a.n, a.auc_resamples, a.repeat)
    if a.only in (None, "detection"):
        detection(a.images, a.repeat)
    if a.only in (None, "scoring"):
        scoring(a.n, a.repeat)
    if a.only in (None, "scoring", "scoring-groups"):
        scoring_groups(a.n, a.repeat, 1)
        scoring_groups(min(a.n, 100_000), a.repeat, None)


if __name__ == "__main__":
    main()
