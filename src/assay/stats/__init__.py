"""Score statistics: metrics over per-sample scores, standard errors, grouping, epochs.

The layer every LLM evaluation in assay reports through: per-sample
:class:`Score` values (letters C/I/P/N, numbers, booleans, dicts of them) in,
:class:`~assay.results.MetricSet` records out. Metrics (``accuracy``, ``mean``, ``var``,
``std``, ``stderr`` plain or clustered, ``bootstrap_stderr``) give records of CamelCase
type (``Accuracy`` ...), Inspect AI's names are aliases in the registry; ``grouped``
splits by a sample-metadata column; reducers combine a sample's epochs first. Also Inspect's
newer metrics (``ci``, ``ci_wilson``, ``krippendorff_alpha``, ``frequency``, ``aggregate``,
``perplexity_per_token``/``_seq``), the ``collect`` and ``majority`` reducers, and custom
value mappings (:class:`ValueMapping`).

Modules: :mod:`~assay.stats.types` (Score, SampleScore), :mod:`~assay.stats.frame`
(ScoreFrame), :mod:`~assay.stats.compute` (pure numpy formulas),
:mod:`~assay.stats.metric_registry`, :mod:`~assay.stats.metrics`,
:mod:`~assay.stats.grouped`, :mod:`~assay.stats.reducer_registry`,
:mod:`~assay.stats.reducers`, :mod:`~assay.stats.reduce`, :mod:`~assay.stats.evaluator`
(evaluate_scores, ScoreEvaluator), :mod:`~assay.stats.state`, :mod:`~assay.stats.intervals`,
:mod:`~assay.stats.agreement`, :mod:`~assay.stats.categorical`,
:mod:`~assay.stats.perplexity`, :mod:`~assay.stats.panel`,
:mod:`~assay.stats.value_mapping` and :mod:`~assay.stats.records` (the record builders).

Example:
    >>> from assay.stats import Score, SampleScore, evaluate_scores, accuracy, grouped
    >>> scores = [
    ...     SampleScore(Score(v), sample_id=i, sample_metadata={"topic": t})
    ...     for i, (v, t) in enumerate([("C", "math"), ("I", "math"), ("C", "art"), ("P", "art")])
    ... ]
    >>> ms = evaluate_scores(scores, [accuracy(), grouped(accuracy(), "topic")])
    >>> [(m.type, m.parameters.get("group"), m.value) for m in ms]  # doctest: +NORMALIZE_WHITESPACE
    [('Accuracy', None, 0.625), ('Accuracy', 'math', 0.5), ('Accuracy', 'art', 0.75),
     ('Accuracy', 'all', 0.625)]
"""

from assay.stats.agreement import krippendorff_alpha
from assay.stats.categorical import aggregate, categorical, frequency
from assay.stats.compute import (
    bootstrap_means,
    clustered_stderr,
    pass_at_k,
    pass_hat_k,
)
from assay.stats.evaluator import ScoreEvaluator, evaluate, evaluate_scores
from assay.stats.frame import ScoreFrame
from assay.stats.grouped import GroupedMetricFn, grouped
from assay.stats.intervals import ci, ci_wilson
from assay.stats.metric_registry import (
    MetricFn,
    get_metric,
    metric,
    metric_from_spec,
    registered_metrics,
)
from assay.stats.metrics import (
    accuracy,
    bootstrap_stderr,
    mean,
    std,
    stderr,
    var,
)
from assay.stats.panel import collect, majority
from assay.stats.perplexity import perplexity_per_seq, perplexity_per_token
from assay.stats.reduce import reduce_scores
from assay.stats.reducer_registry import (
    Reducer,
    get_reducer,
    reducer,
    reducer_from_spec,
    registered_reducers,
)
from assay.stats.reducers import (
    at_least,
    max_score,
    mean_score,
    median_score,
    mode_score,
    pass_at,
    pass_k,
)
from assay.stats.types import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    PARTIAL,
    SampleScore,
    Score,
    Value,
    value_to_float,
)
from assay.stats.value_mapping import ValueMapping

__all__ = [
    "perplexity_per_token",
    "perplexity_per_seq",
    "ValueMapping",
    "majority",
    "collect",
    "ci_wilson",
    "ci",
    "krippendorff_alpha",
    "frequency",
    "categorical",
    "aggregate",
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "GroupedMetricFn",
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
    "evaluate_scores",
    "get_metric",
    "get_reducer",
    "grouped",
    "mean",
    "metric",
    "metric_from_spec",
    "max_score",
    "mean_score",
    "median_score",
    "mode_score",
    "pass_at",
    "pass_at_k",
    "pass_hat_k",
    "pass_k",
    "reduce_scores",
    "reducer",
    "reducer_from_spec",
    "registered_metrics",
    "registered_reducers",
    "std",
    "stderr",
    "value_to_float",
    "var",
]
