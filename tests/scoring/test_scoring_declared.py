"""The scoring declarations (assay.scoring.declared): the options validated once, config()
derived from them and equal, key for key and in order, to the hand-written config() it
replaced (the expected dicts below are that config()'s output), and the metric table."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import InvalidInputError
from assay.scoring.declared import METRICS, OPTIONS
from assay.scoring.evaluator import ScoringEvaluator

_BASE = {
    "human": "h",
    "system": "m",
    "human2": [],
    "group_columns": [],
    "exclude_zero_scores": True,
    "rater_error_variance": None,
    "base_groups": {},
    "smd_method": "unpooled",
    "use_diff_std_means": False,
    "population_means": {},
    "population_sds": {},
}

CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, _BASE),
    (
        {
            "human2": "h2",
            "group_columns": "g",
            "exclude_zero_scores": False,
            "rater_error_variance": 0.5,
        },
        _BASE
        | {
            "human2": ["h2"],
            "group_columns": ["g"],
            "exclude_zero_scores": False,
            "rater_error_variance": 0.5,
        },
    ),
    (
        {"human2": ["h2", "h3"], "group_columns": ["g", "g", "k"], "base_groups": {"g": "a"}},
        _BASE | {"human2": ["h2", "h3"], "group_columns": ["g", "k"], "base_groups": {"g": "a"}},
    ),
    (
        {"smd_method": "Williamson", "population_sds": {"h": 1, "m": 2, "m_round": 2}},
        _BASE
        | {"smd_method": "williamson", "population_sds": {"h": 1.0, "m": 2.0, "m_round": 2.0}},
    ),
    (
        {"use_diff_std_means": True, "population_means": {"h": 2}, "population_sds": {"h": 1}},
        _BASE
        | {
            "use_diff_std_means": True,
            "population_means": {"h": 2.0},
            "population_sds": {"h": 1.0},
        },
    ),
    (
        {
            "by": ["g"],
            "ci": 0.9,
            "ci_method": "bca",
            "num_bootstrap": 200,
            "seed": 3,
            "cluster": "c",
        },
        _BASE
        | {
            "by": ["g"],
            "ci": 0.9,
            "ci_method": "bca",
            "num_bootstrap": 200,
            "seed": 3,
            "cluster": "c",
        },
    ),
    (
        {"by": "g", "ci": 0.95},
        _BASE
        | {"by": ["g"], "ci": 0.95, "ci_method": "bootstrap", "num_bootstrap": 1000, "seed": 0},
    ),
    ({"rater_error_variance": 2}, _BASE | {"rater_error_variance": 2}),
]


@pytest.mark.parametrize(("given", "expected"), CASES)
def test_config_is_the_hand_written_one(given: dict[str, Any], expected: dict[str, Any]) -> None:
    config = ScoringEvaluator(human="h", system="m", **given).config()
    assert config == expected
    assert list(config) == list(expected)  # the stored JSON keeps its key order
    assert type(config.get("rater_error_variance")) is type(expected["rater_error_variance"])


def test_subgroups_is_refused_naming_group_columns() -> None:
    with pytest.raises(TypeError, match="group_columns"):
        ScoringEvaluator(human="h", system="m", subgroups=["g"])


@pytest.mark.parametrize(
    ("given", "source", "words"),
    [
        ({"smd_method": "cohen"}, "smd_method", "method must be"),
        ({"rater_error_variance": -1}, "rater_error_variance", "must be a number >= 0"),
        ({"population_sds": {"zz": 1}}, "population_sds", "unknown score column"),
        ({"smd_method": "johnson"}, "population_sds", "requires population_sds"),
        ({"human": 3}, "human", "must be non-empty text"),
        ({"cluster": "c"}, "cluster", "give ci too"),
    ],
)
def test_bad_options_name_the_option(given: dict[str, Any], source: str, words: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        ScoringEvaluator(**({"human": "h", "system": "m"} | given))
    assert e.value.source == source and words in e.value.reason


def test_table_holds_the_sliced_and_interval_types() -> None:
    from assay.scoring.columns import METRIC_TYPES, SLICE_COLUMNS

    assert set(METRICS.sliced) == {METRIC_TYPES[c] for c in SLICE_COLUMNS} | {"PRMSE"}
    assert set(METRIC_TYPES.values()) <= set(METRICS.types)
    assert "OverallScoreAccuracyPValue" in METRICS and not METRICS["NDropped"].intervals
    assert OPTIONS["group_columns"].flag == "--subgroup"


def test_interval_and_slice_columns_are_read_from_the_table() -> None:
    """The tally's column lists, derived from the table's interval and sliced types, are
    the lists the records were pinned with (their order is the records' order)."""
    from assay.scoring import tally
    from assay.scoring.columns import SLICE_COLUMNS
    from assay.scoring.fairness_fits import FAIRNESS_CI_TYPES

    ci = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr")
    assert tally.CI_COLUMNS == (*ci, "SMD", "RMSE")
    assert tally.BY_COLUMNS == (*ci, "DSM", "RMSE")
    assert SLICE_COLUMNS == (*ci, "SMD", "DSM", "RMSE")
    assert tally.TRUE_CI_COLUMNS == (
        "Variance of errors",
        "True score var",
        "MSE true",
        "PRMSE true",
    )
    consistency = ("corr", "wtkappa", "kappa", "exact_agr", "adj_agr")
    assert tally.CONSISTENCY_CI_COLUMNS == (*consistency, "SMD")
    assert tally.BY_CONSISTENCY_COLUMNS == (*consistency, "DSM")
    assert FAIRNESS_CI_TYPES == (
        "OverallScoreAccuracy",
        "OverallScoreDifference",
        "ConditionalScoreDifference",
    )
