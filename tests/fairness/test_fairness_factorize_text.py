"""``factorize_text`` (hashing the texts' bytes) equals ``np.unique(return_inverse=True)``."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assay.fairness.group_table import GroupTable
from assay.fairness.grouping import factorize_text

TEXTS = st.text(alphabet=st.sampled_from(list("abz é日\x01")), max_size=11)


def _same_as_unique(v: np.ndarray) -> None:
    names, inv = factorize_text(v)
    want_names, want_inv = np.unique(v, return_inverse=True)
    assert names.tolist() == want_names.tolist()
    assert inv.tolist() == want_inv.reshape(-1).tolist()


@given(st.lists(TEXTS, max_size=40))
def test_factorize_text_equals_unique(texts):
    _same_as_unique(np.array(texts, dtype=str) if texts else np.array([], dtype="<U4"))


@given(st.lists(st.binary(max_size=13).map(lambda b: b.rstrip(b"\0")), min_size=1, max_size=40))
def test_factorize_bytes_equals_unique(items):
    _same_as_unique(np.array(items, dtype="S"))


def test_tally_counts_each_cell_per_group():
    truth = np.array([1, 0, 1, 0, 1, 1], dtype=bool)
    pred = np.array([1, 1, 0, 0, 1, 0], dtype=bool)
    table = GroupTable.tally(truth, pred, np.array(["fr", "fr", "en", "en", "fr", "en"]))
    assert table.names.tolist() == ["en", "fr"]
    assert table.counts.tolist() == [[0, 0, 2, 1], [2, 1, 0, 0]]  # TP, FP, FN, TN
