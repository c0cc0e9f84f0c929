"""Score statistics: metrics over per-sample scores, standard errors, grouping, epochs.

The layer every LLM evaluation in assay reports through (``spec/inspect-scoring-metrics.md``).

Example:
    >>> from assay.stats import Score, SampleScore, evaluate, accuracy, stderr, grouped
    >>> scores = [
    ...     SampleScore(Score(v), sample_id=i, sample_metadata={"topic": t})
    ...     for i, (v, t) in enumerate([("C", "math"), ("I", "math"), ("C", "art"), ("P", "art")])
    ... ]
    >>> ms = evaluate(scores, [accuracy(), grouped(accuracy(), "topic")])
    >>> [(m.parameters.get("name"), m.value) for m in ms]
    [(None, 0.625), ('math', 0.5), ('art', 0.75), ('all', 0.625)]
"""

from assay.stats.compute import (
    bootstrap_means,
    clustered_stderr,
    pass_at_k,
    pass_hat_k,
)
from assay.stats.evaluator import ScoreEvaluator, evaluate
from assay.stats.metrics import (
    MetricFn,
    accuracy,
    bootstrap_stderr,
    get_metric,
    grouped,
    mean,
    metric,
    registered_metrics,
    std,
    stderr,
    var,
)
from assay.stats.reducers import (
    Reducer,
    at_least,
    get_reducer,
    pass_at,
    pass_k,
    reduce_scores,
    reducer,
    registered_reducers,
)
from assay.stats.types import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    PARTIAL,
    SampleScore,
    Score,
    ScoreFrame,
    Value,
    value_to_float,
)

__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "MetricFn",
    "Reducer",
    "SampleScore",
    "Score",
    "ScoreEvaluator",
    "ScoreFrame",
    "Value",
    "accuracy",
    "at_least",
    "bootstrap_means",
    "bootstrap_stderr",
    "clustered_stderr",
    "evaluate",
    "get_metric",
    "get_reducer",
    "grouped",
    "mean",
    "metric",
    "pass_at",
    "pass_at_k",
    "pass_hat_k",
    "pass_k",
    "reduce_scores",
    "reducer",
    "registered_metrics",
    "registered_reducers",
    "std",
    "stderr",
    "value_to_float",
    "var",
]
