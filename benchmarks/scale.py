"""Scale benchmark: binary classification rows from a Parquet dataset, beyond memory.

One run writes a Parquet dataset once (``--rows`` binary rows, default 1e8: a label that is
positive 30% of the time and a score rounded to 3 decimals, in files of 1e7 rows and row
groups of ``--row-group`` rows) into a temporary folder, then measures, each in a fresh
process:

* ``assay out-of-core``: ``assay.dist.evaluate_table`` streams the dataset one row group at a
  time into ``ClassificationEvaluator(compact=True, pr_curve_max_examples=0)`` (every default
  record: Counts, Precision, Recall, F1, Accuracy, ROC AUC, PR curves, detailed PR curves,
  confusion matrix), no Dask;
* ``assay dask``: the same evaluator over a ``dask.distributed.LocalCluster`` of ``--workers``
  worker processes (one thread each): row groups -> ``add`` on the workers -> tree of merges ->
  ``compute`` on the client; CPU time and peak RSS are summed / maxed over the client and
  the workers;
* ``scikit-learn``: ``pandas.read_parquet`` of the whole dataset, then ``roc_auc_score``,
  ``precision_recall_fscore_support`` and ``accuracy_score`` at score >= 0.5 and
  ``confusion_matrix``, at the largest size of 1e6, 1e7, 1e8, ... that fits in half the
  available memory (about 100 bytes a row for the frame and the sort), up to ``--rows``;
  when that is the whole dataset, its ROC AUC is compared with assay's (``--sklearn-max``
  caps the size, e.g. on a shared machine).

Each line gives rows/s (wall), CPU seconds, wall seconds and peak RSS (``VmHWM``; for the
single-process runs also how far it rose above the RSS after imports and a warm-up; for Dask
the largest worker's and the client's).

Usage: ``python benchmarks/scale.py [--rows 1e7] [--row-group 1e6] [--workers 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FILE_ROWS = 10_000_000


def write_dataset(folder: Path, rows: int, row_group: int) -> None:
    import pandas as pd

    rng = np.random.default_rng(0)
    for i, start in enumerate(range(0, rows, FILE_ROWS)):
        n = min(FILE_ROWS, rows - start)
        y = (rng.random(n) < 0.3).astype(np.int8)
        score = np.round(np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1), 3)
        df = pd.DataFrame({"y": y, "score": score})
        df.to_parquet(folder / f"part-{i:05d}.parquet", row_group_size=row_group, index=False)


# ---------------------------------------------------------------- the measured work


def _evaluator():  # noqa: ANN202
    from assay.classification import ClassificationEvaluator

    return ClassificationEvaluator(compact=True, pr_curve_max_examples=0)


def _add(ev, df) -> None:  # noqa: ANN001
    ev.add_arrays(df["y"].to_numpy(), df["score"].to_numpy(), labels=[0, 1])


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss_now() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    """This process's peak RSS (VmHWM). Not ``ru_maxrss``: a child inherits that from the
    parent it was forked from, so it would report the driver's peak (the dataset writer)."""
    with open("/proc/self/status") as fh:
        line = next(x for x in fh if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def run_out_of_core(path: str) -> dict:
    import pandas as pd

    from assay.dist.table import evaluate_table

    # A warm-up on two rows, so imports stay outside the measured rise.
    _add(ev := _evaluator(), pd.DataFrame({"y": [0, 1], "score": [0.2, 0.8]}))
    ev.compute()

    base, cpu0, t0 = _rss_now(), _cpu(), time.perf_counter()
    ev = evaluate_table(_evaluator(), path, add=_add, columns=["y", "score"])
    records = ev.compute()
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    auc = records.get("ROCAUC", label_value="1").value
    return {"wall": wall, "cpu": cpu, "peak": _peak_rss(), "rise": _peak_rss() - base, "auc": auc}


def run_cli(path: str) -> dict:
    """``assay classification --data DATASET ... --compact`` as a user types it, in a
    subprocess: its whole process (interpreter start and imports included), from
    ``getrusage(RUSAGE_CHILDREN)``."""
    out = Path(tempfile.mkdtemp(prefix="assay-scale-cli-")) / "records.json"
    cmd = [sys.executable, "-m", "assay", "classification", "--data", path, "--y-true", "y"]
    cmd += ["--y-score", "score", "--pr-curve-max-examples", "0", "--compact", "--out", str(out)]
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=os.environ.copy())
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    recs = json.loads(out.read_text())
    recs = recs["metrics"] if isinstance(recs, dict) and "metrics" in recs else recs
    auc = next(
        r["value"]
        for r in recs
        if r.get("type") == "ROCAUC" and str(r.get("parameters", {}).get("label", {}).get("value",
        r.get("parameters", {}).get("label_value"))) == "1"
    )  # fmt: skip
    return {"wall": wall, "cpu": cpu, "peak": r1.ru_maxrss * 1024, "auc": auc}


def _worker_usage(dask_worker=None) -> tuple[float, int]:  # noqa: ANN001
    return _cpu(), _peak_rss()


def run_dask(path: str, workers: int) -> dict:
    from distributed import Client, LocalCluster

    from assay.dist import evaluate_table

    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        before = client.run(_worker_usage)
        cpu0, t0 = _cpu(), time.perf_counter()
        ev = evaluate_table(_evaluator(), path, add=_add, columns=["y", "score"], scheduler=client)
        records = ev.compute()
        wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
        after = client.run(_worker_usage)
    cpu += sum(after[w][0] - before[w][0] for w in after)
    peak = max(after[w][1] for w in after)
    auc = records.get("ROCAUC", label_value="1").value
    return {"wall": wall, "cpu": cpu, "peak": peak, "client": _peak_rss(), "auc": auc}


def run_sklearn(path: str, rows: int) -> dict:
    import pandas as pd
    import pyarrow.parquet as pq
    from sklearn.metrics import (
        accuracy_score,
        confusion_matrix,
        precision_recall_fscore_support,
        roc_auc_score,
    )

    base, cpu0, t0 = _rss_now(), _cpu(), time.perf_counter()
    files = sorted(Path(path).glob("*.parquet"))
    parts, have = [], 0
    for f in files:  # the first `rows` rows of the dataset
        if have >= rows:
            break
        parts.append(pq.read_table(f, columns=["y", "score"]).to_pandas())
        have += len(parts[-1])
    df = pd.concat(parts, ignore_index=True).iloc[:rows]
    y, s = df["y"].to_numpy(), df["score"].to_numpy()
    auc = roc_auc_score(y, s)
    pred = (s >= 0.5).astype(np.int8)
    precision_recall_fscore_support(y, pred, labels=[0, 1])
    accuracy_score(y, pred)
    confusion_matrix(y, pred, labels=[0, 1])
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    return {"wall": wall, "cpu": cpu, "peak": _peak_rss(), "rise": _peak_rss() - base, "auc": auc}


# ---------------------------------------------------------------- driver


def _measure(kind: str, path: Path, **kw: int) -> dict:
    args = [sys.executable, __file__, "--measure", kind, "--path", str(path)]
    for k, v in kw.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _available() -> int:
    with open("/proc/meminfo") as fh:
        info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in fh}
    return info["MemAvailable"]


def _line(name: str, rows: int, r: dict) -> str:
    rise = f"  (+{r['rise'] / 2**20:,.0f} MiB over start)" if "rise" in r else ""
    if "client" in r:
        rise = f" per worker, client {r['client'] / 2**20:,.0f} MiB"
    return (
        f"{name:<22}{rows:>13,.0f} rows  {rows / r['wall']:>12,.0f} rows/s  cpu {r['cpu']:7.1f} s"
        f"  wall {r['wall']:7.1f} s  peak RSS {r['peak'] / 2**20:8,.0f} MiB{rise}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=float, default=1e8)
    p.add_argument("--row-group", type=float, default=1e6)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sklearn-max", type=float, help="cap scikit-learn's size (default: what fits)")
    p.add_argument(
        "--only", default="out-of-core,cli,dask,sklearn", help="comma-separated runs to make"
    )
    p.add_argument("--measure", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    p.add_argument("--sk-rows", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.measure:
        result = {
            "out-of-core": lambda: run_out_of_core(a.path),
            "dask": lambda: run_dask(a.path, a.workers),
            "cli": lambda: run_cli(a.path),
            "sklearn": lambda: run_sklearn(a.path, a.sk_rows),
        }[a.measure]()
        print(json.dumps(result))
        return
    rows, row_group = int(a.rows), int(a.row_group)
    with tempfile.TemporaryDirectory(prefix="assay-scale-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        write_dataset(folder, rows, row_group)
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(
            f"dataset: {rows:,} rows in {len(list(folder.iterdir()))} Parquet files, "
            f"row groups of {row_group:,}, {size / 2**20:,.0f} MiB on disk "
            f"(written in {time.perf_counter() - t0:.0f} s)"
        )
        only = a.only.split(",")
        ooc = _measure("out-of-core", folder)
        print(_line("assay out-of-core", rows, ooc), flush=True)
        if "cli" in only:  # the same work as the command a user types (its whole process)
            cli = _measure("cli", folder)
            print(_line("assay CLI (--compact)", rows, cli), flush=True)
            print(f"CLI / API CPU time: {cli['cpu'] / ooc['cpu']:.2f}x; ROC AUC equal: "
                  f"{cli['auc'] == ooc['auc']}", flush=True)  # fmt: skip
        if "dask" not in only and "sklearn" not in only:
            return
        dsk = _measure("dask", folder, workers=a.workers)
        print(_line(f"assay dask ({a.workers} workers)", rows, dsk), flush=True)
        fits = max(10**6, 10 ** int(np.log10(max(_available() / 2 / 100, 1))))
        sk_rows = min(rows, fits, int(a.sklearn_max or rows))
        sk = _measure("sklearn", folder, sk_rows=sk_rows)
        print(_line("scikit-learn", sk_rows, sk))
        print(f"ROC AUC: assay out-of-core {ooc['auc']!r}, dask {dsk['auc']!r}", end="")
        same = sk_rows == rows
        print(f", scikit-learn {sk['auc']!r}" if same else f" (scikit-learn on {sk_rows:,} rows)")
        if same:
            print(f"|assay - sklearn| = {abs(ooc['auc'] - sk['auc']):.3g}")


if __name__ == "__main__":
    main()
