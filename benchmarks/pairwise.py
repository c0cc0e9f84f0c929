"""Pairwise benchmark: Bradley-Terry fits against scikit-learn, and a full re-score.

* One Bradley-Terry fit (10 models, every pair on N questions, ties as halves) by assay's
  Newton solver on the wins matrix, against scikit-learn's ``LogisticRegression`` (same L2
  penalty, no intercept) on the per-comparison rows; the ratings must agree to 1e-6.
* 200 bootstrap refits: assay's batched solver against 200 scikit-learn fits.
* ``analyze`` (consistency, old and new win rates, debiased outcomes, ratings with 200
  bootstrap samples, length-controlled win rates) on 9 models x Q questions x 2 orders.

Usage: ``python benchmarks/pairwise.py [--quick]``
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
import pandas as pd

from assay.llm.pairwise import analyze
from assay.llm.pairwise.ratings import fit_bradley_terry
from assay.uncertainty.resampling import resample_counts


def _outcomes(n_models: int, n_questions: int, rng: np.random.Generator):
    theta = rng.normal(0, 1, n_models)
    i, j = np.triu_indices(n_models, 1)
    i, j = np.tile(i, n_questions), np.tile(j, n_questions)
    q = np.repeat(np.arange(n_questions), n_models * (n_models - 1) // 2)
    p = 1 / (1 + np.exp(-(theta[i] - theta[j])))
    u = rng.random(len(i))
    y = np.where(u < 0.1, 0.5, (rng.random(len(i)) < p).astype(float))
    return q, i, j, y


def _sklearn_fit(i, j, y, n, l2):
    from sklearn.linear_model import LogisticRegression

    X = np.zeros((2 * len(i), n))
    X[np.arange(len(i)), i], X[np.arange(len(i)), j] = 1.0, -1.0
    X[len(i) :] = X[: len(i)]
    target = np.r_[np.ones(len(i)), np.zeros(len(i))]
    weight = np.r_[y, 1.0 - y]
    keep = weight > 0
    lr = LogisticRegression(C=1.0 / l2, fit_intercept=False, tol=1e-10, max_iter=10_000)
    return lr.fit(X[keep], target[keep], sample_weight=weight[keep]).coef_[0]


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _cpu(fn):
    """(result, wall seconds, CPU seconds of this process)."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def bench_fit(n_questions: int) -> None:
    rng = np.random.default_rng(0)
    n, l2 = 10, 0.01
    q, i, j, y = _outcomes(n, n_questions, rng)
    W = np.zeros((n, n))
    np.add.at(W, (i, j), y)
    np.add.at(W, (j, i), 1.0 - y)
    ours, t_ours = _timed(lambda: fit_bradley_terry(W, l2=l2))
    ref, t_ref = _timed(lambda: _sklearn_fit(i, j, y, n, l2))
    assert np.max(np.abs(ours - ref)) < 1e-6, np.max(np.abs(ours - ref))
    print(
        f"one fit, {len(y)} comparisons: assay {t_ours * 1e3:.1f} ms, scikit-learn "
        f"{t_ref * 1e3:.1f} ms (x{t_ref / t_ours:.0f}); max |diff| {np.max(np.abs(ours - ref)):.1e}"
    )
    per_q = np.zeros((n_questions, n, n))
    np.add.at(per_q, (q, i, j), y)
    np.add.at(per_q, (q, j, i), 1.0 - y)
    counts = np.concatenate(list(resample_counts(np.ones(n_questions, np.int64), 200, 0)))
    _, t_boot = _timed(lambda: fit_bradley_terry(np.einsum("bq,qij->bij", counts, per_q), l2=l2))
    print(
        f"200 bootstrap refits: assay {t_boot:.2f} s, scikit-learn ~{200 * t_ref:.1f} s "
        f"(200 x one fit; x{200 * t_ref / t_boot:.0f})"
    )


def bench_analyze(n_questions: int) -> None:
    rng = np.random.default_rng(1)
    models = [f"m{k}" for k in range(9)]
    rows = []
    for q in range(n_questions):
        task = ["uml_class-general", "uml_class-faithfulness", "architecture_design-general"][q % 3]
        for m in models:
            for a, b in (("ref", m), (m, "ref")):
                rows.append(
                    (
                        f"p{q}_{task}",
                        a,
                        b,
                        task,
                        "ok",
                        str(rng.choice(list("ABCD"))),
                        float(rng.integers(100, 3000)),
                        float(rng.integers(100, 3000)),
                        1.0,
                        1.0,
                    )
                )
    cols = [
        "index",
        "model_a",
        "model_b",
        "task",
        "status",
        "choice",
        "length_a",
        "length_b",
        "words_a",
        "words_b",
    ]
    df = pd.DataFrame(rows, columns=cols)
    a, t = _timed(lambda: analyze(df, reference_model="ref", num_bootstrap=200))
    print(f"analyze, {len(df)} judged comparisons: {t:.2f} s ({len(a.metrics)} records)")
    df["topic"] = [f"t{int(str(q).split('_')[0][1:]) % 4}" for q in df["index"]]
    runs = [
        ("no --ci (ratings' intervals only)", {}),
        ("--ci 0.95", {"ci": 0.95}),
        ("--ci 0.95 --by topic (4 slices)", {"ci": 0.95, "by": ["topic"]}),
    ]
    for name, kw in runs:
        a, wall, cpu = _cpu(partial(analyze, df, reference_model="ref", num_bootstrap=1000, **kw))
        n = len(a.metrics)
        print(f"  1000 resamples, {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {n} records")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    bench_fit(200 if args.quick else 2000)
    bench_analyze(200 if args.quick else 2000)


if __name__ == "__main__":
    main()
