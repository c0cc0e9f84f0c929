"""The examples in the stats docstrings run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "assay.stats",
    "assay.stats.types",
    "assay.stats.compute",
    "assay.stats.metrics",
    "assay.stats.reducers",
    "assay.stats.evaluator",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
