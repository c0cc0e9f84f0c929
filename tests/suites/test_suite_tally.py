"""Every resample's records at once (:mod:`assay.llm.suites.tally`) equal the suite's evaluator run
on each resample's rows.

For random items of each suite evaluator (CAT, language exams, LLM fairness) and random
draws of them (resamples x items, zero counts and all-zero rows included), the tally's
replicates of every headline record of the whole set equal a fresh evaluator fed every
item as often as drawn (within 1e-12), with NaN exactly where that evaluator's record is
``null``, absent, or the resample empty. The slices' gaps and the cluster bootstrap use
these replicates (:class:`~assay.llm.slicing.SlicedEvaluator`); a wrapped evaluator
without a tally is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.llm.slicing import SlicedEvaluator, TalliedEvaluator, _key, headline
from assay.llm.suites.cat import OUTCOMES, CATEvaluator
from assay.llm.suites.fairness_metrics import LLMFairnessEvaluator
from assay.llm.suites.language import LANGUAGE_OUTCOMES, LanguageEvaluator
from assay.stats.evaluator import ScoreEvaluator


def _cat(rng: np.random.Generator, n: int) -> tuple[Evaluator, dict[str, Any]]:
    # bias types include one named like a fixed scope ("bias:general")
    bias = np.array(["gender", "race", "general"])
    return CATEvaluator(), {
        "outcomes": np.array(OUTCOMES)[rng.integers(0, 5, n)],
        "test_types": np.array(["intrasentence", "intersentence"])[rng.integers(0, 2, n)],
        "bias_types": bias[rng.integers(0, 3, n)],
    }


def _language(rng: np.random.Generator, n: int) -> tuple[Evaluator, dict[str, Any]]:
    return LanguageEvaluator(), {
        "languages": np.array(["en", "es", "fr"])[rng.integers(0, 3, n)],
        "outcomes": np.array(LANGUAGE_OUTCOMES)[rng.integers(0, 4, n)],
    }


def _fairness(rng: np.random.Generator, n: int) -> tuple[Evaluator, dict[str, Any]]:
    return LLMFairnessEvaluator(group_column="sex", groups=["f", "m"]), {
        "target": rng.integers(0, 2, n),
        "predicted": rng.choice([1, 0, -1, -2], n),
        "privileged": rng.integers(0, 2, n),
        "counterfactual": rng.choice([1, 0, -1, -2, -3], n),
    }


def _values(tally: Any, w: np.ndarray, keys: list[Any]) -> np.ndarray:
    """The tally's values of ``keys`` (NaN where it has no such key)."""
    v = tally.values(w)
    col = {k: j for j, k in enumerate(tally.keys)}
    return np.stack([v[:, col[k]] if k in col else np.full(len(w), np.nan) for k in keys], 1)


def _reference(ev: Evaluator, args: dict[str, Any], w: np.ndarray, keys: list[Any]) -> np.ndarray:
    """The headline values of a fresh evaluator fed item ``i`` ``w[i]`` times."""
    out = np.full(len(keys), np.nan)
    if w.sum() == 0:
        return out
    fresh = type(ev)(**ev.config())
    fresh.add(**{k: np.repeat(np.asarray(a), w) for k, a in args.items()})
    for m in headline(fresh.compute()):
        if _key(m) in keys and m.value is not None:
            out[keys.index(_key(m))] = float(m.value)
    return out


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from([_cat, _language, _fairness]),
    n=st.integers(1, 12),
    b=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    sparse=st.floats(0.0, 0.9),
)
def test_tally_replicates_equal_the_evaluator_on_each_resample(
    kind: Any, n: int, b: int, seed: int, sparse: float
) -> None:
    rng = np.random.default_rng(seed)
    ev, args = kind(rng, n)
    assert isinstance(ev, TalliedEvaluator)
    keys = [_key(m) for m in headline(type(ev)(**ev.config()).add(**args).compute())]
    w = rng.integers(0, 4, (b, n)) * (rng.random((b, n)) >= sparse)
    w[0] = 0  # an empty resample: every record undefined
    got = _values(ev.item_tally(**args), w.astype(np.float64), keys)
    want = np.stack([_reference(ev, args, row, keys) for row in w])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_zero_counts_in_a_scope_are_undefined_not_zero() -> None:
    ev, args = _cat(np.random.default_rng(0), 6)
    args["bias_types"] = np.array(["gender"] * 3 + ["race"] * 3)
    keys = [("LMS", "race", *[None] * 7), ("LMS", "gender", *[None] * 7)]
    got = _values(ev.item_tally(**args), np.array([[1.0, 1, 1, 0, 0, 0]]), keys)
    assert np.isnan(got[0, 0]) and not np.isnan(got[0, 1])


def test_a_wrapped_evaluator_without_a_tally_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="TalliedEvaluator") as e:
        SlicedEvaluator(evaluator=ScoreEvaluator)
    assert e.value.source == "evaluator"
