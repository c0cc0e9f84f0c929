"""Contract cases of the pairwise evaluator (judged comparisons in batches)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.llm.pairwise import PairwiseEvaluator

from . import ContractCase


def _batch(rng: np.random.Generator, questions: range, models: Sequence[str]) -> dict[str, list]:
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "index", "model_a", "model_b", "task", "status", "choice", "length_a", "length_b",
            "topic",
        )
    }  # fmt: skip
    for q in questions:
        task = ["uml_class-general", "architecture_design-faithfulness"][q % 2]
        for m in models:
            for a, b in (("ref", m), (m, "ref")):
                status = rng.choice(["ok"] * 8 + ["em", "failed", "unparsed"])
                cols["index"].append(f"p{q}_{task}")
                cols["model_a"].append(a)
                cols["model_b"].append(b)
                cols["task"].append(task)
                cols["status"].append(str(status))
                cols["choice"].append(str(rng.choice(list("ABC"))) if status == "ok" else "")
                cols["length_a"].append(float(rng.integers(50, 500)))
                cols["length_b"].append(float(rng.integers(50, 500)))
                cols["topic"].append("abc"[q % 3])
    return cols


def _concat(batches: Sequence[dict[str, list]]) -> dict[str, list]:
    return {k: [v for b in batches for v in b[k]] for k in batches[0]}


_rng = np.random.default_rng(0)
# The two orders of one question may land in different batches: split by row, not question.
_all = _batch(_rng, range(24), ["m1", "m2", "m3"])
_cut = [0, 37, 90, len(_all["index"])]
_BATCHES = [{k: v[a:b] for k, v in _all.items()} for a, b in zip(_cut, _cut[1:])]

CASES = [
    ContractCase(
        name="pairwise",
        make=lambda: PairwiseEvaluator(reference_model="ref", nopt=3, num_bootstrap=30, seed=1),
        make_other=lambda: PairwiseEvaluator(
            reference_model="ref", nopt=4, num_bootstrap=30, seed=1
        ),
        batches=_BATCHES,
        concat=_concat,
        rel=1e-7,
    ),
    ContractCase(
        name="pairwise-ci-by",
        make=lambda: PairwiseEvaluator(
            reference_model="ref", nopt=3, ci=0.9, num_bootstrap=30, seed=2, by=["topic"]
        ),
        make_other=lambda: PairwiseEvaluator(
            reference_model="ref", nopt=3, ci=0.9, num_bootstrap=30, seed=2, by=["task"]
        ),
        batches=_BATCHES,
        concat=_concat,
        rel=1e-7,
    ),
]
