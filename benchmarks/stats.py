"""Benchmark: score statistics at scale, assay vs Inspect AI, same data, one process.

1e6 scores (C/I letters, or continuous values) in 1,000 clusters: accuracy, stderr,
clustered stderr and a 1,000-resample bootstrap. Inspect AI's metrics take a list of
pydantic ``SampleScore`` objects. assay is timed twice: on numpy arrays
(``ScoreFrame.from_arrays``, the fast path) and on the very same list of Inspect objects
that Inspect gets (what an Inspect user holds), the conversion to arrays included, with
the same number of repeats. Times are the best of the repeats, wall clock and CPU time
(``time.process_time``) side by side; speed-ups are CPU-time ratios (the machine is
shared). Building the objects is reported separately. Inspect's bootstrap draws one
resample per Python loop step (~70 ms each at 1e6), so it is timed on
``--inspect-resamples`` resamples and scaled linearly to ``--resamples`` (marked
"extrapolated"). The last rows time assay alone: the one-call ``evaluate_scores`` and a
``ScoreEvaluator`` fed in 10 batches, merged, and shipped through
``state()``/``from_state()``. The last line gives the memory clustered stderr allocates
(tracemalloc's peak during one call, the inputs already built) for assay from arrays and for
Inspect from its objects, PASS when assay's is at most Inspect's.

``--newer`` times the newer metrics instead (ci, ci_wilson, krippendorff_alpha at each
level, frequency, aggregate) on ``--n`` scores (or units of 3 ratings), assay and Inspect
on the same data, and krippendorff_alpha also beside the ``krippendorff`` package.

Run: ``.venv/bin/python benchmarks/stats.py [--n 1000000] [--clusters 1000] [--no-inspect]``
or ``.venv/bin/python benchmarks/stats.py --newer --n 100000``
"""

from __future__ import annotations

import argparse
import functools
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import assay.stats as st

Timing = tuple[float, float, Any]  # best wall seconds, best CPU seconds, result


def timed(fn: Callable[[], Any], repeat: int = 1) -> Timing:
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu, out


def traced_peak_mb(fn: Callable[[], Any]) -> float:
    """Peak of the memory ``fn()`` allocates above what was allocated before (tracemalloc)."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - base) / 2**20


def memory_row(data: dict[str, np.ndarray], objs: list[Any] | None) -> None:
    frame = st.ScoreFrame.from_arrays(
        data["correct"].astype(float), metadata={"cluster": data["cluster"]}
    )
    ours = traced_peak_mb(lambda: st.stderr(cluster="cluster")(frame))
    line = f"memory, stderr(cluster): assay (arrays) {ours:.0f} MB"
    if objs is not None:
        from inspect_ai.scorer import stderr as i_stderr

        theirs = traced_peak_mb(lambda: i_stderr(cluster="cluster")(objs))
        verdict = "PASS" if ours <= theirs else "FAIL"
        line += f", Inspect AI (objects) {theirs:.0f} MB: {verdict}"
    print(line)


def make_data(n: int, g: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    cluster = rng.integers(0, g, n)
    effect = rng.normal(0, 0.5, g)[cluster]
    correct = rng.random(n) < 1 / (1 + np.exp(-(0.4 + effect)))
    return {
        "cluster": cluster,
        "correct": correct,
        "letters": np.where(correct, "C", "I"),
        "continuous": effect + rng.normal(0, 1, n),
    }


def time_assay(data: dict[str, np.ndarray], b: int) -> dict[str, Timing]:
    correct, cluster = data["correct"], data["cluster"]
    t_arr = timed(
        lambda: st.ScoreFrame.from_arrays(correct.astype(float), metadata={"cluster": cluster})
    )
    frame = t_arr[2]
    print(f"build: assay arrays {t_arr[0]:.3f} s wall / {t_arr[1]:.3f} s CPU")
    cont = st.ScoreFrame.from_arrays(data["continuous"])
    metrics = [
        st.accuracy(),
        st.stderr(),
        st.stderr(cluster="cluster"),
        st.bootstrap_stderr(b, seed=1),
    ]
    return {
        "accuracy": timed(lambda: st.accuracy()(frame), 3),
        "stderr": timed(lambda: st.stderr()(frame), 3),
        "stderr(cluster)": timed(lambda: st.stderr(cluster="cluster")(frame), 3),
        "bootstrap": timed(lambda: st.bootstrap_stderr(b, seed=1)(frame), 1),
        "bootstrap continuous": timed(lambda: st.bootstrap_stderr(b, seed=1)(cont), 1),
        "evaluate": timed(lambda: st.evaluate_scores(frame, metrics), 1),
        "evaluator": timed(lambda: _evaluator_round(frame, metrics), 1),
    }


def inspect_objects(data: dict[str, np.ndarray]) -> list[Any]:
    """The C/I scores as Inspect AI ``SampleScore`` objects with the cluster in metadata."""
    from inspect_ai.scorer import SampleScore as ISampleScore
    from inspect_ai.scorer import Score as IScore

    return [
        ISampleScore(score=IScore(value=v), sample_id=i, sample_metadata={"cluster": c})
        for i, (v, c) in enumerate(zip(data["letters"].tolist(), data["cluster"].tolist()))
    ]


def time_from_objects(objs: list[Any], repeat: int) -> dict[str, tuple[Timing, Timing]]:
    """assay and Inspect on the same list of Inspect objects, the same repeats; assay's
    time includes reading the objects into arrays. Both are warmed up on 100 objects."""
    from inspect_ai.scorer import accuracy as i_accuracy
    from inspect_ai.scorer import stderr as i_stderr

    pairs = {
        "accuracy": (st.accuracy(), i_accuracy()),
        "stderr": (st.stderr(), i_stderr()),
        "stderr(cluster)": (st.stderr(cluster="cluster"), i_stderr(cluster="cluster")),
    }
    out = {}
    for name, (ours, theirs) in pairs.items():
        ours(objs[:100]), theirs(objs[:100])
        out[name] = (
            timed(functools.partial(ours, objs), repeat),
            timed(functools.partial(theirs, objs), repeat),
        )
    return out


def _evaluator_round(frame: st.ScoreFrame, metrics: list[st.MetricFn]) -> st.ScoreEvaluator:
    """10 batches over two evaluators, merged, shipped as state and computed."""
    cuts = np.linspace(0, len(frame), 11).astype(int)
    parts = [frame.take(np.arange(lo, hi)) for lo, hi in zip(cuts[:-1], cuts[1:])]
    a, b = st.ScoreEvaluator(metrics), st.ScoreEvaluator(metrics)
    for i, part in enumerate(parts):
        (a if i % 2 == 0 else b).add(part)
    back = st.ScoreEvaluator.from_state(a.merge(b).state())
    return back.compute()


def time_inspect(
    data: dict[str, np.ndarray], objs: list[Any], b: int, k: int
) -> dict[str, tuple[Timing, str]]:
    from inspect_ai.scorer import SampleScore as ISampleScore
    from inspect_ai.scorer import Score as IScore
    from inspect_ai.scorer import bootstrap_stderr as i_bootstrap_stderr

    out: dict[str, tuple[Timing, str]] = {}
    np.random.seed(1)
    w, c, v = timed(lambda: i_bootstrap_stderr(num_samples=k)(objs))
    out["bootstrap"] = ((w * b / k, c * b / k, v), f"extrapolated from {k}")
    theirs_cont = [
        ISampleScore(score=IScore(value=v), sample_id=i)
        for i, v in enumerate(data["continuous"].tolist())
    ]
    np.random.seed(1)
    w, c, v = timed(lambda: i_bootstrap_stderr(num_samples=k)(theirs_cont))
    out["bootstrap continuous"] = ((w * b / k, c * b / k, v), f"extrapolated from {k}")
    return out


def _row(name: str, ours: Timing, theirs: Timing | None, note: str) -> str:
    w, c, value = ours
    if theirs is None:
        return f"{name:<52} {w:8.3f} {c:8.3f} {'-':>8} {'-':>8} {'-':>8}  {note}"
    wi, ci, vi = theirs
    ratio = f"{ci / c:7.2f}x" if c > 0 else f"{'-':>8}"
    return (
        f"{name:<52} {w:8.3f} {c:8.3f} {wi:8.3f} {ci:8.3f} {ratio}  "
        f"assay {value:.6g} / Inspect {vi:.6g} {note}".rstrip()
    )


def report(
    ours: dict[str, Timing],
    theirs: dict[str, tuple[Timing, str]],
    objects: dict[str, tuple[Timing, Timing]],
    b: int,
) -> None:
    print()
    print(f"{'':<52} {'assay':>17} {'Inspect AI':>17} {'CPU':>8}")
    print(f"{'metric':<52} {'wall s':>8} {'CPU s':>8} {'wall s':>8} {'CPU s':>8} {'speed-up':>8}")
    for key in ("accuracy", "stderr", "stderr(cluster)"):
        o, i = objects.get(key, (None, None))
        print(_row(f"{key} (arrays)", ours[key], i, ""))
        if o is not None:
            print(_row(f"{key} (Inspect objects, conversion incl.)", o, i, ""))
    boot = f"bootstrap_stderr B={b}"
    for key, name in (("bootstrap", f"{boot} (C/I scores)"),
                      ("bootstrap continuous", f"{boot} (continuous)")):  # fmt: skip
        t = theirs.get(key)
        print(_row(name, ours[key], t[0] if t else None, t[1] if t else ""))
    w, c, ms = ours["evaluate"]
    print(_row("evaluate_scores(): 4 metrics, mean reducer", (w, c, len(ms)), None, "records"))
    w, c, ms = ours["evaluator"]
    print(_row("ScoreEvaluator: 10 batches, merge, state", (w, c, len(ms)), None, "records"))


def _newer_cases(n: int, g: int) -> list[tuple[str, Any, Any, list[Any], list[Any]]]:
    """(name, assay metric, Inspect metric, assay scores, Inspect scores) per row."""
    import logging

    import inspect_ai.scorer as isc

    logging.getLogger("inspect_ai").setLevel(logging.ERROR)

    rng = np.random.default_rng(0)
    cluster = rng.integers(0, g, n).tolist()
    letters = rng.choice(["C", "I"], n).tolist()
    verdicts = rng.choice(["yes", "no", "unsure"], n).tolist()
    base = rng.integers(1, 6, n)
    ratings = np.clip(base[:, None] + rng.integers(-1, 2, (n, 3)), 1, 5).tolist()
    dicts = [{"f1": float(x), "em": v} for x, v in zip(rng.random(n), letters)]

    def pair(values: list[Any], meta: bool = False) -> tuple[list[Any], list[Any]]:
        md = [{"cluster": c} for c in cluster] if meta else [None] * n
        ours = [st.SampleScore(st.Score(v), i, 1, m) for i, (v, m) in enumerate(zip(values, md))]
        theirs = [
            isc.SampleScore(score=isc.Score(value=v), sample_id=i, sample_metadata=m)
            for i, (v, m) in enumerate(zip(values, md))
        ]
        return ours, theirs

    o_l, t_l = pair(letters, meta=True)
    o_v, t_v = pair(verdicts)
    o_r, t_r = pair(ratings)
    o_d, t_d = pair(dicts)
    rows = [
        ("ci (t)", st.ci(), isc.ci(), o_l, t_l),
        ("ci (t, clustered)", st.ci(cluster="cluster"), isc.ci(cluster="cluster"), o_l, t_l),
        ("ci_wilson", st.ci_wilson(), isc.ci_wilson(), o_l, t_l),
        (
            "ci_wilson (clustered)",
            st.ci_wilson(cluster="cluster"),
            isc.ci_wilson(cluster="cluster"),
            o_l,
            t_l,
        ),
        ("frequency", st.frequency(), isc.frequency(), o_v, t_v),
        (
            "aggregate(f1, mean)",
            st.aggregate("f1", st.mean()),
            isc.aggregate("f1", isc.mean()),
            o_d,
            t_d,
        ),
    ]
    for level in ("nominal", "ordinal", "interval", "ratio"):
        theirs = isc.krippendorff_alpha(level) if level != "ratio" else None
        rows.append((f"krippendorff_alpha {level}", st.krippendorff_alpha(level), theirs, o_r, t_r))
    return rows


def time_newer(n: int, g: int, with_inspect: bool) -> None:
    """Time the newer metrics on n scores (units of 3 ratings for krippendorff_alpha): CPU
    seconds, best of 3 for every tool."""
    print(f"newer metrics: n={n:,} scores / units, {g:,} clusters; CPU s, best of 3 each")
    print(f"{'metric':<32} {'assay s':>9} {'Inspect s':>10} {'speed-up':>9}  agree")
    for name, ours_m, theirs_m, ours, theirs in _newer_cases(n, g):
        _, t, v = timed(functools.partial(ours_m, ours), 3)
        ti, agree = None, ""
        if with_inspect and theirs_m is not None:
            _, ti, vi = timed(functools.partial(theirs_m, theirs), 3)
            a = v if isinstance(v, dict) else {"": v}
            b = vi if isinstance(vi, dict) else {"": vi}
            agree = f"max |diff| {max(abs(a[k] - b[k]) for k in b):.1e}"
        if name.startswith("krippendorff_alpha"):
            import krippendorff

            matrix = np.asarray([s.score.value for s in ours], dtype=float).T
            level = name.split()[-1]
            kalpha = functools.partial(krippendorff.alpha, matrix, level_of_measurement=level)
            _, tk, vk = timed(kalpha, 3)
            agree += f" krippendorff pkg {tk:.3f} s, |diff| {abs(v - vk):.1e}"
        if ours_m.takes == "frame":  # converted once, as evaluate_scores does
            frame = st.ScoreFrame.from_scores(ours)
            agree += (
                f" (assay on a ScoreFrame {timed(functools.partial(ours_m, frame), 3)[1]:.4f} s)"
            )
        ti_s = f"{ti:10.3f}" if ti is not None else f"{'-':>10}"
        ratio = f"{ti / t:8.1f}x" if ti is not None and t > 0 else f"{'-':>9}"
        print(f"{name:<32} {t:9.3f} {ti_s} {ratio}  {agree.strip()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--inspect-resamples", type=int, default=20)
    ap.add_argument("--no-inspect", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the from-objects rows")
    ap.add_argument("--newer", action="store_true", help="time ci, krippendorff_alpha, ...")
    args = ap.parse_args()
    n, g, b = args.n, args.clusters, args.resamples
    if args.newer:
        time_newer(n, g, not args.no_inspect)
        return
    print(f"n={n:,} scores, {g:,} clusters, {b:,} bootstrap resamples")
    data = make_data(n, g)
    ours = time_assay(data, b)
    theirs: dict[str, tuple[Timing, str]] = {}
    objects: dict[str, tuple[Timing, Timing]] = {}
    if not args.no_inspect:
        w, c, objs = timed(lambda: inspect_objects(data))
        print(f"build: Inspect SampleScore objects {w:.2f} s wall / {c:.2f} s CPU")
        objects = time_from_objects(objs, args.repeats)
        theirs = time_inspect(data, objs, b, args.inspect_resamples)
    report(ours, theirs, objects, b)
    memory_row(data, None if args.no_inspect else objs)


if __name__ == "__main__":
    main()
