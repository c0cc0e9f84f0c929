"""LLM-guided text metrics: answer correctness and relevance, bias, toxicity, coherence,
summary coherence, context precision / recall / relevance, faithfulness, hallucination.

Each metric follows the one LLM pattern (items -> runner -> strict parse -> pure score);
intermediates several metrics need (statements, opinions, claims of a text) are asked
for once per text and shared. See :mod:`assay.llm.judge.run` for the flow and
:mod:`assay.llm.judge.definitions` for the metrics.

Example:
    >>> from assay.llm.judge import JUDGE_METRICS, Datum
    >>> JUDGE_METRICS[:3]
    ('answer_correctness', 'answer_relevance', 'bias')
"""

from assay._lazy import lazy_exports

# Names are imported on first use: the package imports none of its modules, so a module of
# it importing a sibling (``assay.llm.judge.registry``) never runs back through here.
_EXPORTS = {
    "get_metric": "registry",
    "register": "registry",
    "registered": "registry",
    "JudgeResult": "run",
    "judge": "run",
    "Datum": "types",
    "JudgeMetric": "types",
}

JUDGE_METRICS: tuple[str, ...] = (
    "answer_correctness",
    "answer_relevance",
    "bias",
    "toxicity",
    "coherence",
    "summary_coherence",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "hallucination",
)

__all__ = ["JUDGE_METRICS", *sorted(_EXPORTS)]

__getattr__, __dir__ = lazy_exports(
    __name__, {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()}
)
