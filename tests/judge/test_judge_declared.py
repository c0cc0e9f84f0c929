"""The judge's declarations (issue 35 items 3 and 4): the metric table, the evaluator's
options and their stored configuration, and the hint an old option name gets."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInputError
from assay.llm.judge import JUDGE_METRICS, Datum, judge, registered
from assay.llm.judge.declared import METRICS
from assay.llm.judge.evaluator import JudgeEvaluator
from assay.llm.judge.registry import get_metric

#: config() of several configurations as the hand-written config() gave it (commit
#: f863595), in its order: the declared options must store exactly this.
CONFIGS = [
    ({"metrics": ["bias"]}, {"metrics": ["bias"], "num_bootstrap": 1000, "seed": 0}),
    (
        {"metrics": ["bias", "faithfulness", "bias"], "ci": 0.9, "ci_method": "t",
         "by": ["a", "a"], "cluster": "c", "seed": 2, "num_bootstrap": 40},
        {"metrics": ["bias", "faithfulness"], "num_bootstrap": 40, "seed": 2, "ci": 0.9,
         "ci_method": "t", "cluster": "c", "by": ["a"]},
    ),
    (
        {"metrics": ["coherence"], "by": ["x"]},
        {"metrics": ["coherence"], "num_bootstrap": 1000, "seed": 0, "by": ["x"]},
    ),
    (
        {"metrics": ["hallucination"], "ci": 0.5, "ci_method": "delong"},
        {"metrics": ["hallucination"], "num_bootstrap": 1000, "seed": 0, "ci": 0.5,
         "ci_method": "delong"},
    ),
]  # fmt: skip


@pytest.mark.parametrize("given, stored", CONFIGS)
def test_declared_config_is_the_hand_written_one(given: dict, stored: dict) -> None:
    got = JudgeEvaluator(**given).config()
    assert got == stored and list(got) == list(stored)


def test_the_table_is_the_registry_and_the_types() -> None:
    assert JUDGE_METRICS == METRICS.families == tuple(registered())
    assert [get_metric(f).type for f in METRICS.families] == list(METRICS.types)
    assert METRICS.defaults == ()  # a judge metric is always asked for by name


@pytest.mark.parametrize(
    "metrics, needle",
    [
        (["fluency"], "unknown judge metric 'fluency'"),
        ([], "needs at least one judge metric"),
        ("bias", "must be a list of judge metric names"),
    ],
)
def test_the_metrics_are_checked_naming_the_option(metrics: object, needle: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        JudgeEvaluator(metrics=metrics)
    assert e.value.source == "metrics" and needle in e.value.reason


def test_the_old_concurrency_name_gets_a_hint_not_a_type_error() -> None:
    """``max_concurrency`` was renamed ``concurrency``: the judge refuses it naming the new
    one, before any model is loaded; the evaluator refuses an unknown option by name."""
    data = [Datum("d1", prediction="The sky is blue.")]
    with pytest.raises(InvalidInputError, match="max_concurrency= was renamed; use concurrency="):
        judge(data, ["bias"], max_concurrency=3)
    with pytest.raises(InvalidInputError, match="unknown option 'max_concurrency'"):
        JudgeEvaluator(metrics=["bias"], max_concurrency=3)  # type: ignore[call-arg]
    with pytest.raises(InvalidInputError, match=r"did you mean 'num_bootstrap'\?"):
        JudgeEvaluator(metrics=["bias"], num_bootstraps=3)  # type: ignore[call-arg]


def test_a_registered_metric_is_accepted_by_name() -> None:
    """``register`` adds a metric at run time: ``metrics=`` accepts its name too."""
    from dataclasses import replace

    from assay.llm.judge import register, registry
    from assay.llm.judge.declared import REGISTERED

    with pytest.raises(InvalidInputError, match="unknown judge metric 'my_bias'"):
        JudgeEvaluator(metrics=["my_bias"])
    register(replace(get_metric("bias"), name="my_bias", type="MyBias"))
    try:
        assert JudgeEvaluator(metrics=["my_bias", "bias"]).types == ("MyBias", "Bias")
        assert registered()[-1] == "my_bias" == REGISTERED[-1]
    finally:
        registry._REGISTRY.pop("my_bias")
        REGISTERED.remove("my_bias")
