"""The bootstrap's vectorised replicates equal the point-estimate record builders run on each
resample's counts, one at a time, for every family of records (each definition, their mean,
a group column with or without control columns and crossed groups, the overall numbers), on
random counts with many zero cells (empty groups, no positive or negative labels, a zero
selection rate): a replicate is NaN exactly where the builder's record is ``None``, and
equal to it (1e-12) elsewhere. With sample weights the values come from random weight sums
(zero ones included).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.fairness import FairnessEvaluator
from assay.fairness.tally import Family


def _evaluator(seed: int, weighted: bool, controls: bool, crossed: bool, **kw) -> FairnessEvaluator:
    rng = np.random.default_rng(seed)
    n = 60
    df = pd.DataFrame({
        "y": rng.integers(0, 2, n), "yhat": rng.integers(0, 2, n), "w": rng.uniform(0.5, 2, n),
        "sex": rng.choice(["F", "M"], n), "age": rng.integers(20, 60, n),
        "race": rng.choice(["a", "b", "c"], n), "site": rng.choice(["x", "y"], n),
    })  # fmt: skip
    column: str | tuple[str, str] = ("race", "sex") if crossed else "race"
    ev = FairnessEvaluator(["sex=F", "age:40:invert"], group_columns=[column],
                           control_columns=["site"] if controls else (), **kw)  # fmt: skip
    ev.add(df, label="y", prediction="yhat", sample_weight="w" if weighted else None)
    return ev


def _random_flat(f: Family, b: int, rng: np.random.Generator) -> np.ndarray:
    """b resamples' flat statistics: counts in 0..4, about half of them 0 (whole groups
    empty now and then), and weight sums (0 where ``zero``)."""
    counts = rng.integers(0, 5, (b, f.size)) * (rng.random((b, f.size)) < 0.5)
    counts[rng.random(b) < 0.2] = 0  # a resample with nothing in this family at all
    if not f.weighted:
        return counts.astype(np.float64)
    sums = rng.choice([0.0, 0.25, 1.5, 3.0], (b, f.size)) * counts
    return np.hstack([counts, sums]).astype(np.float64)


def _number(v: object) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    weighted=st.booleans(),
    controls=st.booleans(),
    crossed=st.booleans(),
    method=st.sampled_from(["between_groups", "to_overall"]),
    agg=st.sampled_from(["worst_case", "mean"]),
    zero_division=st.sampled_from([None, 0.0, 1.0]),
)
def test_vectorised_replicates_equal_the_builders(
    seed: int, weighted: bool, controls: bool, crossed: bool, method: str, agg: str,
    zero_division: float | None,
) -> None:  # fmt: skip
    ev = _evaluator(seed, weighted, controls, crossed, method=method, agg=agg,
                    zero_division=zero_division)  # fmt: skip
    rng = np.random.default_rng(seed + 1)
    for f in ev.stats().families:
        flat = _random_flat(f, 12, rng)
        got = f.replicates(flat)
        want = np.array([[_number(m.value) for m in f.rebuilt(row)] for row in flat])
        assert got.shape == want.shape == (12, len(f.records))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_zero_cells_give_the_builders_undefined_values() -> None:
    """A resample with an empty privileged group, a group without positives and nothing at
    all: the replicates are NaN where the records are None (and EOD its worst value 1)."""
    ev = _evaluator(0, False, False, False)
    d, table = ev.stats().families[0], ev.stats().families[3]
    cells = np.zeros((3, 4, 2))
    cells[0, :, 0] = [1, 2, 0, 3]  # privileged group empty
    cells[1] = [[0, 1], [2, 1], [0, 0], [1, 1]]  # no positive labels in either group
    got = d.replicates(cells.reshape(3, 8))
    want = [[_number(m.value) for m in d.rebuilt(c)] for c in cells.reshape(3, 8)]
    np.testing.assert_array_equal(got, np.array(want))
    assert np.isnan(got[0, :3]).all() and np.isnan(got[2, :3]).all()
    assert got[1, 3] == got[2, 3] == 1.0  # EOD's worst value, not undefined
    zero = np.zeros((1, table.size))
    assert np.isnan(table.replicates(zero)).all()
    assert all(m.value is None or isinstance(m.value, dict) for m in table.rebuilt(zero[0]))
