"""Deterministic choices for the LLM suites: the LCG shuffle, the seeded pick, answer cleaning.

The suites keep the original system's reproducible choices, so the same ``seed`` gives the
same prompts on every machine and in every language that implements these few lines:

* :func:`lcg_shuffle` is a Fisher-Yates shuffle run from the last position down to 1, drawing
  from a 32-bit linear congruential generator: ``state = (state * 1664525 + 1013904223) mod
  2**32`` (the state starts at ``seed mod 2**32``), then position ``i`` swaps with
  ``state mod (i + 1)``.
* :func:`seeded_pick` takes ``elements[seed mod len(elements)]``.
* :func:`u32` is how every seed formula of the suites is reduced (modulo ``2**32``), as in
  the original's unsigned 32-bit arithmetic.
* :func:`clean_answer` removes ``<think>...</think>`` blocks, turns line breaks into spaces
  and trims, before any answer is parsed.

Example:
    >>> lcg_shuffle([0, 1, 2], 1)
    [2, 1, 0]
    >>> seeded_pick(["a", "b", "c"], 7)
    'b'
    >>> clean_answer("<think>hmm\\nok</think>\\n 2) the second\\n")
    '2) the second'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["MASK32", "u32", "lcg_shuffle", "lcg_permutation", "seeded_pick", "clean_answer"]

T = TypeVar("T")

MASK32 = 0xFFFFFFFF
_A, _C = 1664525, 1013904223
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def u32(x: int) -> int:
    """``x mod 2**32``: the suites' seed arithmetic wraps like an unsigned 32-bit integer.

    Example:
        >>> u32(2**32 + 5), u32(-1)
        (5, 4294967295)
    """
    return int(x) & MASK32


def lcg_permutation(n: int, seed: int) -> list[int]:
    """The order :func:`lcg_shuffle` puts ``range(n)`` in.

    Example:
        >>> lcg_permutation(4, 0), lcg_permutation(4, 7)
        ([0, 1, 2, 3], ...)
    """
    order = list(range(n))
    state = u32(seed)
    for i in range(n - 1, 0, -1):
        state = (state * _A + _C) & MASK32
        j = state % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def lcg_shuffle(values: Sequence[T], seed: int) -> list[T]:
    """A new list with ``values`` shuffled by the seeded LCG Fisher-Yates (module docstring)."""
    return [values[i] for i in lcg_permutation(len(values), seed)]


def seeded_pick(elements: Sequence[T], seed: int) -> T:
    """``elements[seed mod len(elements)]``; ``IndexError`` on an empty sequence."""
    if not elements:
        raise IndexError("seeded_pick from an empty sequence")
    return elements[int(seed) % len(elements)]


def clean_answer(text: str) -> str:
    """Drop ``<think>`` blocks, turn ``\\n``/``\\r`` into spaces, trim."""
    return _THINK.sub("", text).replace("\n", " ").replace("\r", " ").strip()
