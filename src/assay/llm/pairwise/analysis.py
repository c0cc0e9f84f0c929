"""Everything computed from judged comparisons, in one place: counts, tables and records.

:func:`analyze` is step 4 ("score") of an LLM evaluation: the same pure computation
whether the choices came from a judge just now, from the cache, or from an old record
table. The evaluator's :meth:`~assay.llm.pairwise.evaluator.PairwiseEvaluator.compute`
returns its ``metrics``; the run-folder writer also uses its tables.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"index": ["q-g"] * 2, "model_a": ["r", "m"], "model_b": ["m", "r"],
    ...     "task": ["t-g"] * 2, "status": ["ok", "ok"], "choice": ["A", "A"],
    ...     "length_a": [1.0, 2.0], "length_b": [2.0, 1.0], "words_a": [1.0] * 2,
    ...     "words_b": [1.0] * 2})
    >>> a = analyze(rows, reference_model="r", n_boot=10)
    >>> a.counts["consistent"], a.metrics.get("ConsistencyRate").value
    (0, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from assay.llm.pairwise import records
from assay.llm.pairwise.compute import consistent_mask, new_win_rates, old_win_tables
from assay.llm.pairwise.length import LENGTH_UNIT, LengthControlled, length_controlled_win_rate
from assay.llm.pairwise.ratings import (
    BradleyTerryFit,
    bradley_terry,
    debiased_outcomes,
    pairwise_win_rates,
)
from assay.results import Metric, MetricSet

__all__ = ["Analysis", "analyze"]


@dataclass
class Analysis:
    """Counts, tables and metric records of one set of judged comparisons."""

    counts: dict[str, int]
    consistent: pd.DataFrame
    inconsistent: pd.DataFrame
    old: pd.DataFrame
    new: pd.DataFrame
    outcomes: pd.DataFrame
    pairwise: pd.DataFrame
    ratings: BradleyTerryFit | None
    length_controlled: list[LengthControlled] = field(default_factory=list)
    metrics: MetricSet = field(default_factory=MetricSet)


def _counts(rows: pd.DataFrame, mask: np.ndarray) -> dict[str, int]:
    status = rows["status"]
    return {
        "total": len(rows),
        "failed": int((status == "failed").sum()),
        "non_em": int((status != "em").sum()),
        "extracted": int((status == "ok").sum()),
        "consistent": int(mask.sum()),
    }


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _base_records(c: dict[str, int]) -> list[Metric]:
    return [
        records.extraction_rate(
            _rate(c["extracted"], c["non_em"]),
            extracted=c["extracted"],
            compared=c["non_em"],
            undefined="every comparison was an exact match",
        ),
        records.consistency_rate(
            _rate(c["consistent"], c["extracted"]),
            consistent=c["consistent"],
            extracted=c["extracted"],
            undefined="no choice was extracted",
        ),
    ]


def _nan_none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def _win_records(old: pd.DataFrame, new: pd.DataFrame, ref: str) -> list[Metric]:
    out = []
    for r in old.itertuples(index=False):
        for counting, value in (
            ("win+bothgood", r.win_both_good),
            ("win+halfdraw", r.win_half_draw),
        ):
            out.append(
                records.win_rate(
                    _nan_none(value),
                    model=r.model,
                    opponent=ref,
                    counting=counting,
                    task=r.column,
                    n=int(r.tot),
                    undefined="no consistent comparison",
                )
            )
    for r in new.itertuples(index=False):
        kw = {"model": r.model, "opponent": r.opponent, "metric": r.metric}
        out.append(
            records.win_rate_with_tie(_nan_none(r.with_tie), undefined="no comparison", **kw)
        )
        out.append(
            records.win_rate_without_tie(
                _nan_none(r.without_tie), undefined="every comparison was a tie", **kw
            )
        )
    return out


def _beyond_records(
    pairwise: pd.DataFrame,
    fit: BradleyTerryFit | None,
    lcs: list[LengthControlled],
    conf: float,
    n_boot: int,
    seed: int,
) -> list[Metric]:
    out = [
        records.win_rate(
            r.win_rate, model=r.model, opponent=r.opponent, counting="debiased", n=int(r.n)
        )
        for r in pairwise.itertuples(index=False)
    ]
    for lc in lcs:
        out.append(
            records.length_controlled_win_rate(
                lc.win_rate,
                model=lc.model,
                opponent=lc.reference_model,
                n=lc.n,
                raw_win_rate=lc.raw_win_rate,
                ci=lc.win_rate_ci,
                length_coefficient=lc.length_coefficient,
                length_coefficient_ci=lc.length_coefficient_ci,
                confidence_level=conf,
                length_unit=LENGTH_UNIT,
                num_bootstrap=n_boot,
                seed=seed,
            )
        )
    if fit is not None:
        for r in fit.table().itertuples(index=False):
            out.append(
                records.bradley_terry_rating(
                    r.rating,
                    model=r.model,
                    rank=int(r.rank),
                    ci=(float(r.ci_low), float(r.ci_high)),
                    games=float(r.games),
                    confidence_level=conf,
                    bootstrap_samples=n_boot,
                    seed=seed,
                )
            )
    return out


def analyze(
    rows: pd.DataFrame,
    *,
    reference_model: str,
    l2: float = 0.01,
    n_boot: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
) -> Analysis:
    """Compute every count, table and record (see the module docstrings of ``compute``,
    ``ratings`` and ``length`` for the formulas)."""
    # Plain Python strings: iterating pandas' Arrow-backed strings costs ~10x more.
    text = [c for c in ("index", "model_a", "model_b", "task", "status", "choice") if c in rows]
    rows = rows.astype({c: object for c in text})
    ok = rows[rows["status"] == "ok"]
    mask = consistent_mask(rows)
    counts = _counts(rows, mask)
    old = old_win_tables(ok[mask], reference_model)
    new = new_win_rates(rows, reference_model)
    outcomes = debiased_outcomes(rows)
    pairwise = (
        pairwise_win_rates(outcomes)
        if len(outcomes)
        else pd.DataFrame(columns=["model", "opponent", "wins", "n", "win_rate"])
    )
    fit = None
    if len(outcomes) and len(set(outcomes["model"]) | set(outcomes["opponent"])) >= 2:
        fit = bradley_terry(outcomes, l2=l2, n_boot=n_boot, confidence=confidence, seed=seed)
    models = sorted((set(outcomes["model"]) | set(outcomes["opponent"])) - {reference_model})
    lcs = [
        lc
        for m in models
        if (
            lc := length_controlled_win_rate(
                outcomes, m, reference_model, l2=l2, n_boot=n_boot, confidence=confidence, seed=seed
            )
        )
        is not None
    ]
    metrics = MetricSet(
        [
            *_base_records(counts),
            *_win_records(old, new, reference_model),
            *_beyond_records(pairwise, fit, lcs, confidence, n_boot, seed),
        ]
    )
    return Analysis(counts, ok[mask], ok[~mask], old, new, outcomes, pairwise, fit, lcs, metrics)
