"""The Python entry points that mirror ``assay llm cat|fairness|language``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.llm.suites.base import SuiteResult, run_suite
from assay.llm.suites.cat import CATSuite
from assay.llm.suites.fairness import FairnessSuite, load_fairness_data
from assay.llm.suites.language import LanguageSuite

__all__ = ["run_cat", "run_fairness", "run_language"]


def run_cat(
    data: str | Path,
    model: Any = None,
    *,
    max_queries: int = 0,
    seed: int = 1,
    answer_mode: str | None = None,
    **run: Any,
) -> SuiteResult:
    """Context association tests over a StereoSet ``dev.json`` (``run``: :func:`run_suite`).

    ``answer_mode``: ``generate``, ``loglik`` or ``loglik_norm``; ``None``: ``loglik`` for
    a model that gives log-probabilities, else ``generate`` (docs/suites.md).
    """
    suite = CATSuite(str(data), max_queries=max_queries, seed=seed, answer_mode=answer_mode)
    return run_suite(suite, model, **run)


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
    answer_mode: str | None = None,
    **run: Any,
) -> SuiteResult:
    """LLM fairness with counterfactuals on a dataset (``pisa``, ``compas`` or a TOML file)."""
    data = load_fairness_data(dataset, train=train, test=test, raw=raw, sample=sample)
    suite = FairnessSuite(data, max_queries=max_queries, seed=seed, answer_mode=answer_mode)
    return run_suite(suite, model, **run)


def run_language(
    data: str | Path,
    model: Any = None,
    *,
    languages: Sequence[str] | None = None,
    max_queries: int = 0,
    seed: int = 1,
    answer_mode: str | None = None,
    **run: Any,
) -> SuiteResult:
    """Language exams over a Kaleidoscope-style CSV."""
    suite = LanguageSuite(
        data, languages=languages, max_queries=max_queries, seed=seed, answer_mode=answer_mode
    )
    return run_suite(suite, model, **run)
