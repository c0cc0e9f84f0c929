"""Label columns turned into text through their distinct values give exactly ``str`` of every
value, whatever the column's type."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from assay.classification.io import _as_text

N = 30_000
rng = np.random.default_rng(0)
COLUMNS = {
    "int": pd.Series(rng.integers(0, 5, N)),
    "float": pd.Series(rng.integers(0, 5, N) / 4),
    "bool": pd.Series(rng.random(N) < 0.5),
    "str": pd.Series(rng.choice(["cat", "dog", "a longer label"], N)),
    "mixed 1 and '1'": pd.Series(rng.choice(np.array([1, "1", 2.5, "x"], dtype=object), N)),
    "category": pd.Series(rng.choice(["b", "a"], N)).astype("category"),
    "many distinct": pd.Series(rng.integers(0, 10**9, N)),
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_text_of_a_column_equals_str_of_every_value(name):
    s = COLUMNS[name]
    got = _as_text(s)
    want = np.array([str(v) for v in s.tolist()], dtype=str)
    assert got.dtype.kind == "U" and len(got) == N
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("width", [1, 2, 3])
@pytest.mark.parametrize(
    "labels", [["0", "1"], ["a", "bb", "ccc"], ["x"], ["1", "10", "é", "ab"], ["", "b"]]
)
def test_label_codes_of_short_text_equal_a_lookup_of_each_value(width, labels):
    from assay.classification.types import _label_codes
    from assay.classification.wide import _distinct

    values = np.array([*labels, "zz", "q", "", "ccc"])
    t = rng.choice(values, 2_000).astype(f"U{width}")  # labels longer than width never match
    want = pd.Index(list(labels)).get_indexer(t)
    np.testing.assert_array_equal(_label_codes(t, labels), want)
    assert (want >= 0).any() and (want < 0).any()
    assert sorted(_distinct(t).tolist()) == sorted(set(t.tolist()))
