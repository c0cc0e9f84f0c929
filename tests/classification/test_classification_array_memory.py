"""The array path of the classification evaluator: no pandas, and one copy of the scores.

``add_arrays`` + ``compute`` is what the benchmark's multiclass memory round measures: the
scores are copied once (as label rows), a label's sorted scores exist one label at a time
(unless DeLong reads them again), and neither pandas nor pyarrow is imported.
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from assay.classification import ClassificationEvaluator
from assay.classification.types import block_from_arrays

METRICS = ["Counts", "Precision", "Recall", "F1", "Accuracy", "ROCAUC"]


def _multiclass(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = rng.random((n, k))
    return y, p / p.sum(axis=1, keepdims=True)


def test_the_array_path_imports_neither_pandas_nor_pyarrow():
    code = (
        "import sys, numpy as np\n"
        "from assay.classification import ClassificationEvaluator\n"
        "ev = ClassificationEvaluator(metrics=['Accuracy', 'ROCAUC', 'F1'])\n"
        "ev.add_arrays([0, 1, 2, 1], np.eye(3)[[0, 1, 2, 0]] * 0.8 + 0.05, labels=[0, 1, 2])\n"
        "ms = ev.compute()\n"
        "assert ms.get('Accuracy', score_threshold=0.0).value == 0.75\n"
        "print(sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_compute_allocates_well_under_a_second_copy_of_the_scores():
    n, k = 200_000, 10
    y, s = _multiclass(n, k)
    ev = ClassificationEvaluator(score_thresholds=[0.0], metrics=METRICS)
    ev.add_arrays(y[:100], s[:100], labels=list(range(k))).compute()  # first-call costs
    ev = ClassificationEvaluator(score_thresholds=[0.0], metrics=METRICS)
    tracemalloc.start()
    try:
        ev.add_arrays(y, s, labels=list(range(k)))
        kept, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        ev.compute()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    scores = s.nbytes
    assert kept <= 1.15 * scores  # the label rows, one copy
    # above what the evaluator holds: one label's sorted scores, the top labels, masks;
    # every label's sorted scores at once (the regression) would be another full copy
    assert peak - kept < 0.5 * scores


@pytest.mark.parametrize("binary", [False, True])
def test_sorted_splits_equal_a_sort_per_label_and_are_read_only(binary):
    y, s = _multiclass(500, 2 if binary else 4, seed=3)
    s = s[:, 1] if binary else s
    labels = [0, 1] if binary else [0, 1, 2, 3]
    b = block_from_arrays(y, s, labels=labels)
    dense = b.dense_scores()
    splits = b.sorted_splits()
    assert len(splits) == len(labels)
    for j, (pos, neg) in enumerate(splits):
        np.testing.assert_array_equal(pos, np.sort(dense[j][b.gt == j]))
        np.testing.assert_array_equal(neg, np.sort(dense[j][b.gt != j]))
        assert not pos.flags.writeable and not neg.flags.writeable
    assert splits[0] is not b.sorted_splits()[0]  # nothing kept by default
    b.keep_sorted_splits()
    assert b.sorted_splits()[-1] is b.sorted_splits()[-1]  # kept once asked


def test_top_label_keeps_the_first_of_tied_scores_as_argmax():
    s = np.array([[0.2, 0.4, 0.4], [0.5, 0.5, 0.0], [0.1, 0.1, 0.8], [0.3, 0.3, 0.3]])
    b = block_from_arrays([0, 1, 2, 0], s, labels=[0, 1, 2])
    top, score = b.top()
    assert top.tolist() == np.argmax(s, axis=1).tolist() == [1, 0, 2, 0]
    assert score.tolist() == s.max(axis=1).tolist()
