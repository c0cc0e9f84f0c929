"""LLM suite intervals and slices through ``SlicedEvaluator`` (the path every suite run
scores through): CPU seconds of the records without and with ``ci=0.95`` (1000 resamples).

* CAT, a StereoSet-sized run (4,229 items, four bias types, random outcomes): the records
  alone, ``ci``, ``ci`` + ``by=["bias_type"]`` (every slice's interval and the gaps'),
  and ``ci`` with ``cluster`` (529 clusters);
* LLM fairness, 2,000 points (random targets, answers with invalid ones and errors,
  counterfactual answers), ``ci`` and ``ci`` + ``by`` a four-valued column.

    python benchmarks/suite_intervals.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from assay.llm.slicing import SlicedEvaluator
from assay.llm.suites import CATEvaluator
from assay.llm.suites.cat import OUTCOMES
from assay.llm.suites.fairness_metrics import LLMFairnessEvaluator

BIAS = ("gender", "race", "profession", "religion")


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """The best (CPU, wall) seconds of ``repeat`` runs."""
    out = []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        out.append((time.process_time() - c, time.perf_counter() - w))
    return min(out)


def cat_case(**kw: Any) -> Callable[[], Any]:
    rng = np.random.default_rng(0)
    n = 4229
    args = {
        "outcomes": np.array(OUTCOMES)[rng.choice(5, n, p=[0.4, 0.3, 0.2, 0.07, 0.03])],
        "test_types": np.where(np.arange(n) % 2 == 0, "intrasentence", "intersentence"),
        "bias_types": np.array(BIAS)[rng.integers(0, 4, n)],
    }
    cols = {"bias_type": args["bias_types"], "site": rng.integers(0, 529, n).astype(str)}
    return lambda: SlicedEvaluator(evaluator=CATEvaluator, **kw).add(cols, **args).compute()


def fairness_case(**kw: Any) -> Callable[[], Any]:
    rng = np.random.default_rng(1)
    n = 2000
    args = {
        "target": rng.integers(0, 2, n),
        "predicted": rng.choice([1, 0, -1, -2], n, p=[0.45, 0.45, 0.07, 0.03]),
        "privileged": rng.integers(0, 2, n),
        "counterfactual": rng.choice([1, 0, -1, -2], n, p=[0.45, 0.45, 0.07, 0.03]),
    }
    cols = {"region": np.array(list("abcd"))[rng.integers(0, 4, n)]}
    return lambda: SlicedEvaluator(evaluator=LLMFairnessEvaluator, **kw).add(cols, **args).compute()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    ci = {"ci": 0.95, "num_bootstrap": 1000}
    cases = {
        "CAT 4,229 items": cat_case(),
        "CAT ci": cat_case(**ci),
        "CAT ci + by bias_type": cat_case(by=["bias_type"], **ci),
        "CAT ci + cluster (529)": cat_case(cluster="site", **ci),
        "fairness 2,000 points": fairness_case(),
        "fairness ci": fairness_case(**ci),
        "fairness ci + by (4 values)": fairness_case(by=["region"], **ci),
    }
    for name, fn in cases.items():
        cpu, wall = best(fn, a.repeat)
        print(f"{name:32s} CPU {cpu:7.3f} s  wall {wall:7.3f} s")


if __name__ == "__main__":
    main()
