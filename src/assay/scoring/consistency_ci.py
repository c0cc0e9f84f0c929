"""Bootstrap intervals of the ``consistency`` and ``degradation`` tables, over responses.

A response is its (human, system, second human) scores, the second missing on
single-scored responses. A resample's counts ``w`` over the distinct responses give the
human-system statistics (``w``) and the human-human ones (``w`` on the double-scored
responses only), so the ``consistency`` row (R, QWK, kappa, agreements and the pooled SMD of
the second human score against the first) and the ``degradation`` row (each human-system
value minus the human-human one: the unpooled SMD minus the pooled, as RSMTool) come from
the same draw. ``bca`` applies (its jackknife leaves each response out of both). Not with
``use_diff_std_means`` (those tables then report DSM, which gets no interval here).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.clusters import collapse_by
from assay.intervals import CIOptions
from assay.results import Metric
from assay.scoring.columns import METRIC_TYPES
from assay.scoring.replicates import columns, loo_pairs, resampled_pairs
from assay.scoring.sufficient_stats import PairStats

__all__ = ["CONSISTENCY_CI_COLUMNS", "attach_consistency"]

#: The columns of both tables that get an interval.
CONSISTENCY_CI_COLUMNS = ("corr", "wtkappa", "kappa", "exact_agr", "adj_agr", "SMD")
F64 = NDArray[np.float64]


def _rows(hm: PairStats, hh: PairStats) -> F64:
    """Per resample: the consistency columns, then the degradation columns; (b, 2 k)."""
    a, c = columns(hm), columns(hh)
    human_human = np.column_stack(
        [c["SMD_pooled"] if k == "SMD" else c[k] for k in CONSISTENCY_CI_COLUMNS]
    )
    human_system = np.column_stack([a[k] for k in CONSISTENCY_CI_COLUMNS])
    return np.concatenate([human_human, human_system - human_human], axis=1)


def _intervals(
    pairs: F64, second: F64, form: int, shift: float, opts: CIOptions, codes: Any = None
) -> tuple[F64, str]:
    from assay.scoring.intervals import interval_of

    y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
    has = ~np.isnan(second)
    rows = np.column_stack([pairs[:, 0], y, has, np.where(has, second, 0.0)])
    units, mult = collapse_by(rows, codes)
    h, m, two, h2 = units[:, 0], units[:, 1], units[:, 2] > 0, units[:, 3]

    def statistic(w: F64) -> F64:
        return _rows(resampled_pairs(h, m, w, shift), resampled_pairs(h, h2, w * two, shift))

    def jackknife() -> F64:
        return _rows(loo_pairs(h, m, mult, shift), loo_pairs(h, h2, mult, shift, keep=two))

    return interval_of(opts, statistic, jackknife, mult)


def attach_consistency(
    records: list[Metric],
    pairs: F64,
    second: F64,
    system: str,
    shift: float,
    opts: CIOptions,
    codes: Any = None,
) -> None:
    """Add the interval parameters to the defined ``consistency`` and ``degradation``
    records (an SMD of another method than RSMTool's default gets none), in place."""
    k = len(CONSISTENCY_CI_COLUMNS)
    found: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    for form, score in ((0, system), (1, f"{system}_round")):
        ci, method = _intervals(pairs, second, form, shift, opts, codes)
        for j, c in enumerate(CONSISTENCY_CI_COLUMNS):
            kind = METRIC_TYPES[c]
            if form == 0:
                found[("consistency", None, kind)] = opts.parameters(
                    float(ci[0, j]), float(ci[1, j]), method
                )
            found[("degradation", score, kind + "Degradation")] = opts.parameters(
                float(ci[0, k + j]), float(ci[1, k + j]), method
            )
    for m in records:
        p = m.parameters
        table = p.get("table")
        if m.value is None or table not in ("consistency", "degradation") or "smd_method" in p:
            continue
        key = (table, None if table == "consistency" else p.get("score"), m.type)
        if key in found:
            p.update(found[key])
