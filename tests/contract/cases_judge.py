"""Contract case of the judge evaluator (per-datum judge records -> records + aggregates)."""

from __future__ import annotations

from assay.llm.judge.evaluator import JudgeEvaluator
from assay.stats.means import datum_record
from contract import ContractCase


def _batch(start: int, n: int) -> list:
    out = []
    for i in range(start, start + n):
        out.append(datum_record("Bias", f"d{i}", (i % 4) / 4, prompt_version="v1"))
        v = None if i % 3 == 0 else (i % 5) / 5
        reason = "judge error: invalid reply" if i % 6 == 0 else "no claims"
        out.append(datum_record("Faithfulness", f"d{i}", v, reason=reason, prompt_version="v1"))
    return out


CASES = [
    ContractCase(
        name="judge-records",
        make=lambda: JudgeEvaluator(metrics=["bias", "faithfulness"]),
        make_other=lambda: JudgeEvaluator(metrics=["bias", "faithfulness"], seed=1),
        batches=[_batch(0, 4), _batch(4, 3), _batch(7, 5)],
        concat=lambda bs: [m for b in bs for m in b],
    ),
]
