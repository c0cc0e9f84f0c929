"""The deterministic choices: LCG shuffle, seeded pick, answer cleaning, factorisation."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assay.llm.suites.columns import factorize
from assay.llm.suites.shuffle import (
    clean_answer,
    lcg_permutation,
    lcg_shuffle,
    seeded_pick,
    u32,
)


def test_lcg_shuffle_by_hand():
    # seed 1, three values. i = 2: state = 1 * 1664525 + 1013904223 = 1015568748,
    # 1015568748 mod 3 = 0 -> swap positions 2 and 0: [c, b, a].
    # i = 1: state = (1015568748 * 1664525 + 1013904223) mod 2**32 = 1586005467, odd.
    s1 = 1 * 1664525 + 1013904223
    assert s1 == 1015568748 and s1 % 3 == 0
    s2 = (s1 * 1664525 + 1013904223) % 2**32
    assert s2 == 1586005467 and s2 % 2 == 1  # odd -> swap positions 1 and 1: no change
    assert lcg_shuffle(["a", "b", "c"], 1) == ["c", "b", "a"]


def test_seeds_wrap_at_32_bits():
    assert lcg_permutation(7, 5) == lcg_permutation(7, 5 + 2**32)
    assert u32(-1) == 2**32 - 1
    assert lcg_permutation(1, 3) == [0] and lcg_permutation(0, 3) == []


@given(st.integers(0, 50), st.integers(0, 2**40))
def test_lcg_permutation_is_a_permutation(n, seed):
    perm = lcg_permutation(n, seed)
    assert sorted(perm) == list(range(n))


def test_seeded_pick_and_clean():
    assert seeded_pick("abc", 3) == "a" and seeded_pick("abc", 2**32 + 1) == "c"
    assert clean_answer("<think>\nno\n</think>  H\r\n") == "H"
    assert clean_answer("a\nb") == "a b"
    assert clean_answer("<think>x</think>1<think>y</think>2") == "12"


@given(st.lists(st.sampled_from(["en", "es", "fr", "de", "ar"]), max_size=60))
def test_factorize_matches_pandas(values):
    import pandas as pd

    codes, names = factorize(np.array(values, dtype=str))
    assert [names[c] for c in codes] == values
    assert names == sorted(set(values))
    ref_codes, ref_names = pd.factorize(np.array(values, dtype=object), sort=True)
    assert codes.tolist() == ref_codes.tolist() and names == list(ref_names)


def test_factorize_falls_back_past_the_limit():
    values = [f"v{i % 50}" for i in range(200)]
    codes, names = factorize(values, limit=8)
    assert len(names) == 50 and [names[c] for c in codes] == values
