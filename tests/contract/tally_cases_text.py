"""Tally contract case of the text evaluator (``tests/contract/tallies.py``): units are
datums (by uid), the aggregate of each metric a mean over them.

The predictions match their reference fully, half or not at all, so ROUGE-1 takes three
values: with few levels (``10 L <= n``) the aggregates' seeded bootstrap draws
(:func:`assay.stats.bootstrap_means`, the records' closed form ``bootstrap``) are exactly
the engine's multinomial counts over the levels, which the brute force replays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.text.evaluator import TextEvaluator, aggregate_key
from contract.tallies import TallyCase

N = 36
_rng = np.random.default_rng(5)
REFERENCE = "the cat sat down"
PREDICTIONS = {
    f"d{i:02d}": ["the cat sat down", "the cat ran off", "a dog ran off"][k]
    for i, k in enumerate(_rng.choice(3, N, p=[0.5, 0.3, 0.2]))
}
IDS = sorted(PREDICTIONS)
COLUMNS = {
    "site": [f"s{i % 5}" for i in range(N)],
    "genre": ["news" if i % 3 else "blog" for i in range(N)],
}
_COL = {uid: {c: v[i] for c, v in COLUMNS.items()} for i, uid in enumerate(IDS)}


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> TextEvaluator:
    ev = TextEvaluator(metrics=["rouge"], rouge_types=["rouge1"], **opts)
    seen: Counter[str] = Counter()
    uids = []
    for uid in ids:
        uids.append(f"{uid}#{seen[uid]}" if seen[uid] else uid)  # a copy: its own uid
        seen[uid] += 1
    if not ids:
        return ev
    cols = {c: [_COL[u][c] for u in ids] for c in COLUMNS}
    return ev.add([PREDICTIONS[u] for u in ids], [REFERENCE] * len(ids), uids=uids, columns=cols)


TALLY_CASES = [
    TallyCase(
        name="text",
        make=lambda opts: _take(IDS, opts),
        take=_take,
        key=aggregate_key,
        ids=IDS,
        columns=COLUMNS,
        cluster="site",
        by="genre",
    )
]
