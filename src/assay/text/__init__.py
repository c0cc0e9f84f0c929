"""Text comparison metrics: ROUGE and BLEU, pure computation, identical to the reference
packages (Google's ``rouge-score``, NLTK's BLEU) and several times faster.

* :func:`rouge` / :func:`rouge_scores`: ROUGE-N, ROUGE-L, ROUGE-Lsum per datum, best over
  several references; F-measure by default, precision and recall on request.
* :func:`bleu` / :func:`corpus_bleu`: sentence and corpus BLEU on whitespace tokens.
* :func:`sacrebleu_sentence`, :func:`chrf_sentence`: sacrebleu's own BLEU and chrF.
* :class:`TextEvaluator` / :func:`evaluate_text`: the accumulating form, giving ``ROUGE``
  and ``BLEU`` records per datum plus an aggregate (mean, stderr, bootstrap interval).

The LLM-judged text metrics (answer correctness, faithfulness, ...) are in
:mod:`assay.llm.judge`.

Example:
    >>> import assay.text
    >>> r = assay.text.rouge(["the cat sat"], ["the cat sat down"], rouge_types=["rouge1"])
    >>> round(float(r["rouge1"][0]), 4)
    0.8571
"""

import sys as _sys
import types as _types
from typing import Any as _Any

from assay._lazy import lazy_exports

# Names are loaded on first use (PEP 562), so importing the light declarations
# (``assay.text.declared``, which ``assay text --help`` reads) does not load numpy.
_EXPORTS = {
    "BLEU_WEIGHTS": "assay.text.declared",
    "ROUGE_TYPES": "assay.text.declared",
    "TEXT_METRICS": "assay.text.evaluator",
    "RougeScores": "assay.text.rouge",
    "TextEvaluator": "assay.text.evaluator",
    "bleu": "assay.text.bleu",
    "chrf_sentence": "assay.text.sacre",
    "corpus_bleu": "assay.text.bleu",
    "evaluate_text": "assay.text.evaluator",
    "rouge": "assay.text.rouge",
    "rouge_scores": "assay.text.rouge",
    "sacrebleu_sentence": "assay.text.sacre",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


class _Package(_types.ModuleType):
    """``assay.text.rouge`` and ``assay.text.bleu`` are the functions, as when the package
    imported them eagerly: the import system binds a submodule to its package's attribute
    when it loads it (here, the modules ``rouge``, ``bleu``), which must not hide them."""

    def __setattr__(self, name: str, value: _Any) -> None:
        if isinstance(value, _types.ModuleType) and name in _EXPORTS:
            return  # the module stays in sys.modules; the name is the function
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
