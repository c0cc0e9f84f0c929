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

from assay.text.bleu import bleu, corpus_bleu
from assay.text.declared import BLEU_WEIGHTS, ROUGE_TYPES
from assay.text.evaluator import TEXT_METRICS, TextEvaluator, evaluate_text
from assay.text.rouge import RougeScores, rouge, rouge_scores
from assay.text.sacre import chrf_sentence, sacrebleu_sentence

__all__ = [
    "BLEU_WEIGHTS",
    "ROUGE_TYPES",
    "TEXT_METRICS",
    "RougeScores",
    "TextEvaluator",
    "bleu",
    "chrf_sentence",
    "corpus_bleu",
    "evaluate_text",
    "rouge",
    "rouge_scores",
    "sacrebleu_sentence",
]
