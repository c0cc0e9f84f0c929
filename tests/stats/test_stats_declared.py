"""The stats declarations (assay.stats.declared): the built-in metric types are the
``@metric`` registry's built-ins, and ScoreEvaluator's config() derived from its options
equals, key for key and in order, the hand-written one it replaced (the expected dicts
below are that config()'s output)."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import InvalidInputError
from assay.stats import ScoreEvaluator, accuracy, grouped, mean, stderr
from assay.stats.metric_registry import _REGISTRY, BUILTIN_MODULES, load_builtins
from assay.stats.metric_types import METRICS

_DEFAULT_METRICS = [
    {"metric": "Mean", "params": {}},
    {"metric": "Stderr", "params": {"cluster": None}},
]


def test_the_registry_built_ins_are_the_table() -> None:
    load_builtins()
    built_in = {
        name for name, factory in _REGISTRY.items() if factory.__module__ in BUILTIN_MODULES
    }
    assert built_in == set(METRICS.types)
    for entry in METRICS:
        assert METRICS.builder(entry.type).metric_name == entry.type  # type: ignore[attr-defined]


def test_default_metrics_are_the_table_defaults() -> None:
    assert [m.name for m in ScoreEvaluator().metrics] == list(METRICS.defaults)


CASES: list[tuple[Any, dict[str, Any]]] = [
    ({}, {"metrics": _DEFAULT_METRICS, "reducers": ["mean"]}),
    (
        {"metrics": [accuracy(), stderr(cluster="doc")], "reducers": ["mean", "pass_at_2"]},
        {
            "metrics": [
                {"metric": "Accuracy", "params": {"partial_credit": True}},
                {"metric": "Stderr", "params": {"cluster": "doc"}},
            ],
            "reducers": ["mean", "pass_at_2"],
        },
    ),
    (
        {
            "metrics": "accuracy",
            "reducers": "mode",
            "to_float": {"correct": "pass", "incorrect": "fail"},
        },
        {
            "metrics": [{"metric": "Accuracy", "params": {"partial_credit": True}}],
            "reducers": ["mode"],
            "to_float": {"correct": "pass", "incorrect": "fail", "partial": "P", "noanswer": "N"},
        },
    ),
    (
        {"metrics": [grouped(mean(), "topic")], "ci": 0.9, "ci_method": "t"},
        {
            "metrics": [
                {
                    "metric": "Mean",
                    "params": {},
                    "grouped": {
                        "group_column": "topic",
                        "all": "samples",
                        "all_label": "all",
                        "name_template": "{group_name}",
                    },
                }
            ],
            "reducers": ["mean"],
            "ci": 0.9,
            "ci_method": "t",
            "num_bootstrap": 1000,
            "seed": 0,
            "cluster": None,
        },
    ),
    (
        {"ci": 0.95, "cluster": "doc", "ci_method": "wilson", "num_bootstrap": 300, "seed": 2},
        {
            "metrics": _DEFAULT_METRICS,
            "reducers": ["mean"],
            "ci": 0.95,
            "ci_method": "wilson",
            "num_bootstrap": 300,
            "seed": 2,
            "cluster": "doc",
        },
    ),
]


@pytest.mark.parametrize(("given", "expected"), CASES)
def test_config_is_the_hand_written_one(given: dict[str, Any], expected: dict[str, Any]) -> None:
    config = ScoreEvaluator(**given).config()
    assert config == expected
    assert list(config) == list(expected)


def test_options_by_position_are_checked_too() -> None:
    ev = ScoreEvaluator([accuracy()], ["mean"])
    assert ev.config()["metrics"] == [{"metric": "Accuracy", "params": {"partial_credit": True}}]
    with pytest.raises(InvalidInputError) as e:
        ScoreEvaluator(3)
    assert e.value.source == "metrics" and "must be" in e.value.reason
    with pytest.raises(TypeError, match="twice"):
        ScoreEvaluator([accuracy()], metrics=[mean()])
    with pytest.raises(TypeError, match="positional"):
        ScoreEvaluator(None, None, None, 0.9)


@pytest.mark.parametrize(
    ("given", "source", "words"),
    [
        ({"reducers": []}, "reducers", "needs at least one reducer"),
        ({"to_float": {"correct": [1]}}, "to_float", "a sentinel must be a scalar"),
        ({"cluster": "doc"}, "cluster", "give ci too"),
        ({"metrics": "no_such"}, "metrics", "unknown metric"),
    ],
)
def test_bad_options_name_the_option(given: dict[str, Any], source: str, words: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        ScoreEvaluator(**given)
    assert e.value.source == source and words in e.value.reason
