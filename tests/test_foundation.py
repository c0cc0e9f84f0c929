"""The ground floor: the validation door, the ratio kernel and the safe file writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_fscore_support

from assay._validation import as_1d, check_binary, check_probability, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.io.files import safe_filename, write_atomic, write_files_atomic
from assay.ratios import divide, precision_recall_f1, ratio

# ---------------------------------------------------------------- validation


def test_validation_names_source_record_and_field() -> None:
    with pytest.raises(InvalidInputError) as e:
        check_probability(np.array([0.2, 0.3, -0.1]), source="preds.csv", field="score")
    assert (e.value.source, e.value.record, e.value.field) == ("preds.csv", "index 2", "score")
    with pytest.raises(InvalidInputError, match="index 1: expected a number, got 'x'"):
        as_1d([1, "x"], source="y", dtype=float)
    with pytest.raises(InvalidInputError, match="y_true has 3, y_score has 2"):
        check_same_length(y_true=[1, 0, 1], y_score=[0.1, 0.2])
    with pytest.raises(InvalidInputError, match="got 'yes'"):
        check_binary(np.array([0, "yes"], dtype=object), source="y")
    assert check_binary(np.array(["n", "y"]), source="y", values=("n", "y")).tolist() == ["n", "y"]


# ---------------------------------------------------------------- the ratio kernel


def test_prf_agrees_with_scikit_learn_zero_division() -> None:
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(30):
        y_true = rng.integers(0, 4, 40)
        y_pred = rng.integers(0, 5, 40)  # label 4 never true; some labels never predicted
        labels = np.arange(5)
        tp = np.array([np.sum((y_true == k) & (y_pred == k)) for k in labels])
        fp = np.array([np.sum((y_true != k) & (y_pred == k)) for k in labels])
        fn = np.array([np.sum((y_true == k) & (y_pred != k)) for k in labels])
        for z in (0.0, 1.0):
            ours = precision_recall_f1(tp, fp, fn, zero_division=z)
            theirs = precision_recall_fscore_support(
                y_true, y_pred, labels=labels, zero_division=z, average=None
            )[:3]
            for a, b in zip(ours, theirs, strict=True):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)
                compared += a.size
    assert compared > 0


@given(
    st.lists(st.integers(0, 50), min_size=3, max_size=3),
)
def test_prf_bounds_and_undefined(counts: list[int]) -> None:
    tp, fp, fn = counts
    p, r, f = (float(x[0]) for x in precision_recall_f1([tp], [fp], [fn]))
    for v, den in ((p, tp + fp), (r, tp + fn)):
        assert np.isnan(v) == (den == 0)
        assert np.isnan(v) or 0.0 <= v <= 1.0
    assert np.isnan(f) == (np.isnan(p) or np.isnan(r))
    assume(not np.isnan(f))
    assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12


def test_scalar_ratio_raises_or_uses_zero_division() -> None:
    with pytest.raises(UndefinedMetricError, match="requires TP"):
        ratio(0, 0, metric="Precision", requires="TP + FP > 0")
    assert ratio(0, 0, metric="Precision", requires="TP + FP > 0", zero_division=0) == 0.0
    assert divide([1], [0], 0.5).tolist() == [0.5]


# ---------------------------------------------------------------- file writes


def test_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        a = write_atomic(tmp_path / "sub" / "out.json", "[]\n")
        b = write_files_atomic(tmp_path / "tables", {"eval.csv": "x\n", "m.json": b"{}"})
    finally:
        os.umask(old)
    for p in [a, *b]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
    assert a.read_text() == "[]\n"


def test_files_appear_together_or_not_at_all(tmp_path: Path) -> None:
    d = tmp_path / "out"
    write_files_atomic(d, {"a.csv": "old a\n", "b.csv": "old b\n"})
    with pytest.raises(TypeError):
        write_files_atomic(d, {"a.csv": "new a\n", "b.csv": 5})  # type: ignore[dict-item]
    assert (d / "a.csv").read_text() == "old a\n"
    assert sorted(p.name for p in d.iterdir()) == ["a.csv", "b.csv"], "no temporary left behind"


def test_writes_refuse_paths_out_of_the_folder_and_odd_targets(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="not a plain file name"):
        write_files_atomic(tmp_path, {"../x.csv": "x"})
    (tmp_path / "dir").mkdir()
    with pytest.raises(InvalidInputError, match="is a directory"):
        write_atomic(tmp_path / "dir", "x")
    (tmp_path / "file").write_text("")
    with pytest.raises(InvalidInputError, match="is a file"):
        write_atomic(tmp_path / "file" / "x.json", "x")


@given(st.text(min_size=0, max_size=40))
def test_safe_filename_is_one_component(name: str) -> None:
    out = safe_filename(name)
    assert out and "/" not in out and "\x00" not in out
    assert not out.startswith(".")
    assert Path(out).name == out
