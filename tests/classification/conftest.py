"""Classification fixtures (the data builder is tests/classification/classkit.py)."""

import pytest
from classkit import make_multiclass


@pytest.fixture
def multiclass():
    return make_multiclass(600, 5, seed=7)
