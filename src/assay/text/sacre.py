"""sacrebleu's sentence BLEU and chrF, as options beside the NLTK-compatible BLEU.

sacrebleu tokenises itself (``13a`` by default), smooths sentence BLEU (``exp``) and
reports on a 0-100 scale; these functions call the sacrebleu package (an optional
dependency, imported only when used) and return its numbers unchanged, so they match a
sacrebleu run exactly. Use :func:`assay.text.bleu` for Valor's / NLTK's definition.

Example:
    >>> same = ["the cat sat on the mat"]
    >>> round(float(sacrebleu_sentence(same, same)[0]), 6)
    100.0
    >>> round(float(chrf_sentence(["the cat"], ["the cat sat"])[0]), 4)
    55.771
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.text.rouge import as_predictions, as_references

__all__ = ["sacrebleu_sentence", "chrf_sentence"]


def _scorer(kind: str, options: dict[str, Any]) -> Any:
    try:
        from sacrebleu.metrics import BLEU, CHRF
    except ImportError:  # pragma: no cover - sacrebleu is a declared dependency of the extra
        raise InvalidInputError(
            f"{kind} needs the sacrebleu package (pip install sacrebleu)", field="metrics"
        ) from None
    if kind == "bleu":
        return BLEU(effective_order=True, **options)
    return CHRF(**options)


def _sentences(
    kind: str, predictions: Sequence[str], references: Sequence[str | Sequence[str]], options: dict
) -> np.ndarray:
    preds = as_predictions(predictions)
    refs = as_references(references, len(preds))
    scorer = _scorer(kind, options)
    return np.array(
        [scorer.sentence_score(p, r).score for p, r in zip(preds, refs, strict=True)], dtype=float
    )


def sacrebleu_sentence(
    predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any
) -> np.ndarray:
    """sacrebleu's sentence BLEU (0-100, ``effective_order=True``) per datum.

    ``options`` go to ``sacrebleu.metrics.BLEU`` (``tokenize``, ``smooth_method``, ...).
    """
    return _sentences("bleu", predictions, references, options)


def chrf_sentence(
    predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any
) -> np.ndarray:
    """sacrebleu's sentence chrF (0-100) per datum; ``options`` go to ``sacrebleu.metrics.CHRF``
    (``word_order=2`` gives chrF++)."""
    return _sentences("chrf", predictions, references, options)
