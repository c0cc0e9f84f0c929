"""The suites' and pairwise's declarations (issue 35 items 3 and 4): ``config()`` derived from
the declared options is exactly the hand-written one it replaced (the expected dicts below
were printed by the code before the change, keys in their order), errors name the option
(API) or the flag (suite options), and the lists that used to be written out are the
tables'."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import InvalidInputError
from assay.llm.pairwise.declared import METRICS as PAIRWISE
from assay.llm.pairwise.evaluator import PairwiseEvaluator
from assay.llm.slicing import SlicedEvaluator
from assay.llm.suites.average import AVERAGED
from assay.llm.suites.cat import CATEvaluator
from assay.llm.suites.declared import CAT, FAIRNESS, LANGUAGE
from assay.llm.suites.fairness_metrics import LLMFairnessEvaluator
from assay.llm.suites.language import LanguageEvaluator

CI = {"ci_method": "bootstrap", "num_bootstrap": 1000}

CONFIGS: list[tuple[type, dict[str, Any], dict[str, Any]]] = [
    (CATEvaluator, {}, {"dataset": None}),
    (CATEvaluator, {"dataset": "d", "ci": 0.9}, {"dataset": "d", "ci": 0.9, **CI, "seed": 0}),
    (
        CATEvaluator,
        {"ci": 0.8, "ci_method": "wilson", "num_bootstrap": 50, "seed": 4},
        {"dataset": None, "ci": 0.8, "ci_method": "wilson", "num_bootstrap": 50, "seed": 4},
    ),
    (LanguageEvaluator, {"dataset": "x"}, {"dataset": "x"}),
    (
        LanguageEvaluator,
        {"ci": 0.95, "ci_method": "t"},
        {"dataset": None, "ci": 0.95, "ci_method": "t", "num_bootstrap": 1000, "seed": 0},
    ),
    (LLMFairnessEvaluator, {}, {"group_column": "group", "groups": ["0", "1"]}),
    (
        LLMFairnessEvaluator,
        {"group_column": "male", "groups": ["0", "1"], "ci": 0.9, "seed": 7},
        {"group_column": "male", "groups": ["0", "1"], "ci": 0.9, **CI, "seed": 7},
    ),
    (
        LLMFairnessEvaluator,
        {"groups": ("a", "b"), "num_bootstrap": 20},
        {"group_column": "group", "groups": ["a", "b"]},
    ),
]

BASE = {"reference_model": "r", "nopt": 2, "l2": 0.01}
PAIRWISE_CONFIGS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {**BASE, "ci": None, **CI, "seed": 0, "by": []}),
    ({"ci": 0.9, "by": "task"}, {**BASE, "ci": 0.9, **CI, "seed": 0, "by": ["task"]}),
    (
        {"nopt": 3, "l2": 0.5, "ci": 0.8, "ci_method": "wilson", "num_bootstrap": 20, "seed": 3,
         "by": ["task", "topic"], "cluster": "doc"},
        {"reference_model": "r", "nopt": 3, "l2": 0.5, "ci": 0.8, "ci_method": "wilson",
         "num_bootstrap": 20, "seed": 3, "by": ["task", "topic"], "cluster": "doc"},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "given", "expected"), CONFIGS)
def test_suite_config_is_unchanged(cls: type, given: dict[str, Any], expected: dict) -> None:
    got = cls(**given).config()
    assert got == expected and list(got) == list(expected)


@pytest.mark.parametrize(("given", "expected"), PAIRWISE_CONFIGS)
def test_pairwise_config_is_unchanged(given: dict[str, Any], expected: dict) -> None:
    got = PairwiseEvaluator(reference_model="r", **given).config()
    assert got == expected and list(got) == list(expected)


def test_a_removed_pairwise_name_is_refused_naming_its_replacement() -> None:
    with pytest.raises(TypeError, match="use ci="):
        PairwiseEvaluator(reference_model="r", confidence=0.9)


def test_sliced_config_names_the_wrapped_evaluator() -> None:
    ev = SlicedEvaluator(evaluator=CATEvaluator, config={"dataset": "d"}, by=["site"], ci=0.9)
    assert ev.config() == {
        "evaluator": "assay.llm.suites.cat.CATEvaluator",
        "config": {"dataset": "d"},
        "by": ["site"],
        "ci": 0.9,
        "ci_method": "bootstrap",
        "num_bootstrap": 1000,
        "seed": 0,
    }
    assert SlicedEvaluator(**ev.config()).cls is CATEvaluator


def test_bad_groups_name_the_option() -> None:
    with pytest.raises(InvalidInputError, match="two group values") as e:
        LLMFairnessEvaluator(groups=["a", "b", "c"])
    assert e.value.source == "groups"


def test_suite_options_name_the_flags() -> None:
    from assay.llm.suites.api import sample_file
    from assay.llm.suites.cat import CATSuite

    for given, flag in (
        ({"max_queries": -1}, "--max-queries"),
        ({"max_tokens": 0}, "--max-tokens"),
        ({"answer_mode": "logits"}, "--answer-mode"),
    ):
        with pytest.raises(InvalidInputError) as e:
            CATSuite(sample_file("cat"), **given)
        assert e.value.source == flag


def test_the_lists_are_the_tables() -> None:
    assert CATEvaluator.kinds == ("LMS", "SS", "ICAT")
    assert LanguageEvaluator.kinds == ("FormatErrorRate", "Accuracy", "AccuracyOnValid")
    assert AVERAGED == tuple(t for t in FAIRNESS.types if t != "ResponseCounts")
    assert PAIRWISE.with_interval("wilson") == ("ExtractionRate", "ConsistencyRate")
    assert "Accuracy" in FAIRNESS and "Accuracy" in LANGUAGE and "Accuracy" not in CAT


def test_the_pairwise_task_checks_its_options_by_the_evaluators_declaration() -> None:
    from assay.llm.pairwise.task import PairwiseTask
    from assay.testing.pairwise import make_table

    t = make_table(["quality"] * 3, {"m1": [1, 2, 3], "ref": [2] * 3})
    kw: dict[str, Any] = {"models": ["m1"], "reference_model": "ref"}
    for given, flag in (
        ({"nopt": 5}, "--nopt"),
        ({"ci": 1.5}, "--ci"),
        ({"num_bootstrap": 1}, "--num-bootstrap"),
        ({"cluster": "topic"}, "--cluster"),
        ({"bootstrap_seed": -1}, "--bootstrap-seed"),
    ):
        with pytest.raises(InvalidInputError) as e:
            PairwiseTask(t, **kw, **given)
        assert e.value.source == flag, given
    task = PairwiseTask(t, **kw, num_bootstrap=20, seed=-7)
    assert task.intervals["num_bootstrap"] == 20 and task.intervals["seed"] == 7
