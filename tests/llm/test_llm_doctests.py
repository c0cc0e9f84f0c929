"""The examples in the LLM runtime's and the store's docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "assay.llm.models.base",
    "assay.llm.models.spec",
    "assay.llm.models.openai_compat",
    "assay.llm.cache",
    "assay.llm.runner",
    "assay.store.config",
    "assay.store.store",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
