"""The docstring examples of assay.scoring run and give the values shown."""

import doctest

import pytest

import assay.scoring.compute
import assay.scoring.evaluator
import assay.scoring.fairness
import assay.scoring.stats
import assay.scoring.types

MODULES = [assay.scoring.compute, assay.scoring.evaluator, assay.scoring.fairness, assay.scoring.stats, assay.scoring.types]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
