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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.llm.suites.average import average_fairness
from assay.llm.suites.base import Call, Prepared, Suite, SuiteResult, run_suite
from assay.llm.suites.cat import CATEvaluator, CATSuite
from assay.llm.suites.fairness import FairnessSuite, load_fairness_data
from assay.llm.suites.fairness_metrics import LLMFairnessEvaluator
from assay.llm.suites.language import LanguageEvaluator, LanguageSuite

__all__ = [
    "CATEvaluator",
    "CATSuite",
    "Call",
    "FairnessSuite",
    "LLMFairnessEvaluator",
    "LanguageEvaluator",
    "LanguageSuite",
    "Prepared",
    "Suite",
    "SuiteResult",
    "average_fairness",
    "load_fairness_data",
    "run_cat",
    "run_fairness",
    "run_language",
    "run_suite",
]


def run_cat(
    data: str | Path, model: Any = None, *, max_queries: int = 0, seed: int = 1, **run: Any
) -> SuiteResult:
    """Context association tests over a StereoSet ``dev.json`` (``run``: :func:`run_suite`)."""
    return run_suite(CATSuite(str(data), max_queries=max_queries, seed=seed), model, **run)


def run_fairness(
    dataset: str | Path = "pisa",
    model: Any = None,
    *,
    train: str | Path | None = None,
    test: str | Path | None = None,
    raw: Sequence[str | Path] = (),
    sample: bool = False,
    max_queries: int = 0,
    seed: int = 1,
    **run: Any,
) -> SuiteResult:
    """LLM fairness with counterfactuals on a dataset (``pisa``, ``compas`` or a TOML file)."""
    data = load_fairness_data(dataset, train=train, test=test, raw=raw, sample=sample)
    return run_suite(FairnessSuite(data, max_queries=max_queries, seed=seed), model, **run)


def run_language(
    data: str | Path,
    model: Any = None,
    *,
    languages: Sequence[str] | None = None,
    max_queries: int = 0,
    seed: int = 1,
    **run: Any,
) -> SuiteResult:
    """Language exams over a Kaleidoscope-style CSV."""
    suite = LanguageSuite(data, languages=languages, max_queries=max_queries, seed=seed)
    return run_suite(suite, model, **run)
