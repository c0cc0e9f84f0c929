"""The bootstrap over questions: one draw of resampled questions for every pairwise interval.

The unit of pairwise data is the question: its comparisons (every model against the
reference, in one or both orders) stand or fall together, so a resample draws whole
questions. Each metric keeps per-question sufficient statistics, and the metric of a
resample is the metric of the count-weighted statistics (``w`` the counts of how often each
question was drawn, :func:`assay.uncertainty.intervals.resample_counts`); nothing is re-analysed per
resample:

* every rate record (``ExtractionRate``, ``ConsistencyRate``, the three ``WinRate``
  countings, ``WinRateWithTie``, ``WinRateWithoutTie``) is a ratio of two sums over
  questions: per question a numerator and a denominator count (``win + both`` and ``tot``
  of the consistent comparisons, ``cnt + tie / 2`` and ``tot``, a debiased outcome and 1,
  ...), so the resampled rate is ``(w @ num) / (w @ den)``;
* a Bradley-Terry rating: per question the wins matrix of the models; the fit of
  ``sum_q w_q wins_q`` (a model with no game in a resample has no rating there);
* a length-controlled win rate: per question the pair's outcome and length difference (the
  fit's row); the logistic fit weighted by ``w``.

All of them come from the same counts, so one ``seed`` gives consistent intervals. With a
``cluster`` column, ``w`` is the weight of each question when whole clusters of questions
are drawn (:class:`assay.uncertainty.clusters.Clusters`): every formula above is unchanged. A slice
(a subgroup of the questions) of a resample is the resample's counts times the slice's
indicator: the slice's value and the whole set's come from the same draw, so the gap's
interval is the percentile interval of the resampled gaps. A resample on which a value is
undefined (a zero denominator) is left out of its interval.

Example:
    >>> import numpy as np
    >>> r = QuestionRates([("ConsistencyRate",)], np.array([[1.0], [0.0]]), np.ones((2, 1)))
    >>> r.rates(np.array([[2.0, 0.0], [0.0, 2.0]])).ravel().tolist()
    [1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from assay.llm.pairwise.length import LengthDesign
from assay.llm.pairwise.ratings import fit_bradley_terry
from assay.results import Metric
from assay.uncertainty.intervals import CIOptions, Clusters, bootstrap, percentile

__all__ = ["IDENT", "ident", "QuestionRates", "question_rates", "Draw", "Replicates"]

#: The parameters that, with the type, name one rate record.
IDENT = ("counting", "model", "opponent", "task", "metric")


def ident(m: Metric) -> tuple[Any, ...]:
    """The identity of a record: its type and :data:`IDENT` parameters."""
    return (m.type, *(m.parameters.get(k) for k in IDENT))


@dataclass(frozen=True)
class QuestionRates:
    """Per question, the numerator and denominator of every rate record (``keys``: their
    :func:`ident`); both ``(questions, k)``."""

    keys: list[tuple[Any, ...]]
    num: np.ndarray
    den: np.ndarray

    def rates(self, w: np.ndarray) -> np.ndarray:
        """``(b, k)`` rates of question weightings ``w`` ``(b, questions)``; NaN where the
        denominator is 0."""
        num, den = w @ self.num, w @ self.den
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _per_question(index: pd.Series, values: np.ndarray, qpos: dict[str, int]) -> np.ndarray:
    out = np.zeros(len(qpos))
    np.add.at(out, index.map(qpos).to_numpy(int), values)
    return out


def question_rates(
    rows: pd.DataFrame,
    consistent: np.ndarray,
    outcomes: pd.DataFrame,
    reference_model: str,
    questions: Sequence[str],
    old: tuple[list[tuple[str, str]], np.ndarray],
    new: tuple[list[tuple[str, str, str]], np.ndarray],
) -> QuestionRates:
    """The per-question numerators and denominators of every rate record of ``rows``
    (``consistent``: the consistency mask of its ``ok`` rows; ``old``, ``new``: the
    per-question counts of :func:`~assay.llm.pairwise.compute.old_question_counts` and
    :func:`~assay.llm.pairwise.compute.new_question_counts` over ``questions``)."""
    qpos = {q: i for i, q in enumerate(questions)}
    ok = rows[rows["status"] == "ok"]
    keys: list[tuple[Any, ...]] = []
    nums: list[np.ndarray] = []
    dens: list[np.ndarray] = []

    def add(key: tuple[Any, ...], num: np.ndarray, den: np.ndarray) -> None:
        keys.append(key)
        nums.append(num)
        dens.append(den)

    extracted = _per_question(ok["index"], np.ones(len(ok)), qpos)
    non_em = _per_question(rows["index"], (rows["status"] != "em").to_numpy(float), qpos)
    add(("ExtractionRate", None, None, None, None, None), extracted, non_em)
    n_consistent = _per_question(ok["index"], consistent.astype(float), qpos)
    add(("ConsistencyRate", None, None, None, None, None), n_consistent, extracted)
    old_keys, c = old
    win, both, neither, tot = c[..., 0], c[..., 2], c[..., 3], c.sum(axis=2)
    for j, (m, col) in enumerate(old_keys):
        key = ("WinRate", "win+bothgood", m, reference_model, col, None)
        add(key, win[:, j] + both[:, j], tot[:, j])
        half = win[:, j] + (both[:, j] + neither[:, j]) / 2
        add(("WinRate", "win+halfdraw", m, reference_model, col, None), half, tot[:, j])
    new_keys, c = new
    for j, (metric, x, y) in enumerate(new_keys):
        cnt, tie, n = c[:, j, 0], c[:, j, 1], c[:, j, 2]
        add(("WinRateWithTie", None, x, y, None, metric), cnt + tie / 2, n)
        add(("WinRateWithoutTie", None, x, y, None, metric), cnt, n - tie)
    for (x, y), o in outcomes.groupby(["model", "opponent"], sort=True):
        y_ = o["outcome"].to_numpy(float)
        games = _per_question(o["index"], np.ones(len(o)), qpos)
        wins = _per_question(o["index"], y_, qpos)
        add(("WinRate", "debiased", x, y, None, None), wins, games)
        add(("WinRate", "debiased", y, x, None, None), games - wins, games)
    shape = (len(questions), 0)
    num = np.column_stack(nums) if nums else np.zeros(shape)
    den = np.column_stack(dens) if dens else np.zeros(shape)
    return QuestionRates(keys, num, den)


@dataclass
class Replicates:
    """Percentile interval ends (each ``(2, k)``: low, high) of one draw's statistics."""

    rates: np.ndarray | None = None
    slices: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    ratings: np.ndarray | None = None
    lengths: list[np.ndarray] = field(default_factory=list)
    slice_lengths: list[list[np.ndarray]] = field(default_factory=list)


@dataclass
class Draw:
    """Every statistic resampled from one stream of question counts (see the module
    docstring): rates (and their slices, ``masks`` ``(slices, questions)``), Bradley-Terry
    log-strengths of ``models`` from ``wins`` ``(questions, n, n)``, and length-controlled
    fits (each with the question position of each of its rows), of the whole set and, in
    ``slice_lengths``, of each slice (each with the position of the whole set's fit of the
    same model, for the gap: columns win rate, coefficient, gap)."""

    questions: int
    l2: float
    models: list[str] = field(default_factory=list)
    rates: QuestionRates | None = None
    masks: np.ndarray | None = None
    wins: np.ndarray | None = None
    lengths: list[tuple[LengthDesign, np.ndarray]] = field(default_factory=list)
    slice_lengths: list[list[tuple[LengthDesign, np.ndarray, int]]] = field(default_factory=list)

    def _widths(self) -> list[int]:
        k = 0 if self.rates is None else len(self.rates.keys)
        s = 0 if self.masks is None or self.rates is None else len(self.masks)
        n = 0 if self.wins is None else self.wins.shape[1]
        sliced = [3] * sum(len(fits) for fits in self.slice_lengths)
        return [k, *([k, k] * s), n, *([2] * len(self.lengths)), *sliced]

    def __call__(self, w: np.ndarray) -> np.ndarray:
        """``(b, K)``: every statistic of each resample (rows of ``w``), side by side."""
        parts = []
        if self.rates is not None:
            whole = self.rates.rates(w)
            parts.append(whole)
            for mask in [] if self.masks is None else self.masks:
                part = self.rates.rates(w * mask)
                parts += [part, part - whole]
        if self.wins is not None:
            wins = np.einsum("bq,qij->bij", w, self.wins)
            theta = fit_bradley_terry(wins, l2=self.l2)
            theta[wins.sum(axis=2) + wins.sum(axis=1) == 0] = np.nan  # a model not drawn
            parts.append(theta)
        whole_fits = [design.fit(w[:, pos], l2=self.l2) for design, pos in self.lengths]
        parts += whole_fits
        for fits in self.slice_lengths:
            for design, pos, j in fits:
                fit = design.fit(w[:, pos], l2=self.l2)
                parts.append(np.column_stack([fit, fit[:, 0] - whole_fits[j][:, 0]]))
        return np.concatenate(parts, axis=1) if parts else np.zeros((len(w), 0))

    def intervals(self, opts: CIOptions, clusters: np.ndarray | None = None) -> Replicates:
        """Percentile intervals of every statistic, from one stream of resample counts
        (with ``clusters``, each question's cluster code: of whole clusters of questions)."""
        widths = self._widths()
        if sum(widths) == 0 or self.questions == 0:
            return Replicates()
        units: Any = np.ones(self.questions, dtype=np.int64)
        if clusters is not None:
            units = Clusters.of(np.arange(self.questions), clusters, self.questions)
        reps = bootstrap(self, units, opts.num_bootstrap, opts.seed)
        ends = percentile(reps, opts.level)
        blocks = np.split(ends, np.cumsum(widths)[:-1], axis=1)
        out = Replicates()
        if self.rates is not None:
            out.rates = blocks.pop(0)
            for _ in [] if self.masks is None else self.masks:
                out.slices.append((blocks.pop(0), blocks.pop(0)))
        else:
            blocks.pop(0)
        ratings = blocks.pop(0)
        out.ratings = ratings if self.wins is not None else None
        out.lengths = [blocks.pop(0) for _ in self.lengths]
        out.slice_lengths = [[blocks.pop(0) for _ in fits] for fits in self.slice_lengths]
        return out
