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
from assay.llm.judge.declared import METRICS

# Names are imported on first use: the package imports none of its modules but the light
# declarations (which import no sibling), so a module of it importing a sibling
# (``assay.llm.judge.registry``) never runs back through here.
_EXPORTS = {
    "get_metric": "registry",
    "register": "registry",
    "registered": "registry",
    "JudgeResult": "run",
    "judge": "run",
    "Datum": "types",
    "JudgeMetric": "types",
}

#: The built-in judge metrics' names (the families of
#: :data:`assay.llm.judge.declared.METRICS`).
JUDGE_METRICS: tuple[str, ...] = METRICS.families

__all__ = ["JUDGE_METRICS", *sorted(_EXPORTS)]

__getattr__, __dir__ = lazy_exports(
    __name__, {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()}
)
