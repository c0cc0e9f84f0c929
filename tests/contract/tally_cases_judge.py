"""Tally contract case of the LLM judge evaluator (``tests/contract/tallies.py``): units are
datums (by uid), the aggregate of each metric the mean of its defined values.

The judged values take few levels (0, 0.5, 1), so the aggregates' seeded bootstrap draws
(:func:`assay.stats.bootstrap_means`, the records' closed form ``bootstrap``) are exactly
the engine's multinomial counts over the levels, which the brute force replays; some datums
have no value (drawn with their cluster under ``cluster``, in no mean).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.llm.judge.evaluator import JudgeEvaluator, aggregate_key
from assay.stats.means import datum_record
from contract.tallies import TallyCase

N = 40
_rng = np.random.default_rng(9)
IDS = [f"d{i:02d}" for i in range(N)]
BIAS = dict(zip(IDS, _rng.choice([0.0, 0.5, 1.0], N, p=[0.5, 0.3, 0.2]).tolist()))
FAITH = {u: None if i % 7 == 0 else float(_rng.integers(0, 2)) for i, u in enumerate(IDS)}
COLUMNS = {
    "site": [f"s{i % 6}" for i in range(N)],
    "topic": ["ab"[i % 4 == 0] for i in range(N)],
}
_COL = {uid: {c: v[i] for c, v in COLUMNS.items()} for i, uid in enumerate(IDS)}


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> JudgeEvaluator:
    ev = JudgeEvaluator(metrics=["bias", "faithfulness"], **opts)
    seen: Counter[str] = Counter()
    records, cols = [], []
    for uid in ids:
        name = f"{uid}#{seen[uid]}" if seen[uid] else uid  # a copy: its own uid
        seen[uid] += 1
        records.append(datum_record("Bias", name, BIAS[uid], prompt_version="v1"))
        records.append(
            datum_record("Faithfulness", name, FAITH[uid], reason="no claims", prompt_version="v1")
        )
        cols += [_COL[uid], _COL[uid]]
    columns = {c: [row[c] for row in cols] for c in COLUMNS}
    return ev.add(records, columns)


TALLY_CASES = [
    TallyCase(
        name="judge",
        make=lambda opts: _take(IDS, opts),
        take=_take,
        key=aggregate_key,
        ids=IDS,
        columns=COLUMNS,
        cluster="site",
        by="topic",
    )
]
