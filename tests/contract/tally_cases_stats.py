"""Tally contract cases of the score statistics evaluator (``tests/contract/tallies.py``).

``stats``: the units are the samples (by sample id; each with two epochs, reduced by
``mean`` and by ``max``); the records with an interval are the means (``Mean``, and the
``Accuracy`` of every group of ``grouped(accuracy(), "grp")`` and of all samples).

``stats-clustered``: the evaluator configured with ``cluster="doc"``. Its units are the
clusters (by cluster id): a resample draws counts over the clusters' distinct (sum, size)
rows, as the records pinned before the one engine hold (``stats-ci-cluster``,
``state-stats-ci-cluster``). The ``percentile`` check materialises each resample's clusters
(a cluster drawn twice added again as a distinct cluster) and runs the evaluator on them.

The ``cluster`` check does not apply to either: it draws the engine's cluster bootstrap
(the clusters' counts, ``Multinomial(G, 1/G)`` in cluster order, spread over the units'
rows), another random stream than the stats evaluator's draw over the distinct cluster rows
(the same distribution); moving the stats cluster bootstrap onto it would change the pinned
records above. The ``slice`` check does not apply: the stats evaluator has no ``by`` (its
``grouped`` records are the evaluator on each group's samples alone, which the
``percentile`` check covers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import assay.stats as st
from assay.stats.tally import record_key
from contract.tallies import TallyCase

N = 24


def _samples() -> dict[str, tuple[list[float], str, str]]:
    """Sample id -> (two epochs' values, cluster, group)."""
    rng = np.random.default_rng(29)
    out = {}
    for i in range(N):
        values = rng.choice([0.0, 0.5, 1.0], 2, p=[0.3, 0.2, 0.5]).tolist()
        out[f"s{i:02d}"] = (values, f"d{i % 7}", "x" if i % 3 else "y")
    return out


SAMPLES = _samples()
IDS = sorted(SAMPLES)
CLUSTERS = sorted({c for _, c, _ in SAMPLES.values()})
METRICS = [st.mean(), st.grouped(st.accuracy(), "grp")]
REDUCERS = ["mean", "max"]
SKIP = {
    "cluster": "the stats cluster bootstrap draws over the clusters' distinct rows, "
    "another stream than the engine's (see tests/contract/tally_cases_stats.py)",
    "slice": "the stats evaluator has no by (see tests/contract/tally_cases_stats.py)",
}


def _frame(rows: list[tuple[str, list[float], str, str]]) -> st.ScoreFrame:
    values, sid, epoch, doc, grp = [], [], [], [], []
    for uid, vals, cluster, group in rows:
        for e, v in enumerate(vals, start=1):
            values.append(v)
            sid.append(uid)
            epoch.append(e)
            doc.append(cluster)
            grp.append(group)
    return st.ScoreFrame.from_arrays(
        values, sample_id=sid, epoch=epoch, metadata={"doc": doc, "grp": grp}
    )


def _evaluator(rows: list[Any], opts: Mapping[str, Any]) -> st.ScoreEvaluator:
    return st.ScoreEvaluator(METRICS, REDUCERS, **opts).add(_frame(rows))


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> st.ScoreEvaluator:
    """The samples ``ids``, a repeated one added again under a new id."""
    seen: Counter[str] = Counter()
    rows = []
    for uid in ids:
        vals, cluster, group = SAMPLES[uid]
        rows.append((f"{uid}#{seen[uid]}", vals, cluster, group))
        seen[uid] += 1
    return _evaluator(rows, opts)


def _take_clusters(ids: Sequence[Any], opts: Mapping[str, Any]) -> st.ScoreEvaluator:
    """The samples of the clusters ``ids``, a repeated cluster added again as a new one."""
    seen: Counter[str] = Counter()
    rows = []
    for cluster in ids:
        k = seen[cluster]
        for uid in IDS:
            vals, c, group = SAMPLES[uid]
            if c == cluster:
                rows.append((f"{uid}#{k}", vals, f"{c}#{k}", group))
        seen[cluster] += 1
    return _evaluator(rows, {"ci": 0.95, **opts, "cluster": "doc"})  # cluster needs ci


def _make(opts: Mapping[str, Any], cluster: bool = False) -> st.ScoreEvaluator:
    """Every sample under its own id (and cluster)."""
    rows = [(uid, *SAMPLES[uid]) for uid in IDS]
    return _evaluator(rows, {"ci": 0.95, **opts, "cluster": "doc"} if cluster else opts)


TALLY_CASES = [
    TallyCase(
        name="stats",
        make=_make,
        take=_take,
        key=record_key,
        ids=IDS,
        columns={"doc": [SAMPLES[u][1] for u in IDS], "grp": [SAMPLES[u][2] for u in IDS]},
        cluster="doc",
        by="grp",
        skip=SKIP,
    ),
    TallyCase(
        name="stats-clustered",
        make=lambda opts: _make(opts, cluster=True),
        take=_take_clusters,
        key=record_key,
        ids=CLUSTERS,
        columns={},
        cluster="doc",
        by="grp",
        skip=SKIP,
    ),
]
