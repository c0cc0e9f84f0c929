"""The pairwise tallies: one stream of question resamples for every pairwise interval
(:mod:`assay.uncertainty`).

The unit of pairwise data is the question: its comparisons (every model against the
reference, in one or both orders) stand or fall together, so a resample draws whole
questions (each question its own row, named by its id). Each metric keeps per-question
sufficient statistics, and the metric of a resample is the metric of the count-weighted
statistics (``w`` the counts of how often each question was drawn); nothing is re-analysed
per resample:

* every rate record (``ExtractionRate``, ``ConsistencyRate``, the three ``WinRate``
  countings, ``WinRateWithTie``, ``WinRateWithoutTie``) is a ratio of two sums over
  questions: per question a numerator and a denominator count (``win + both`` and ``tot``
  of the consistent comparisons, ``cnt + tie / 2`` and ``tot``, a debiased outcome and 1,
  ...), so the resampled rate is ``(w @ num) / (w @ den)``;
* a Bradley-Terry rating (its log-strength): per question the wins matrix of the models; the fit
  of ``sum_q w_q wins_q`` (a model with no game in a resample has no rating there);
* a length-controlled win rate and its length coefficient: per question the pair's outcome
  and length difference (the fit's row); the logistic fit weighted by ``w``.

These are one tally's values (:meth:`Draw.whole`, keyed by the records' :func:`ident`; the
length coefficient, a parameter of its record, as ``LengthCoefficient``), so the
Bradley-Terry and logistic fits run once per resample. A slice (a subgroup of the
questions) is read from the same draws (:meth:`Draw.joint`: the counts times the slice's
indicator), and its gap is its values minus the whole set's of the same resample. Every
tally draws ``ones(questions)`` with the one ``seed``, so all of them see the same
resamples; with a ``cluster`` column whole clusters of questions are drawn
(:class:`assay.uncertainty.clusters.Clusters`), every formula above unchanged. A resample on
which a value is undefined (a zero denominator) is left out of its interval.

Example:
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
from assay.uncertainty.intervals import CIOptions, percentile, replicates
from assay.uncertainty.tally import Key, Tally

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


def rating_key(model: str) -> Key:
    """The key of a model's ``BradleyTerryRating``."""
    return ("BradleyTerryRating", None, model, None, None, None)


def length_keys(d: LengthDesign) -> tuple[Key, Key]:
    """The keys of a length-controlled win rate and of its length coefficient."""
    where = (None, d.model, d.reference_model, None, None)
    return ("LengthControlledWinRate", *where), ("LengthCoefficient", *where)


@dataclass
class Replicates:
    """Percentile interval ends (each ``(2, k)``: low, high) of one draw's statistics:
    ratings (log-strengths), length fits (win rate, coefficient) and, of each slice's fits,
    (win rate, coefficient, gap)."""

    rates: np.ndarray | None = None
    slices: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    ratings: np.ndarray | None = None
    lengths: list[np.ndarray] = field(default_factory=list)
    slice_lengths: list[list[np.ndarray]] = field(default_factory=list)


@dataclass
class Draw:
    """Every statistic resampled from one stream of question counts (see the module
    docstring): rates (and their slices, ``masks`` ``(slices, questions)``), Bradley-Terry
    ratings of ``models`` from ``wins`` ``(questions, n, n)``, and length-controlled fits
    (each with the question position of each of its rows), of the whole set and, in
    ``slice_lengths``, of each slice (each with the position of the whole set's fit of the
    same model, for the gap); ``clusters``: each question's cluster code."""

    questions: Sequence[str]
    l2: float
    models: list[str] = field(default_factory=list)
    rates: QuestionRates | None = None
    masks: np.ndarray | None = None
    wins: np.ndarray | None = None
    lengths: list[tuple[LengthDesign, np.ndarray]] = field(default_factory=list)
    slice_lengths: list[list[tuple[LengthDesign, np.ndarray, int]]] = field(default_factory=list)
    clusters: np.ndarray | None = None

    def _tally(self, keys: list[Key], values: Any) -> Tally:
        codes = self.clusters
        return Tally(
            tuple(keys),
            values,
            np.ones(len(self.questions), dtype=np.int64),
            ids=np.asarray(self.questions, dtype=object),
            codes=None if codes is None else (lambda column: codes),
        )

    def _whole_keys(self) -> list[Key]:
        keys: list[Key] = [] if self.rates is None else list(self.rates.keys)
        if self.wins is not None:
            keys += [rating_key(m) for m in self.models]
        return keys + [k for d, _ in self.lengths for k in length_keys(d)]

    def _whole_values(self, w: np.ndarray) -> list[np.ndarray]:
        parts = [] if self.rates is None else [self.rates.rates(w)]
        if self.wins is not None:
            wins = np.einsum("bq,qij->bij", w, self.wins)
            theta = fit_bradley_terry(wins, l2=self.l2)
            theta[wins.sum(axis=2) + wins.sum(axis=1) == 0] = np.nan  # a model not drawn
            parts.append(theta)
        return parts + [design.fit(w[:, pos], l2=self.l2) for design, pos in self.lengths]

    def _part_keys(self, k: int) -> list[Key]:
        keys: list[Key] = [] if self.rates is None else list(self.rates.keys)
        return keys + [key for d, _, _ in self.slice_lengths[k] for key in length_keys(d)]

    def _part_values(self, k: int, w: np.ndarray) -> list[np.ndarray]:
        mask = None if self.masks is None else self.masks[k]
        parts = [] if self.rates is None else [self.rates.rates(w * mask)]
        return parts + [d.fit(w[:, pos], l2=self.l2) for d, pos, _ in self.slice_lengths[k]]

    def whole(self) -> Tally:
        """The whole set's tally: rates, ratings (log-strengths: the records' Elo scale is an
        increasing affine map of them, applied to the interval's ends), length fits (win
        rate, coefficient)."""
        return self._tally(self._whole_keys(), lambda w: _joined(self._whole_values(w), w))

    def joint(self) -> Tally:
        """The whole set's tally, then every slice's on the same draws (keys prefixed by the
        slice's position): one tally, so the fits of a resample run once."""
        keys = [("whole", *k) for k in self._whole_keys()]
        for k in range(len(self.slice_lengths)):
            keys += [(k, *key) for key in self._part_keys(k)]

        def values(w: np.ndarray) -> np.ndarray:
            parts = self._whole_values(w)
            for k in range(len(self.slice_lengths)):
                parts += self._part_values(k, w)
            return _joined(parts, w)

        return self._tally(keys, values)

    def intervals(self, opts: CIOptions) -> Replicates:
        """Percentile intervals of every statistic, from one stream of resample counts
        (with ``clusters``: of whole clusters of questions); a slice's gaps are its
        resampled values minus the whole set's of the same resample."""
        whole = self._whole_keys()
        if not whole or not self.questions:
            return Replicates()
        reps = replicates(self.joint(), opts)
        ends = percentile(reps, opts.level)
        out = Replicates()
        at = 0
        if self.rates is not None:
            r = len(self.rates.keys)
            out.rates, at = ends[:, :r], r
        if self.wins is not None:
            out.ratings, at = ends[:, at : at + len(self.models)], at + len(self.models)
        out.lengths = [ends[:, at + 2 * j : at + 2 * j + 2] for j in range(len(self.lengths))]
        start = len(whole)
        for k, fits in enumerate(self.slice_lengths):
            width = len(self._part_keys(k))
            part, mine = reps[:, start : start + width], ends[:, start : start + width]
            start += width
            r = 0
            if self.rates is not None:
                r = len(self.rates.keys)
                out.slices.append((mine[:, :r], percentile(part[:, :r] - reps[:, :r], opts.level)))
            lengths = []
            for j, (_, _, i) in enumerate(fits):
                c = r + 2 * j
                gap = percentile(part[:, c] - reps[:, at + 2 * i], opts.level)
                lengths.append(np.column_stack([mine[:, c : c + 2], gap]))
            out.slice_lengths.append(lengths)
        return out


def _joined(parts: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(w), 0))
