"""Tally contract cases of the scoring evaluator (``tests/contract/tallies.py``).

The units are the responses (their ids: their rows in :data:`FRAME`). The case covers every
table with an interval: ``eval`` (R, QWK, R2, kappa, agreements, SMD, RMSE) of the system
score and its rounded form, ``eval_by_g``, ``true_score_eval`` (PRMSE and its parts, from a
second human score on some responses), ``consistency`` / ``degradation``,
``consistency_by_g`` and ``fairness_metrics_by_g`` (the R^2 of OSA, OSD, CSD); the cluster
bootstrap over ``prompt``.

The ``slice`` check does not apply: a scoring slice's interval (``by``) is not the interval
of the slice's responses bootstrapped alone. Every resample draws from all responses, and
the slice's value is read from the same draw as the whole set's (its responses kept, the
others weighing nothing), so the slice's size varies between resamples, its DSM
standardises with that draw's whole set, and its gap's interval comes from the same
resamples (``assay.scoring.tally.attach_slices``). That is what the records pinned before
the one engine hold (``scoring-ci-bca-by``, ``scoring-cluster-by``,
``state-scoring-ci-by-cluster``, ``dask-scoring-ci-by-cluster``); making it the slice-alone
interval would change them, and whether it should is for the house-rules issue to decide.
``tests/scoring/test_scoring_slices.py`` proves the whole-draw intervals against loops over
the materialised resamples. The slice check would also meet the slices' ``DSM`` record,
which has no counterpart in an evaluator run on the slice alone (the ``eval`` table has DSM
only with ``use_diff_std_means``, against the population).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from assay.scoring import ScoringEvaluator
from assay.scoring.tally import record_key
from contract.tallies import TallyCase


def _frame(n: int = 36) -> pd.DataFrame:
    rng = np.random.default_rng(29)
    h = rng.integers(1, 5, n).astype(float)
    m = np.round(np.clip(h + rng.normal(0, 0.7, n), 1, 4), 1)
    h2 = np.where(rng.random(n) < 0.5, np.clip(h + rng.integers(-1, 2, n), 1, 4), np.nan)
    return pd.DataFrame(
        {
            "h": h,
            "m": m,
            "h2": h2,
            "g": rng.choice(["a", "b", "c"], n),
            "prompt": [f"p{i % 6}" for i in range(n)],
        }
    )


FRAME = _frame()
IDS = list(range(len(FRAME)))
KW: dict[str, Any] = {"human": "h", "system": "m", "human2": "h2", "group_columns": ["g"]}


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> ScoringEvaluator:
    return ScoringEvaluator(**KW, **opts).add(FRAME.iloc[list(ids)].reset_index(drop=True))


def _make(opts: Mapping[str, Any]) -> ScoringEvaluator:
    return _take(IDS, opts)


TALLY_CASES = [
    TallyCase(
        name="scoring",
        make=_make,
        take=_take,
        key=record_key,
        ids=IDS,
        columns={c: FRAME[c].tolist() for c in ("g", "prompt")},
        cluster="prompt",
        by="g",
        rel=1e-7,
        skip={
            "slice": "a scoring slice's interval draws from all responses, the slice read "
            "from the whole set's draw (see tests/contract/tally_cases_scoring.py)",
        },
    )
]
