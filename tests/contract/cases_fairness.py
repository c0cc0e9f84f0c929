"""Contract cases for the fairness evaluator's crossed groups and sample weights, with and
without intervals (the privileged-definition and single-column cases are in
``cases_classification.py``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.fairness import FairnessEvaluator
from contract import ContractCase


def _batches(weighted: bool) -> list[pd.DataFrame]:
    rng = np.random.default_rng(11)
    out = []
    for n in (50, 9, 30):
        df = pd.DataFrame(
            {
                "y": rng.integers(0, 2, n),
                "yhat": rng.integers(0, 2, n),
                "sex": rng.choice(["F", "M"], n),
                "race": rng.choice(["a", "b", "c"], n),
                "age": rng.choice([20, 40, 60], n),
            }
        )
        df["w"] = rng.uniform(0.0, 2.0, n).round(2) if weighted else 1.0
        out.append(df)
    return out


def _concat(batches: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(batches, ignore_index=True)


CASES = [
    ContractCase(
        name="fairness-crossed-weighted",
        make=lambda: FairnessEvaluator(group_columns=[("sex", "race"), "age"], zero_division=0),
        make_other=lambda: FairnessEvaluator(group_columns=[("sex", "race", "age")]),
        batches=_batches(True),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat", sample_weight="w"),
    ),
    ContractCase(
        name="fairness-control-ci",
        make=lambda: FairnessEvaluator(
            group_columns=["sex"], control_columns=["race"], ci=0.9, num_bootstrap=20
        ),
        make_other=lambda: FairnessEvaluator(
            group_columns=["sex"], control_columns=["race"], ci=0.9, num_bootstrap=21
        ),
        batches=_batches(False),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat"),
    ),
    ContractCase(
        name="fairness-crossed-three-columns",
        make=lambda: FairnessEvaluator(group_columns=[("sex", "race", "age")], method="to_overall"),
        make_other=lambda: FairnessEvaluator(group_columns=[("race", "sex", "age")]),
        batches=_batches(False),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat"),
    ),
    ContractCase(
        name="fairness-control-weighted",
        make=lambda: FairnessEvaluator(group_columns=["sex"], control_columns=["race", "age"]),
        make_other=lambda: FairnessEvaluator(group_columns=["sex"], control_columns=["race"]),
        batches=_batches(True),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat", sample_weight="w"),
    ),
    ContractCase(
        name="fairness-by-ci",
        make=lambda: FairnessEvaluator(
            ["sex=F"], group_columns=["sex"], by=["race", "age"], ci=0.9, num_bootstrap=15
        ),
        make_other=lambda: FairnessEvaluator(
            ["sex=F"], group_columns=["sex"], by=["race"], ci=0.9, num_bootstrap=15
        ),
        batches=_batches(False),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat"),
    ),
    ContractCase(
        name="fairness-cluster-race-by-ci",
        make=lambda: FairnessEvaluator(
            ["sex=F"], group_columns=["sex"], by=["age"], ci=0.9, num_bootstrap=15, cluster="race"
        ),
        make_other=lambda: FairnessEvaluator(
            ["sex=F"], group_columns=["sex"], by=["age"], ci=0.9, num_bootstrap=15, cluster="age"
        ),
        batches=_batches(False),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat"),
    ),
    ContractCase(
        name="fairness-by-weighted",
        make=lambda: FairnessEvaluator(["age:30"], group_columns=[("sex", "race")], by=["age"]),
        make_other=lambda: FairnessEvaluator(["age:30"], group_columns=[("sex", "race")]),
        batches=_batches(True),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat", sample_weight="w"),
    ),
    ContractCase(
        name="fairness-weighted-ci-by",
        make=lambda: FairnessEvaluator(
            ["sex=F", "age:30"],
            group_columns=[("sex", "race")],
            by=["age"],
            ci=0.9,
            num_bootstrap=15,
        ),  # fmt: skip
        make_other=lambda: FairnessEvaluator(
            ["sex=F", "age:30"],
            group_columns=[("sex", "race")],
            by=["age"],
            ci=0.9,
            num_bootstrap=15,
            seed=1,
        ),  # fmt: skip
        batches=_batches(True),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat", sample_weight="w"),
    ),
    ContractCase(
        name="fairness-mean-ci",
        make=lambda: FairnessEvaluator(["sex=F", "age:30", "race=a"], ci=0.9, num_bootstrap=20),
        make_other=lambda: FairnessEvaluator(["sex=F", "age:30"], ci=0.9, num_bootstrap=20),
        batches=_batches(False),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat"),
    ),
    ContractCase(
        name="fairness-cluster-weighted-mean-ci",
        make=lambda: FairnessEvaluator(
            ["sex=F", "age:30"], group_columns=["sex"], ci=0.9, num_bootstrap=15, cluster="race"
        ),
        make_other=lambda: FairnessEvaluator(
            ["sex=F", "age:30"], group_columns=["sex"], ci=0.9, num_bootstrap=15
        ),
        batches=_batches(True),
        concat=_concat,
        add=lambda ev, b: ev.add(b, label="y", prediction="yhat", sample_weight="w"),
    ),
]
