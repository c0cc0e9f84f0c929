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

Modules: :mod:`~assay.stats.score` (Score, SampleScore), :mod:`~assay.stats.frame`
(ScoreFrame), :mod:`~assay.stats.compute` (pure numpy formulas),
:mod:`~assay.stats.metric_registry`, :mod:`~assay.stats.metrics`,
:mod:`~assay.stats.grouped`, :mod:`~assay.stats.reducer_registry`,
:mod:`~assay.stats.reducers`, :mod:`~assay.stats.evaluator`
(evaluate_scores, ScoreEvaluator), :mod:`~assay.stats.state`, :mod:`~assay.stats.tally`,
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

from __future__ import annotations

import sys as _sys
import types as _types
from typing import TYPE_CHECKING, Any

from assay._lazy import lazy_exports

# Names load on first use (PEP 562), so importing assay.cli.stats for `--help` stays light.
_WHERE = {
    "CORRECT": "assay.stats.score",
    "GroupedMetricFn": "assay.stats.grouped",
    "INCORRECT": "assay.stats.score",
    "MetricFn": "assay.stats.metric_registry",
    "NOANSWER": "assay.stats.score",
    "PARTIAL": "assay.stats.score",
    "Reducer": "assay.stats.reducer_registry",
    "SampleScore": "assay.stats.score",
    "Score": "assay.stats.score",
    "ScoreEvaluator": "assay.stats.evaluator",
    "ScoreFrame": "assay.stats.frame",
    "Value": "assay.stats.score",
    "ValueMapping": "assay.stats.value_mapping",
    "accuracy": "assay.stats.metrics",
    "aggregate": "assay.stats.categorical",
    "at_least": "assay.stats.reducers",
    "bootstrap_means": "assay.stats.compute",
    "bootstrap_stderr": "assay.stats.metrics",
    "categorical": "assay.stats.categorical",
    "ci": "assay.stats.metrics",
    "ci_wilson": "assay.stats.metrics",
    "clustered_stderr": "assay.stats.compute",
    "collect": "assay.stats.panel",
    "evaluate_scores": "assay.stats.evaluator",
    "frequency": "assay.stats.categorical",
    "get_metric": "assay.stats.metric_registry",
    "get_reducer": "assay.stats.reducer_registry",
    "grouped": "assay.stats.grouped",
    "krippendorff_alpha": "assay.stats.agreement",
    "majority": "assay.stats.panel",
    "max_score": "assay.stats.reducers",
    "mean": "assay.stats.metrics",
    "mean_record": "assay.stats.means",
    "mean_score": "assay.stats.reducers",
    "median_score": "assay.stats.reducers",
    "metric": "assay.stats.metric_registry",
    "metric_from_spec": "assay.stats.grouped",
    "mode_score": "assay.stats.reducers",
    "pass_at": "assay.stats.reducers",
    "pass_at_k": "assay.stats.compute",
    "pass_hat_k": "assay.stats.compute",
    "pass_k": "assay.stats.reducers",
    "perplexity_per_seq": "assay.stats.perplexity",
    "perplexity_per_token": "assay.stats.perplexity",
    "reduce_scores": "assay.stats.reducer_registry",
    "reducer": "assay.stats.reducer_registry",
    "reducer_from_spec": "assay.stats.reducer_registry",
    "registered_metrics": "assay.stats.metric_registry",
    "registered_reducers": "assay.stats.reducer_registry",
    "std": "assay.stats.metrics",
    "stderr": "assay.stats.metrics",
    "value_to_float": "assay.stats.score",
    "var": "assay.stats.metrics",
}

__all__ = [
    "CORRECT",
    "GroupedMetricFn",
    "INCORRECT",
    "MetricFn",
    "NOANSWER",
    "PARTIAL",
    "Reducer",
    "SampleScore",
    "Score",
    "ScoreEvaluator",
    "ScoreFrame",
    "Value",
    "ValueMapping",
    "accuracy",
    "aggregate",
    "at_least",
    "bootstrap_means",
    "bootstrap_stderr",
    "categorical",
    "ci",
    "ci_wilson",
    "clustered_stderr",
    "collect",
    "evaluate_scores",
    "frequency",
    "get_metric",
    "get_reducer",
    "grouped",
    "krippendorff_alpha",
    "majority",
    "max_score",
    "mean",
    "mean_record",
    "mean_score",
    "median_score",
    "metric",
    "metric_from_spec",
    "mode_score",
    "pass_at",
    "pass_at_k",
    "pass_hat_k",
    "pass_k",
    "perplexity_per_seq",
    "perplexity_per_token",
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

if TYPE_CHECKING:
    from assay.stats.agreement import krippendorff_alpha
    from assay.stats.categorical import aggregate, categorical, frequency
    from assay.stats.compute import (
        bootstrap_means,
        clustered_stderr,
        pass_at_k,
        pass_hat_k,
    )
    from assay.stats.evaluator import ScoreEvaluator, evaluate_scores
    from assay.stats.frame import ScoreFrame
    from assay.stats.grouped import GroupedMetricFn, grouped, metric_from_spec
    from assay.stats.means import mean_record
    from assay.stats.metric_registry import (
        MetricFn,
        get_metric,
        metric,
        registered_metrics,
    )
    from assay.stats.metrics import (
        accuracy,
        bootstrap_stderr,
        ci,
        ci_wilson,
        mean,
        std,
        stderr,
        var,
    )
    from assay.stats.panel import collect, majority
    from assay.stats.perplexity import perplexity_per_seq, perplexity_per_token
    from assay.stats.reducer_registry import (
        Reducer,
        get_reducer,
        reduce_scores,
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
    from assay.stats.score import (
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


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)


class _Package(_types.ModuleType):
    """Two exported functions share their module's name (``grouped``, ``categorical``):
    importing the module must not bind the module over the function's lazy name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, _types.ModuleType) and _WHERE.get(name) == value.__name__:
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
