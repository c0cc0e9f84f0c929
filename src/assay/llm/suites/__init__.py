"""LLM bias and language suites: context association tests, LLM fairness with counterfactuals,
language exams, and the average of fairness evaluations.

Every suite has one shape (:mod:`assay.llm.suites.base`): data -> prompts (versioned
template files) -> the shared runner -> parsed answers -> an evaluator's metric records.
The ``run_*`` functions mirror ``assay llm cat|fairness|language`` and return a
:class:`SuiteResult` (``.metrics``, the :class:`~assay.results.MetricSet`, and ``.calls``,
one record per model call).

Example:
    >>> from assay.llm.suites import run_cat                       # doctest: +SKIP
    >>> result = run_cat("dev.json", model="embedded", max_queries=20)  # doctest: +SKIP
    >>> result.metrics.get("ICAT", scope="general").value           # doctest: +SKIP
"""

from __future__ import annotations

from assay._lazy import lazy_exports

_EXPORTS = {
    "CATEvaluator": "assay.llm.suites.cat",
    "CATSuite": "assay.llm.suites.cat",
    "Call": "assay.llm.task",
    "FairnessSuite": "assay.llm.suites.fairness",
    "LLMFairnessEvaluator": "assay.llm.suites.fairness_metrics",
    "LanguageEvaluator": "assay.llm.suites.language",
    "LanguageSuite": "assay.llm.suites.language",
    "Prepared": "assay.llm.task",
    "Suite": "assay.llm.suites.base",
    "SuiteResult": "assay.llm.suites.base",
    "average_fairness": "assay.llm.suites.average",
    "load_fairness_data": "assay.llm.suites.fairness",
    "run_cat": "assay.llm.suites.api",
    "run_fairness": "assay.llm.suites.api",
    "run_language": "assay.llm.suites.api",
    "run_suite": "assay.llm.suites.base",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
