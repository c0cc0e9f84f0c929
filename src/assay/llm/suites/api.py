"""The Python entry points that mirror ``assay llm cat|fairness|language``.

Every suite runs on a small sample shipped with assay (``sample=True``, ``--sample``):
``cat_dev.sample.json`` (StereoSet's ``dev.json`` format), ``exam.sample.csv`` (the
Kaleidoscope exams' columns) and the PISA/COMPAS split samples; their sources and terms are
in ``assay/llm/suites/data/README.md``. Real numbers need the real files.

Example:
    >>> sample_file("cat").name
    'cat_dev.sample.json'
    >>> suite_data(None, sample=False, suite="language")
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: --data: give a data file, or --sample ...
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.suites.base import SuiteResult, run_suite
from assay.llm.suites.cat import CATSuite
from assay.llm.suites.fairness import FairnessSuite, load_fairness_data
from assay.llm.suites.language import LanguageSuite

__all__ = ["run_cat", "run_fairness", "run_language", "sample_file", "suite_data", "SAMPLES"]

#: The sample shipped with assay for each suite that reads one data file.
SAMPLES = {"cat": "cat_dev.sample.json", "language": "exam.sample.csv"}


def sample_file(suite: str) -> Path:
    """The sample data file shipped with assay for ``suite`` (``cat`` or ``language``)."""
    from importlib import resources

    res = resources.files("assay.llm.suites").joinpath("data", SAMPLES[suite])
    return Path(str(res))


def suite_data(data: str | Path | None, *, sample: bool, suite: str) -> str:
    """The data file of a run: ``data``, or the shipped sample with ``sample=True``."""
    if sample and data is not None:
        raise InvalidInputError("give a data file or --sample, not both", source="--data")
    if sample:
        return str(sample_file(suite))
    if data is None:
        raise InvalidInputError(
            "give a data file, or --sample for the one shipped with assay", source="--data"
        )
    return str(data)


def run_cat(
    data: str | Path | None = None,
    model: Any = None,
    *,
    sample: bool = False,
    max_queries: int = 0,
    seed: int = 1,
    **run: Any,
) -> SuiteResult:
    """Context association tests over a StereoSet ``dev.json`` (or the shipped sample with
    ``sample=True``); ``run``: :func:`run_suite`'s options."""
    path = suite_data(data, sample=sample, suite="cat")
    return run_suite(CATSuite(path, max_queries=max_queries, seed=seed), model, **run)


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
    data: str | Path | None = None,
    model: Any = None,
    *,
    sample: bool = False,
    languages: Sequence[str] | None = None,
    max_queries: int = 0,
    seed: int = 1,
    **run: Any,
) -> SuiteResult:
    """Language exams over a Kaleidoscope-style CSV (or the shipped sample, ``sample=True``)."""
    path = suite_data(data, sample=sample, suite="language")
    suite = LanguageSuite(path, languages=languages, max_queries=max_queries, seed=seed)
    return run_suite(suite, model, **run)
