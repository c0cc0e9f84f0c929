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

from assay.llm.judge.registry import get_metric, register, registered
from assay.llm.judge.run import JudgeResult, judge
from assay.llm.judge.types import Datum, JudgeMetric

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

__all__ = [
    "JUDGE_METRICS",
    "Datum",
    "JudgeMetric",
    "JudgeResult",
    "get_metric",
    "judge",
    "register",
    "registered",
]
