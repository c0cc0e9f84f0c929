"""Filter benchmark: classification filter + compute at the classification benchmark's size.

1e6 datums x 10 labels (``--quick``: 1e5) with datum metadata (``site``: 3 values, ``w``: an
integer missing on 1 datum in 5), added with ``add_arrays(metadata=DataFrame)``. Timed, best
of ``--repeat`` runs (wall and CPU seconds; the machine may be shared):

* ``filter datums (string)``: ``ev.filter(datums='site == "b" and w >= 1')``;
* ``filter datums (pyarrow)``: the same as a ``pyarrow.compute.Expression``;
* ``filter predictions``: ``ev.filter(predictions="score >= 0.05")`` (10 million pairs);
* ``compute filtered``: ``compute()`` on the datum-filtered evaluator (Counts, Precision,
  Recall, F1, Accuracy, ROCAUC, as the classification benchmark's evaluator row);
* ``compute direct``: the same metrics on an evaluator given only the kept datums.

The process's peak RSS is printed at the end.

Usage: ``python benchmarks/filters.py [--quick] [--repeat N]``
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from assay.classification import ClassificationEvaluator

METRICS = ["Counts", "Precision", "Recall", "F1", "Accuracy", "ROCAUC"]


def _data(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    labels = [f"L{j}" for j in range(k)]
    y = rng.integers(0, k, n)
    p = rng.random((n, k))
    p /= p.sum(axis=1, keepdims=True)
    w = pd.array(rng.integers(0, 4, n), dtype="Int64")
    w[rng.random(n) < 0.2] = pd.NA
    meta = pd.DataFrame({"site": rng.choice(["a", "b", "c"], n), "w": w})
    return labels, np.asarray(labels)[y], p, meta


def _best(fn, repeat: int):
    best_wall = best_cpu = float("inf")
    out = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return out, best_wall, best_cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import pyarrow.compute as pc

    n, k = (100_000 if args.quick else 1_000_000), 10
    labels, y, p, meta = _data(n, k)
    uids = np.arange(n)
    ev = ClassificationEvaluator(metrics=METRICS).add_arrays(
        y, p, labels=labels, uids=uids, metadata=meta
    )
    expr = 'site == "b" and w >= 1'
    arrow = (pc.field("site") == "b") & (pc.field("w") >= 1)
    rows = []
    view, wall, cpu = _best(lambda: ev.filter(datums=expr), args.repeat)
    rows.append(("filter datums (string)", wall, cpu))
    _, wall, cpu = _best(lambda: ev.filter(datums=arrow), args.repeat)
    rows.append(("filter datums (pyarrow)", wall, cpu))
    _, wall, cpu = _best(lambda: ev.filter(predictions="score >= 0.05"), args.repeat)
    rows.append(("filter predictions", wall, cpu))
    got, wall, cpu = _best(view.compute, args.repeat)
    rows.append(("compute filtered", wall, cpu))
    keep = ((meta.site == "b") & (meta.w >= 1)).fillna(False).to_numpy(bool)
    direct = ClassificationEvaluator(metrics=METRICS).add_arrays(
        y[keep], p[keep], labels=labels, uids=uids[keep]
    )
    want, wall, cpu = _best(direct.compute, args.repeat)
    rows.append(("compute direct", wall, cpu))
    assert sorted(map(repr, got.to_list())) == sorted(map(repr, want.to_list()))
    print(f"{n:,} datums x {k} labels; filter keeps {int(keep.sum()):,} datums")
    print(f"{'step':<26}{'wall s':>9}{'cpu s':>9}")
    for name, wall, cpu in rows:
        print(f"{name:<26}{wall:>9.3f}{cpu:>9.3f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
