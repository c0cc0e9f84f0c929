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
    >>> a = analyze(rows, reference_model="r", num_bootstrap=10)
    >>> a.counts["consistent"], a.metrics.get("ConsistencyRate").value
    (0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import assay.llm.pairwise.records as records
from assay._compat import removed_keywords
from assay.llm.pairwise.compute import (
    consistent_mask,
    new_question_counts,
    new_table,
    old_question_counts,
    old_table,
)
from assay.llm.pairwise.declared import METRICS
from assay.llm.pairwise.length import (
    LENGTH_UNIT,
    LengthControlled,
    LengthDesign,
    length_design,
)
from assay.llm.pairwise.ratings import (
    BradleyTerryFit,
    debiased_outcomes,
    fit_bradley_terry,
    pairwise_win_rates,
    question_wins,
    rating_fit,
)
from assay.llm.pairwise.slicing import (
    check_by,
    question_clusters,
    question_masks,
    slice_records,
)
from assay.llm.pairwise.tally import IDENT, Draw, ident, question_rates
from assay.results import Metric, MetricSet
from assay.uncertainty.closed_form import wilson
from assay.uncertainty.intervals import CIOptions, ci_options
from assay.uncertainty.tally import Tally

__all__ = ["Analysis", "analyze", "question_tally"]


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
    fit: BradleyTerryFit | None, lcs: list[LengthControlled], boot: CIOptions
) -> list[Metric]:
    out = []
    clustered = {"cluster": boot.cluster} if boot.cluster else {}
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
                confidence_level=boot.level,
                length_unit=LENGTH_UNIT,
                num_bootstrap=boot.num_bootstrap,
                seed=boot.seed,
            )
        )
        out[-1].parameters.update(clustered)
    if fit is not None:
        for r in fit.table().itertuples(index=False):
            out.append(
                records.bradley_terry_rating(
                    r.rating,
                    model=r.model,
                    rank=int(r.rank),
                    ci=(float(r.ci_low), float(r.ci_high)),
                    games=float(r.games),
                    confidence_level=boot.level,
                    num_bootstrap=boot.num_bootstrap,
                    seed=boot.seed,
                )
            )
            out[-1].parameters.update(clustered)
    return out


@dataclass
class _Point:
    """The point estimates of a set of rows: what the rate records are computed from."""

    counts: dict[str, int]
    mask: np.ndarray
    ok: pd.DataFrame
    old: pd.DataFrame
    new: pd.DataFrame
    outcomes: pd.DataFrame
    pairwise: pd.DataFrame
    records: list[Metric]
    per_question: tuple[Any, Any]


def _point(rows: pd.DataFrame, ref: str, questions: list[str] | None = None) -> _Point:
    ok = rows[rows["status"] == "ok"]
    mask = consistent_mask(rows)
    counts = _counts(rows, mask)
    qs = sorted(set(rows["index"])) if questions is None else questions
    per_old = old_question_counts(ok[mask], ref, qs)
    per_new = new_question_counts(rows, ref, qs)
    old, new = old_table(*per_old), new_table(*per_new)
    outcomes = debiased_outcomes(rows)
    pairwise = (
        pairwise_win_rates(outcomes)
        if len(outcomes)
        else pd.DataFrame(columns=["model", "opponent", "wins", "n", "win_rate"])
    )
    debiased = [
        records.win_rate(
            r.win_rate, model=r.model, opponent=r.opponent, counting="debiased", n=int(r.n)
        )
        for r in pairwise.itertuples(index=False)
    ]
    rates = [*_base_records(counts), *_win_records(old, new, ref), *debiased]
    return _Point(counts, mask, ok, old, new, outcomes, pairwise, rates, (per_old, per_new))


def _attach(
    recs: Sequence[Metric], keys: list[tuple], ends: np.ndarray, opts: CIOptions, rates: Any, w: Any
) -> None:
    """Intervals on the defined rate records, in place: Wilson for the proportions of rows
    (extraction, consistency) when asked, else the bootstrap's percentile ends."""
    col = {k: j for j, k in enumerate(keys)}
    for m in recs:
        j = col.get(ident(m))
        if m.value is None or j is None:
            continue
        if opts.uses("wilson") and m.type in _PROPORTIONS:
            lo, hi = wilson(float(w @ rates.num[:, j]), float(w @ rates.den[:, j]), opts.level)
            m.parameters.update(opts.parameters(float(lo), float(hi), "wilson"))
        else:
            m.parameters.update(opts.parameters(ends[0, j], ends[1, j], "bootstrap"))


#: The rates that are proportions of rows (Wilson's interval applies).
_PROPORTIONS = METRICS.with_interval("wilson")


def _lc(d: LengthDesign, ends: np.ndarray, l2: float) -> LengthControlled:
    """The length-controlled win rate of a design with its interval ends."""
    return d.result(d.fit(np.ones(len(d.y)), l2=l2)[0], ends[0, :2], ends[1, :2])


def _draw(
    rows: pd.DataFrame,
    p: _Point,
    ref: str,
    questions: list[str],
    masks: list[np.ndarray],
    l2: float,
    opts: CIOptions | None,
    clusters: np.ndarray | None = None,
) -> Draw:
    """What one stream of question resamples computes: ratings and length fits always, the
    rate records (whole set and slices) with ``ci``; ``clusters``: each question's."""
    outcomes = p.outcomes
    models = sorted(set(outcomes["model"]) | set(outcomes["opponent"]))
    draw = Draw(questions, l2, models=models, clusters=clusters)
    if len(models) >= 2:
        draw.wins = question_wins(outcomes, models, questions)
    qpos = {q: i for i, q in enumerate(questions)}
    designs = [length_design(outcomes, m, ref) for m in models if m != ref]
    draw.lengths = [(d, _positions(d, qpos)) for d in designs if d]
    whole = {d.model: j for j, (d, _) in enumerate(draw.lengths)}
    in_q = outcomes["index"].map(qpos).to_numpy(int)
    for mask in masks:
        part = outcomes[mask[in_q]]
        fits = [length_design(part, m, ref) for m in whole]
        draw.slice_lengths.append([(d, _positions(d, qpos), whole[d.model]) for d in fits if d])
    if opts is not None:
        draw.rates = question_rates(rows, p.mask, outcomes, ref, questions, *p.per_question)
        draw.masks = np.array(masks, float).reshape(len(masks), len(questions))
    return draw


def question_tally(
    rows: pd.DataFrame,
    *,
    reference_model: str,
    l2: float = 0.01,
    ci: float | None = None,
    cluster: str | None = None,
) -> Tally:
    """The whole set's tally over questions (:meth:`~assay.llm.pairwise.tally.Draw.whole`):
    the rate records with ``ci``, the ratings and the length fits; each question's cluster
    with ``cluster``."""
    rows = _plain(rows)
    questions = sorted(set(rows["index"]))
    p = _point(rows, reference_model, questions)
    clusters = None if cluster is None else question_clusters(rows, cluster, questions)
    opts = None if ci is None else ci_options(ci, cluster=cluster)
    return _draw(rows, p, reference_model, questions, [], l2, opts, clusters).whole()


def _plain(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with their text columns as plain Python strings (iterating pandas'
    Arrow-backed strings costs ~10x more)."""
    text = [c for c in ("index", "model_a", "model_b", "task", "status", "choice") if c in rows]
    return rows.astype({c: object for c in text})


def _positions(d: LengthDesign, qpos: dict[str, int]) -> np.ndarray:
    return np.array([qpos[q] for q in d.questions], dtype=int)


@removed_keywords(n_boot="num_bootstrap", confidence="ci")
def analyze(
    rows: pd.DataFrame,
    *,
    reference_model: str,
    l2: float = 0.01,
    ci: float | None = None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
    by: Sequence[str] | str | None = None,
    cluster: str | None = None,
) -> Analysis:
    """Compute every count, table and record (see the module docstrings of ``compute``,
    ``ratings``, ``length``, ``resample`` and ``slicing`` for the formulas).

    ``ci`` puts an interval of that level on every rate record (``ci_method``: the
    bootstrap over questions, or ``wilson`` for the extraction and consistency rates);
    ratings and length-controlled win rates always carry a bootstrap interval (at 0.95
    without ``ci``). All intervals come from one stream of ``num_bootstrap`` resamples of
    the questions, seeded by ``seed``. ``by`` adds the rate records of every slice of
    these question-level columns. ``cluster`` (with ``ci``): a question-level column whose
    values are clusters; every interval then draws whole clusters of questions
    (:func:`~assay.llm.pairwise.slicing.question_clusters`).
    """
    opts = ci_options(ci, ci_method, num_bootstrap, seed, cluster=cluster)
    level = opts.level if opts else 0.95
    boot = ci_options(level, "bootstrap", num_bootstrap, seed, cluster=cluster)
    assert boot is not None  # the ratings' interval, always
    rows = _plain(rows)
    by = check_by(rows, by)
    questions = sorted(set(rows["index"]))
    p = _point(rows, reference_model, questions)
    masks = [(col, v, mask) for col in by for v, mask in question_masks(rows, col, questions)]
    clusters = None if cluster is None else question_clusters(rows, cluster, questions)
    draw = _draw(rows, p, reference_model, questions, [m for _, _, m in masks], l2, opts, clusters)
    reps = draw.intervals(boot)
    fit = None
    if draw.wins is not None and reps.ratings is not None:
        theta = fit_bradley_terry(draw.wins.sum(axis=0), l2=l2)
        fit = rating_fit(draw.models, theta, reps.ratings[0], reps.ratings[1], draw.wins)
    lcs = [_lc(d, ends, l2) for (d, _), ends in zip(draw.lengths, reps.lengths)]
    rates = p.records
    if opts is not None and draw.rates is not None and reps.rates is not None:
        _attach(rates, draw.rates.keys, reps.rates, opts, draw.rates, np.ones(len(questions)))
    beyond = _beyond_records(fit, lcs, boot)
    sliceable = [*rates, *(m for m in beyond if m.type in METRICS.sliced)]
    row_q = rows["index"].map({q: i for i, q in enumerate(questions)}).to_numpy(int)
    sliced: list[Metric] = []
    for k, (col, v, mask) in enumerate(masks):
        part = _point(rows[mask[row_q]], reference_model).records
        gap_ci = {}
        if opts is not None and draw.rates is not None:
            ends, gaps = reps.slices[k]
            _attach(part, draw.rates.keys, ends, opts, draw.rates, mask.astype(float))
            keys = draw.rates.keys
            gap_ci = {key: (float(gaps[0, j]), float(gaps[1, j])) for j, key in enumerate(keys)}
        fits = list(zip(draw.slice_lengths[k], reps.slice_lengths[k]))
        part += _beyond_records(None, [_lc(d, e, l2) for (d, _, _), e in fits], boot)
        for (d, _, _), e in fits:
            key = ("LengthControlledWinRate", None, d.model, d.reference_model, None, None)
            gap_ci[key] = (float(e[0, 2]), float(e[1, 2]))
        n = int(mask.sum())
        kw: dict[str, Any] = {"column": col, "value": v, "n": n, "where": IDENT, "key": ident}
        sliced += slice_records(sliceable, part, gap_ci=gap_ci, **kw)
    metrics = MetricSet([*rates, *beyond, *sliced])
    return Analysis(
        p.counts,
        p.ok[p.mask],
        p.ok[~p.mask],
        p.old,
        p.new,
        p.outcomes,
        p.pairwise,
        fit,
        lcs,
        metrics,
    )
