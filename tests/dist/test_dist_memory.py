"""Out of core: streaming a Parquet dataset by row group keeps peak memory bounded by the row
group and the evaluator's state, not the dataset.

Each run is a fresh subprocess that streams a dataset through ``assay.dist.evaluate_table``
and reports its peak resident set size (``VmHWM``, which counts pyarrow's buffers too; not
``ru_maxrss``, which a child inherits from the pytest process it was forked from) and the
peak of Python/numpy allocations (``tracemalloc``). A dataset 10x larger (same row groups)
must not raise either peak by more than a few row groups, while holding it in memory would
take far more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.slow

ROW_GROUP = 100_000
SMALL = 500_000

RUN = r"""
import json, sys, tracemalloc
from assay.dist import evaluate_table
kind, path = sys.argv[1], sys.argv[2]
if kind in ("classification", "whole"):
    from assay.classification import ClassificationEvaluator
    ev = ClassificationEvaluator(compact=True, pr_curve_max_examples=0)
    def add(ev, df):
        ev.add_arrays(df["y"].to_numpy(), df["score"].to_numpy(), labels=[0, 1])
else:
    from assay.fairness import FairnessEvaluator
    ev = FairnessEvaluator(["g=a"], group_columns=["g"])
    def add(ev, df):
        ev.add(df, label="y", prediction="yhat")
tracemalloc.start()
if kind == "whole":  # the contrast: the same rows read whole, the plain evaluator
    from assay.io.tables import read_table
    ev = ClassificationEvaluator(pr_curve_max_examples=0)
    add(ev, read_table(path))
else:
    evaluate_table(ev, path, add=add)
records = ev.compute()
_, traced = tracemalloc.get_traced_memory()
# VmHWM, not ru_maxrss: a child inherits ru_maxrss from the process it was forked from.
rss = next(int(x.split()[1]) * 1024 for x in open("/proc/self/status") if x.startswith("VmHWM:"))
print(json.dumps({"rss": rss, "traced": traced, "records": len(records)}))
"""


def _write(folder: Path, rows: int) -> int:
    """``rows`` binary rows as files of 1e6 rows in row groups of ROW_GROUP; in-memory bytes."""
    folder.mkdir()
    rng = np.random.default_rng(0)
    size = 0
    for i, start in enumerate(range(0, rows, 1_000_000)):
        n = min(1_000_000, rows - start)
        y = rng.integers(0, 2, n)
        score = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1), 3)
        g = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
        df = pd.DataFrame({"y": y, "score": score, "yhat": (score >= 0.5).astype(np.int64), "g": g})
        df.to_parquet(folder / f"part-{i:04d}.parquet", row_group_size=ROW_GROUP)
        size += int(df.memory_usage(deep=True).sum())
    return size


def _peak(kind: str, folder: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", RUN, kind, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """A dataset and one 10x larger (same row groups), and the extra bytes the larger one
    would take in pandas."""
    root = tmp_path_factory.mktemp("datasets")
    small_bytes = _write(root / "small", SMALL)
    big_bytes = _write(root / "big", 10 * SMALL)
    return root / "small", root / "big", big_bytes - small_bytes


@pytest.mark.parametrize("kind", ["classification", "fairness"])
def test_peak_memory_does_not_grow_with_the_dataset(
    datasets: tuple[Path, Path, int], kind: str
) -> None:
    small_dir, big_dir, grown = datasets
    small, big = _peak(kind, small_dir), _peak(kind, big_dir)
    assert small["records"] == big["records"] > 0
    assert grown > 100e6  # what holding the extra rows in pandas would take
    # Ten times the rows; peak memory grows by less than a tenth of the extra data (a few
    # row groups of slack for the allocator), and not at all in Python/numpy allocations
    # beyond two row groups.
    row_group_bytes = grown / (9 * SMALL / ROW_GROUP)
    assert big["rss"] - small["rss"] < grown / 10, (small, big, grown)
    assert big["traced"] < small["traced"] + 2 * row_group_bytes, (small, big)


def test_the_measure_sees_a_dataset_read_whole(datasets: tuple[Path, Path, int]) -> None:
    """The same measure catches growth: reading the 10x dataset whole raises the peak RSS by
    more than half of the extra data."""
    small_dir, big_dir, grown = datasets
    small, big = _peak("whole", small_dir), _peak("whole", big_dir)
    assert big["rss"] - small["rss"] > grown / 2, (small, big)
