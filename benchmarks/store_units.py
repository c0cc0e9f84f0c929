"""What keeping a run's units costs (issue 30 item 1): the store's size and ``--save``'s time.

A binary classification run over ``N`` datums (default 10^6: a uid, the truth and one
score each, in a Parquet file written before the clock starts) is run as the CLI runs it,
each time in a fresh process: ``assay classification --data ... --y-score ...`` without
``--save``, with ``--save --no-units``, and with ``--save`` (the units kept, the default).
The CPU time of each child process (user + system, from ``getrusage``; on a shared, loaded
machine it moves far less than wall time) is the best of ``--repeat`` runs, round robin.

Printed: the store's growth per run (the units' compressed bytes, from ``assay_units``,
and the SQLite file's growth), bytes per datum, the CPU time of each variant with its
ratio to the run without ``--save``, and the CPU time of ``assay compare`` of two of the
kept runs (paired: the counts' records by the paired bootstrap, ROC AUC by DeLong). The
issue's bars: at most 50 MB added at 10^6 datums, and ``--save`` at most 1.5x the run
without it.

Usage: ``python benchmarks/store_units.py [--n N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SRC = Path(__file__).resolve().parents[1] / "src"


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(args: list[str]) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    before, wall = _child_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "assay", *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return _child_cpu() - before, time.perf_counter() - wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    n = opts.n
    folder = Path(tempfile.mkdtemp(prefix="assay-units-"))
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    data = pd.DataFrame(
        {
            "uid": [f"item-{i:07d}" for i in range(n)],
            "y": y,
            "p": np.clip(0.5 * y + rng.normal(0.25, 0.3, n), 0, 1),
        }  # fmt: skip
    )
    path = folder / "data.parquet"
    data.to_parquet(path)
    base = ["classification", "--data", str(path), "--y-true", "y", "--y-score", "p"]
    base += ["--uid-column", "uid", "--metrics", "Accuracy,ROCAUC,F1"]
    db = folder / "store.db"
    variants = {
        "no --save": base,
        "--save --no-units": [*base, "--save", "--db", str(db), "--no-units"],
        "--save (units kept)": [*base, "--save", "--db", str(db)],
    }
    best = {k: (float("inf"), float("inf")) for k in variants}
    growth: dict[str, int] = {}
    for _ in range(opts.repeat):
        for name, args in variants.items():
            size = db.stat().st_size if db.exists() else 0
            cpu, wall = _run(args)
            best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
            growth[name] = (db.stat().st_size if db.exists() else 0) - size
    import sqlite3

    with sqlite3.connect(db) as c:
        kept = c.execute("SELECT size FROM assay_units ORDER BY evaluation_id DESC").fetchone()[0]
    print(f"{n:,} datums, load {os.getloadavg()[0]:.2f} (1 min), best of {opts.repeat}")
    print(f"units kept: {kept / 1e6:.2f} MB compressed ({kept / n:.1f} bytes a datum); "
          f"store growth with units {growth['--save (units kept)'] / 1e6:.2f} MB, "
          f"without {growth['--save --no-units'] / 1e6:.2f} MB")  # fmt: skip
    ref = best["no --save"][0]
    for name, (cpu, wall) in best.items():
        print(f"{name:22s} cpu {cpu:6.2f} s  wall {wall:6.2f} s  ratio {cpu / ref:.2f}x")
    with sqlite3.connect(db) as c:
        ids = [r[0] for r in c.execute("SELECT evaluation_id FROM assay_units ORDER BY 1")]
    cpu, wall = _run(["compare", str(ids[-2]), str(ids[-1]), "--db", str(db)])
    print(f"assay compare of two runs with units: cpu {cpu:.2f} s  wall {wall:.2f} s "
          "(1000 resamples)")  # fmt: skip


if __name__ == "__main__":
    main()
