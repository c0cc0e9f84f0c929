"""The formulas of the judge metrics: pure functions of the judge's verdicts.

Verdicts are the strings ``"yes"``, ``"no"``, ``"idk"``; only ``"yes"`` counts as yes.

Example:
    >>> share_yes(["yes", "no", "idk", "yes"])
    0.5
    >>> statement_f1(["yes", "no"], ["yes", "no", "no"])  # tp 1, fp 1, fn 2
    0.4
    >>> context_precision(["yes", "no", "no", "yes"]), context_precision(["no", "yes", "no", "yes"])
    (0.75, 0.5)
    >>> pool_verdicts([["no", "yes", "no"], ["no", "no", "idk"]], 3)  # two ground truths
    ['no', 'yes', 'no']
    >>> pool_verdicts([], 2)  # no ground truth: no context is useful
    ['no', 'no']
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["share_yes", "statement_f1", "context_precision", "pool_verdicts"]


def share_yes(verdicts: Sequence[str]) -> float:
    """``#yes / #verdicts`` (the caller handles an empty list: it has no share).

    Answer relevance (statements relevant to the query), bias and toxicity (opinions
    judged biased / toxic), context recall (reference statements attributable to the
    contexts), context relevance (contexts relevant to the query), faithfulness (claims
    the contexts support; unrelated claims count against) and hallucination (contexts the
    text contradicts) are all this share.
    """
    return sum(v == "yes" for v in verdicts) / len(verdicts)


def statement_f1(answer: Sequence[str], reference: Sequence[str]) -> float:
    """Answer correctness against one reference: ``tp / (tp + (fp + fn) / 2)``, 0 if tp = 0.

    ``answer`` holds one verdict per answer statement (``yes``: the reference supports
    it, a true positive; otherwise a false positive); ``reference`` one per reference
    statement (``yes``: the answer conveys it; otherwise a false negative).
    """
    tp = sum(v == "yes" for v in answer)
    if tp == 0:
        return 0.0
    fp = len(answer) - tp
    fn = sum(v != "yes" for v in reference)
    return tp / (tp + 0.5 * (fp + fn))


def context_precision(verdicts: Sequence[str]) -> float:
    """Ordered context precision: ``Σ_k precision@k · v_k / Σ_k v_k``, 0 when no ``v_k`` = 1.

    ``v_k`` is 1 when the k-th context (in retrieval order) was judged useful and
    ``precision@k`` is the share of useful contexts among the first k.
    """
    hits = 0
    total = 0.0
    for k, v in enumerate(verdicts, start=1):
        if v == "yes":
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def pool_verdicts(per_reference: Sequence[Sequence[str]], n: int) -> list[str]:
    """One verdict per context over several references: ``yes`` where any reference says yes.

    Context precision with several ground truths judges each context against each ground
    truth and pools the verdicts this way before the ordered precision (valor-lite's rule):
    a context is useful when it is useful for any of the references. With no reference
    every verdict is ``no``, so the precision is 0.
    """
    return ["yes" if any(vs[k] == "yes" for vs in per_reference) else "no" for k in range(n)]
