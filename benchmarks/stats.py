"""Benchmark: score statistics at scale, assay vs Inspect AI, same data, one process.

1e6 scores (C/I letters, or continuous values) in 1,000 clusters: accuracy, stderr,
clustered stderr and a 1,000-resample bootstrap. Inspect AI's metrics take a list of
pydantic ``SampleScore`` objects; assay's take the same as ``SampleScore`` objects or, the
fast path, numpy arrays (``ScoreFrame.from_arrays``). Times exclude building the score
objects (reported separately). Inspect's bootstrap draws one resample per Python loop step
(~70 ms each at 1e6), so it is timed on ``--inspect-resamples`` resamples and scaled
linearly to ``--resamples`` (marked "extrapolated").

Run: ``.venv/bin/python benchmarks/stats.py [--n 1000000] [--clusters 1000]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import assay.stats as st


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--inspect-resamples", type=int, default=20)
    ap.add_argument("--no-inspect", action="store_true")
    args = ap.parse_args()
    n, g, b = args.n, args.clusters, args.resamples

    rng = np.random.default_rng(0)
    cluster = rng.integers(0, g, n)
    effect = rng.normal(0, 0.5, g)[cluster]
    correct = rng.random(n) < 1 / (1 + np.exp(-(0.4 + effect)))
    letters = np.where(correct, "C", "I")
    continuous = effect + rng.normal(0, 1, n)
    print(f"n={n:,} scores, {g:,} clusters, {b:,} bootstrap resamples")

    rows: list[tuple[str, float, float | None, str]] = []

    # ---------------------------------------------------------------- assay
    t_build_arr, frame = timed(
        lambda: st.ScoreFrame.from_arrays(correct.astype(float), metadata={"cluster": cluster})
    )
    t_build_obj, ours = timed(
        lambda: [
            st.SampleScore(st.Score(v), i, 1, {"cluster": c})
            for i, (v, c) in enumerate(zip(letters.tolist(), cluster.tolist()))
        ]
    )
    t_frame_obj, frame_obj = timed(lambda: st.ScoreFrame.from_scores(ours))
    print(
        f"build: assay arrays {t_build_arr:.3f} s, assay SampleScore objects {t_build_obj:.2f} s "
        f"(+ {t_frame_obj:.2f} s to convert them to a frame)"
    )

    a_acc = timed(lambda: st.accuracy()(frame), 3)
    a_se = timed(lambda: st.stderr()(frame), 3)
    a_cl = timed(lambda: st.stderr(cluster="cluster")(frame), 3)
    a_cl_obj = timed(lambda: st.stderr(cluster="cluster")(frame_obj), 1)
    a_bs = timed(lambda: st.bootstrap_stderr(b, seed=1)(frame), 1)
    cont = st.ScoreFrame.from_arrays(continuous)
    a_bs_cont = timed(lambda: st.bootstrap_stderr(b, seed=1)(cont), 1)
    a_eval = timed(
        lambda: st.evaluate(
            frame,
            [
                st.accuracy(),
                st.stderr(),
                st.stderr(cluster="cluster"),
                st.bootstrap_stderr(b, seed=1),
            ],
        ),
        1,
    )

    # ---------------------------------------------------------------- Inspect AI
    inspect_times: dict[str, tuple[float, Any, str]] = {}
    if not args.no_inspect:
        from inspect_ai.scorer import SampleScore as ISampleScore
        from inspect_ai.scorer import Score as IScore
        from inspect_ai.scorer import accuracy as i_accuracy
        from inspect_ai.scorer import bootstrap_stderr as i_bootstrap_stderr
        from inspect_ai.scorer import stderr as i_stderr

        t_build_i, theirs = timed(
            lambda: [
                ISampleScore(score=IScore(value=v), sample_id=i, sample_metadata={"cluster": c})
                for i, (v, c) in enumerate(zip(letters.tolist(), cluster.tolist()))
            ]
        )
        print(f"build: Inspect SampleScore objects {t_build_i:.2f} s")
        inspect_times["accuracy"] = (*timed(lambda: i_accuracy()(theirs)), "")
        inspect_times["stderr"] = (*timed(lambda: i_stderr()(theirs)), "")
        inspect_times["stderr(cluster)"] = (*timed(lambda: i_stderr(cluster="cluster")(theirs)), "")
        k = args.inspect_resamples
        np.random.seed(1)
        t_k, v_k = timed(lambda: i_bootstrap_stderr(num_samples=k)(theirs))
        inspect_times["bootstrap"] = (t_k * b / k, v_k, f"extrapolated from {k}")
        del theirs
        theirs_cont = [
            ISampleScore(score=IScore(value=v), sample_id=i)
            for i, v in enumerate(continuous.tolist())
        ]
        np.random.seed(1)
        t_k, v_k = timed(lambda: i_bootstrap_stderr(num_samples=k)(theirs_cont))
        inspect_times["bootstrap continuous"] = (t_k * b / k, v_k, f"extrapolated from {k}")
        del theirs_cont

    def add(name: str, ours_t: tuple[float, Any], key: str | None, note: str = "") -> None:
        t, value = ours_t
        if key and key in inspect_times:
            ti, vi, inote = inspect_times[key]
            rows.append((name, t, ti, f"assay {value:.6g} / Inspect {vi:.6g} {inote}".rstrip()))
        else:
            rows.append((name, t, None, f"assay {value:.6g} {note}".rstrip()))

    add("accuracy (arrays)", a_acc, "accuracy")
    add("stderr (arrays)", a_se, "stderr")
    add("stderr(cluster) (arrays)", a_cl, "stderr(cluster)")
    add("stderr(cluster) (SampleScore frame)", a_cl_obj, "stderr(cluster)")
    add(f"bootstrap_stderr B={b} (C/I scores)", a_bs, "bootstrap")
    add(f"bootstrap_stderr B={b} (continuous)", a_bs_cont, "bootstrap continuous")
    rows.append(
        ("evaluate(): 4 metrics, mean reducer", a_eval[0], None, f"{len(a_eval[1])} records")
    )

    print()
    print(f"{'metric':<40} {'assay s':>9} {'Inspect s':>10} {'speed-up':>9}  values")
    for name, t, ti, note in rows:
        ti_s = f"{ti:10.3f}" if ti is not None else f"{'-':>10}"
        ratio = f"{ti / t:8.0f}x" if ti is not None and t > 0 else f"{'-':>9}"
        print(f"{name:<40} {t:9.3f} {ti_s} {ratio}  {note}")


if __name__ == "__main__":
    main()
