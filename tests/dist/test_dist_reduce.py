"""The reduction itself, without a cluster: order kept, empty partitions skipped, bad input
refused (the synchronous scheduler runs the same graph the cluster runs)."""

from __future__ import annotations

import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.dist import evaluate_dask, evaluate_stream, tree_reduce
from assay.errors import InvalidInputError
from assay.scoring import ScoringEvaluator
from assay.text import TextEvaluator


@given(st.lists(st.integers(), min_size=1, max_size=60), st.integers(2, 9))
def test_tree_reduce_keeps_the_order(items: list[int], split_every: int) -> None:
    calls: list[int] = []

    def combine(group: list[list[int]]) -> list[int]:
        assert 2 <= len(group) <= split_every
        calls.append(len(group))
        return [x for part in group for x in part]

    assert tree_reduce([[x] for x in items], combine, split_every) == items
    assert sum(c - 1 for c in calls) == len(items) - 1  # every item merged exactly once


def _frame(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    h = np.clip(np.rint(rng.normal(3, 1, n)), 1, 6)
    return pd.DataFrame({"h": h, "m": np.round((h + rng.normal(0, 0.6, n)) * 8) / 8})


def test_empty_partitions_are_skipped() -> None:
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=8)
    kept = ddf[ddf["h"] >= 4]  # some partitions end up empty
    want = ScoringEvaluator(human="h", system="m").add(df[df["h"] >= 4].reset_index(drop=True))
    got = evaluate_dask(ScoringEvaluator(human="h", system="m"), kept, scheduler="sync")
    assert got.compute().to_json() == want.compute().to_json()


def test_the_result_lands_in_the_given_evaluator() -> None:
    first, rest = ["a b", "c"], ["x y z", "x", "q r"]
    ev = TextEvaluator().add(first, first)
    bag = db.from_sequence(rest, npartitions=3)
    out = evaluate_dask(ev, bag, add=lambda e, part: e.add(part, part), scheduler="sync")
    assert out is ev
    assert (
        ev.compute().to_json()
        == TextEvaluator().add(first + rest, first + rest).compute().to_json()
    )


def test_bad_input_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="expected a Dask DataFrame or bag"):
        evaluate_dask(TextEvaluator(), [["a"]], scheduler="sync")
    with pytest.raises(InvalidInputError, match="split_every"):
        evaluate_dask(TextEvaluator(), db.from_sequence(["a"]), split_every=1, scheduler="sync")
    empty = db.from_sequence([], npartitions=1)
    with pytest.raises(InvalidInputError, match="every partition was empty"):
        evaluate_dask(TextEvaluator(), empty, add=lambda e, p: None, scheduler="sync")
    ev = evaluate_stream(TextEvaluator(), [], add=lambda e, p: None)
    with pytest.raises(InvalidInputError, match="no data was added"):
        ev.compute()
