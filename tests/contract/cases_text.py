"""Contract cases of the text evaluator (ROUGE, BLEU)."""

from __future__ import annotations

from assay.text import TextEvaluator
from contract import ContractCase

_BATCHES = [
    (["the cat sat", "a dog"], ["the cat sat down", ["a dog ran", "dogs"]], ["u1", "u2"]),
    (["hello world"], ["hello there world"], ["u3"]),
    (["one two three four", ""], ["one two three five", "x"], ["u4", "u5"]),
]


def _concat(batches):
    p, r, u = [], [], []
    for bp, br, bu in batches:
        p += bp
        r += br
        u += bu
    return p, r, u


CASES = [
    ContractCase(
        name="text-rouge-bleu",
        make=lambda: TextEvaluator(rouge_types=["rouge1", "rougeL", "rougeLsum"]),
        make_other=lambda: TextEvaluator(use_stemmer=True),
        batches=_BATCHES,
        concat=_concat,
        add=lambda ev, b: ev.add(b[0], b[1], uids=b[2]),
    ),
]
