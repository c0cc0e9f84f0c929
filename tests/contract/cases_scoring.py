"""Scoring evaluators in the contract test (``tests/test_evaluator_contract.py``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.scoring import ScoringEvaluator
from contract import ContractCase


def _frame(seed: int, n: int, half_points: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    if half_points:
        h = h + 0.5 * (rng.random(n) < 0.3)
    h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2[rng.random(n) > 0.3] = np.nan
    return pd.DataFrame(
        {
            "h": h,
            "h2": h2,
            "m": t + rng.normal(0, 0.5, n),
            "g": rng.choice(["a", "b", "c"], n),
            "L1": rng.choice(["en", "es", None], n),
        }
    )


def _batches(seed: int, half_points: bool = False) -> list[pd.DataFrame]:
    # batches of different sizes, one without group "c": groups and shifts differ per batch
    df = _frame(seed, 360, half_points)
    first = df.iloc[:40]
    return [first[first["g"] != "c"], df.iloc[40:200], df.iloc[200:]]


def _concat(batches: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(batches, ignore_index=True)


CASES = [
    ContractCase(
        name="scoring-all-tables",
        make=lambda: ScoringEvaluator(
            human="h", system="m", human2="h2", group_columns=["g", "L1"]
        ),
        make_other=lambda: ScoringEvaluator(
            human="h", system="m", human2="h2", group_columns=["g"]
        ),
        batches=_batches(0),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-plain",
        make=lambda: ScoringEvaluator(human="h", system="m"),
        make_other=lambda: ScoringEvaluator(human="h", system="m", exclude_zero_scores=False),
        batches=_batches(1),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-ci",
        make=lambda: ScoringEvaluator(
            human="h", system="m", group_columns=["g"], ci=0.9, num_bootstrap=30
        ),
        make_other=lambda: ScoringEvaluator(
            human="h", system="m", group_columns=["g"], ci=0.9, num_bootstrap=30, seed=1
        ),
        batches=_batches(3),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-cluster-g-by-ci",
        make=lambda: ScoringEvaluator(
            human="h", system="m", human2="h2", by=["L1"], ci=0.9, num_bootstrap=20, cluster="g"
        ),
        make_other=lambda: ScoringEvaluator(human="h", system="m", ci=0.9, num_bootstrap=20),
        batches=_batches(3),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-fairness-consistency-by-ci-cluster",
        make=lambda: ScoringEvaluator(
            human="h",
            system="m",
            human2="h2",
            group_columns=["L1"],
            ci=0.9,
            num_bootstrap=20,
            cluster="g",
        ),  # fmt: skip
        make_other=lambda: ScoringEvaluator(
            human="h", system="m", human2="h2", group_columns=["L1"], ci=0.9, num_bootstrap=20
        ),
        batches=_batches(6),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-half-points-given-variance",
        make=lambda: ScoringEvaluator(
            human="h", system="m", group_columns=["g"], rater_error_variance=0.3
        ),
        make_other=lambda: ScoringEvaluator(
            human="h", system="m", group_columns=["g"], rater_error_variance=0.4
        ),
        batches=_batches(2, half_points=True),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-smd-options",
        make=lambda: ScoringEvaluator(
            human="h",
            system="m",
            human2="h2",
            use_diff_std_means=True,
            population_means={"h": 3.1, "h2": 3.0},
            population_sds={"h": 1.1, "h2": 1.2},
        ),
        make_other=lambda: ScoringEvaluator(
            human="h", system="m", human2="h2", smd_method="johnson", population_sds={"h": 1.1}
        ),
        batches=_batches(3),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-by-slices",
        make=lambda: ScoringEvaluator(human="h", system="m", human2="h2", by=["g", "L1"]),
        make_other=lambda: ScoringEvaluator(human="h", system="m", human2="h2", by=["g"]),
        batches=_batches(4),
        concat=_concat,
    ),
    ContractCase(
        name="scoring-by-slices-ci-bca-prmse",
        make=lambda: ScoringEvaluator(
            human="h",
            system="m",
            human2="h2",
            group_columns=["L1"],
            by=["g"],
            ci=0.9,
            ci_method="bca",
            num_bootstrap=30,
        ),
        make_other=lambda: ScoringEvaluator(
            human="h", system="m", human2="h2", group_columns=["L1"], by=["g"], ci=0.9
        ),
        batches=_batches(5),
        concat=_concat,
    ),
]
