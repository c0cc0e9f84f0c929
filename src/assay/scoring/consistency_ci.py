"""Bootstrap intervals of the ``consistency`` and ``degradation`` tables, over responses.

A response is its (human, system, second human) scores, the second missing on
single-scored responses. A resample's counts ``w`` over the distinct responses give the
human-system statistics (``w``) and the human-human ones (``w`` on the double-scored
responses only), so the ``consistency`` row (R, QWK, kappa, agreements and the pooled SMD of
the second human score against the first) and the ``degradation`` row (each human-system
value minus the human-human one: the unpooled SMD minus the pooled, as RSMTool) come from
the same draw. ``bca`` applies (its jackknife leaves each response out of both). Not with
``use_diff_std_means`` (those tables then report DSM, which gets no interval here).

``consistency_by_<column>`` (:func:`attach_consistency_by`): the same columns, DSM in place
of SMD, for the ``All data`` row and every group: a group's human-human statistics are the
counts restricted to its double-scored responses, and its DSM standardises with the same
resample's whole-set mean and sd of the first human score (all responses) and of the second
(the double-scored ones), as the table does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.results import Metric
from assay.scoring.columns import ALL_DATA, METRIC_TYPES
from assay.scoring.replicates import Pairs, collapsed, columns, loo_pairs
from assay.scoring.sufficient_stats import PairStats
from assay.uncertainty.intervals import CIOptions

__all__ = ["CONSISTENCY_CI_COLUMNS", "attach_consistency", "attach_consistency_by"]

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
    y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
    has = ~np.isnan(second)
    rows = np.column_stack([pairs[:, 0], y, has, np.where(has, second, 0.0)])
    c = collapsed(rows, codes)
    units, mult = c.units, c.mult
    h, m, two, h2 = units[:, 0], units[:, 1], units[:, 2] > 0, units[:, 3]

    first, hh = Pairs(h, m, shift), Pairs(h, h2, shift, two)

    def statistic(w: F64) -> F64:
        return _rows(first.resampled(w), hh.resampled(w))

    def jackknife() -> F64:
        return _rows(loo_pairs(h, m, mult, shift), loo_pairs(h, h2, mult, shift, keep=two))

    return c.bounds(opts, statistic, jackknife)


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


#: The columns of ``consistency_by_<column>`` that get an interval.
BY_CONSISTENCY_COLUMNS = ("corr", "wtkappa", "kappa", "exact_agr", "adj_agr", "DSM")


def _by_rows(first: PairStats, hh: PairStats, parts: list[PairStats]) -> F64:
    """Per resample: the ``All data`` row, then each group's; (b, (1 + g) k)."""
    a, c = columns(first), columns(hh)
    pop = (a["h_mean"], a["h_sd"], c["sys_mean"], c["sys_sd"])
    found = [columns(s, pop) for s in [hh, *parts]]
    return np.column_stack([f[k] for f in found for k in BY_CONSISTENCY_COLUMNS])


def _by_intervals(
    h: F64, second: F64, groups: np.ndarray, shift: float, opts: CIOptions, codes: Any = None
) -> tuple[np.ndarray, F64, str]:
    names, code = np.unique(groups, return_inverse=True)
    has = ~np.isnan(second)
    rows = np.column_stack([h, has, np.where(has, second, 0.0), code.reshape(-1)])
    found = collapsed(rows, codes)
    units, mult = found.units, found.mult
    x, two, h2, c = units[:, 0], units[:, 1] > 0, units[:, 2], units[:, 3].astype(np.intp)
    ins = [two & (c == j) for j in range(len(names))]

    whole, hh = Pairs(x, x, shift), Pairs(x, h2, shift, two)
    in_groups = [Pairs(x, h2, shift, k) for k in ins]

    def statistic(w: F64) -> F64:
        parts = [p.resampled(w) for p in in_groups]
        return _by_rows(whole.resampled(w), hh.resampled(w), parts)

    def jackknife() -> F64:
        parts = [loo_pairs(x, h2, mult, shift, keep=k) for k in ins]
        first, hh = loo_pairs(x, x, mult, shift), loo_pairs(x, h2, mult, shift, keep=two)
        return _by_rows(first, hh, parts)

    ci, method = found.bounds(opts, statistic, jackknife)
    return names, ci, method


def attach_consistency_by(
    records: list[Metric],
    h: F64,
    second: F64,
    groups: dict[str, np.ndarray],
    shift: float,
    opts: CIOptions,
    codes: Any = None,
) -> None:
    """Add the interval parameters to the defined records of every ``consistency_by_<column>``
    table (``groups``: each response's label per column; ``h``: the first human score), in
    place."""
    k = len(BY_CONSISTENCY_COLUMNS)
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for column, labels in groups.items():
        names, ci, method = _by_intervals(h, second, labels, shift, opts, codes)
        for i, group in enumerate([ALL_DATA, *(str(v) for v in names.tolist())]):
            for j, c in enumerate(BY_CONSISTENCY_COLUMNS):
                lo, hi = float(ci[0, i * k + j]), float(ci[1, i * k + j])
                found[(f"consistency_by_{column}", group, METRIC_TYPES[c])] = opts.parameters(
                    lo, hi, method
                )
    for m in records:
        p = m.parameters
        key = (str(p.get("table")), str(p.get("group")), m.type)
        if m.value is not None and key in found:
            p.update(found[key])
