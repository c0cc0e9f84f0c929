"""Longest common subsequences of token-id sequences, for ROUGE-L and ROUGE-Lsum.

ROUGE-L needs only the length of the LCS: rapidfuzz's bit-parallel ``LCSseq`` (C++)
computes it. ROUGE-Lsum also needs *which* reference tokens one LCS uses, chosen exactly
as the reference implementation's backtrack does, so the union over candidate sentences
is the same set. We get the dynamic-programming table without filling it cell by cell:

* Bit-parallel rows (Hyyrö 2004): with ``M[t]`` the bit mask of the candidate positions
  holding token ``t`` and ``V`` starting all ones, each reference token updates
  ``U = V & M[t]; V = (V + U) | (V - U)``. After ``i`` reference tokens the zero bits of
  ``V`` mark the columns where the table row grows by one, so
  ``T[i][j] = j - popcount(V_i & (2**j - 1))``. Python integers carry any width.
* The backtrack from ``(m, n)``: a matching pair steps diagonally (and is kept);
  otherwise step left when ``T[i][j-1] > T[i-1][j]``, else up. Each step reads two
  table cells through the popcount above, so the cost is ``O((m + n) * n / 64)`` word
  operations instead of ``O(m * n)`` Python steps.

Example:
    >>> lcs_length([1, 2, 3, 4], [2, 4, 3])
    2
    >>> lcs_indices([1, 2, 3, 4], [2, 4, 3])
    [1, 2]
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import LCSseq

__all__ = ["lcs_length", "lcs_indices"]


def lcs_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common subsequence of two sequences of hashable tokens."""
    if not a or not b:
        return 0
    return int(LCSseq.similarity(a, b))


def _rows(ref: Sequence[int], can: Sequence[int]) -> list[int]:
    """The bit-parallel row vectors ``V_0 .. V_m`` (see the module docstring)."""
    n = len(can)
    full = (1 << n) - 1
    masks: dict[int, int] = {}
    for j, t in enumerate(can):
        masks[t] = masks.get(t, 0) | (1 << j)
    v = full
    rows = [v]
    for t in ref:
        u = v & masks.get(t, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    return rows


def lcs_indices(ref: Sequence[int], can: Sequence[int]) -> list[int]:
    """Positions in ``ref`` of one LCS with ``can``: the one the classic backtrack picks."""
    i, j = len(ref), len(can)
    if i == 0 or j == 0:
        return []
    rows = _rows(ref, can)
    out: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            out.append(i - 1)
            i -= 1
            j -= 1
            continue
        low = (1 << (j - 1)) - 1
        left = (j - 1) - (rows[i] & low).bit_count()
        up = j - (rows[i - 1] & (low | (1 << (j - 1)))).bit_count()
        if left > up:
            j -= 1
        else:
            i -= 1
    out.reverse()
    return out
