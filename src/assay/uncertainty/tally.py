"""The per-unit tally: what an evaluator gives the one uncertainty engine.

An evaluator that can carry intervals exposes ``tally()``: a list of :class:`Tally`, each
one bootstrap of some of its records (classification: one per score threshold and one for
the ROC AUCs; most evaluators: one). A tally holds

``rows`` (implicit) and ``multiplicity``
    the distinct rows of per-unit statistics that a resample draws, and how many units
    (datums, images, responses, samples, items) each stands for. Units with equal
    statistics may share a row (a domain collapses them as it likes: a resample of the rows
    is ``Multinomial(n, m / n)``, exactly the per-unit bootstrap summed per row);
``values``
    the point estimate's formulas vectorised over a leading resample axis: row weights
    ``w`` (b, m), how often each row is taken, give the ``keys``' values (b, k), NaN
    exactly where the record would be ``None``. Sums over units (counts, confusion cells)
    are ``w @ cells``; other metrics (AP, ROC AUC ranks) compute what they need from ``w``;
``keys``
    which record each column of ``values`` is (the record's type and identifying
    parameters, as the domain matches them);
``unit``, ``unit_weight`` and ``ids``
    each unit's row, how many units the entry stands for (a compact form) and its id (a
    datum uid, an image's, a response's): the cluster bootstrap weighs a row by the draws
    of its units' clusters, and a test can rebuild any resample's units from the ids;
``codes``
    each unit's cluster (``0 .. G-1``) given a column name (``cluster=COLUMN``);
``inside``
    which rows are in a slice, when the tally was made with a slice mask (the gap);
``closed``
    closed forms, by method (``wilson``, ``t``, ``delong``): given the level, the
    interval ends of the keys the method applies to (the others get the bootstrap);
``jackknife``
    the leave-one-row-out values (m, k) (a row drawn twice is left out twice: BCa weighs
    them by ``multiplicity``): BCa is offered. :func:`leave_one_out` gives them for a
    ``values`` of weighted row sums; a domain with a closed form gives its own. With a
    cluster the engine leaves one cluster out through ``values`` itself;
``point`` and ``offset``
    the point estimate BCa compares the replicates with, as the domain computes it
    (default: ``values`` of the data's own weights), and a constant the values are centred
    on (a mean centred on a data value resamples constant data exactly): the bootstrap
    interval's ends add it back (closed forms give their own ends);
``chunk``
    numbers drawn at a time (memory; the draws do not depend on it);
``prepare``
    the rows made on demand (:meth:`Tally.ready`): a tally may give only its keys and
    closed forms, and how to make the rest.

The engine (:mod:`assay.uncertainty.intervals`) turns a tally into interval parameters
with one set of options (``ci``, ``ci_method``, ``num_bootstrap``, ``seed``, ``cluster``),
and a slice's gap into its interval (:meth:`Tally.gap`); :mod:`assay.uncertainty.slices`
annotates a slice's records. A domain writes only its tallies.

Example:
    >>> cells = np.array([[1.0, 1.0], [0.0, 1.0]])  # right answers, answers
    >>> t = Tally(("Accuracy",), lambda w: ((w @ cells)[:, :1] / (w @ cells)[:, 1:]),
    ...           multiplicity=np.array([3, 1]))
    >>> t.estimate().tolist()
    [0.75]
    >>> t.values(np.array([[1.0, 3.0]])).tolist()
    [[0.25]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from assay.uncertainty.resampling import CHUNK_ELEMENTS

__all__ = ["Closed", "Key", "Tally", "Tallied", "leave_one_out"]

F64 = NDArray[np.float64]
#: A record's identity among a tally's records: its type and identifying parameters.
Key = tuple[Any, ...]
#: A closed form: the level -> the interval ends of the keys it applies to.
Closed = Callable[[float], Mapping[Key, tuple[float, float]]]


@dataclass(frozen=True)
class Tally:
    """One bootstrap of some records of an evaluator (see the module docstring)."""

    keys: tuple[Key, ...]
    values: Callable[[F64], F64] = field(default=lambda w: np.full((len(w), 0), np.nan))
    multiplicity: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    unit: NDArray[np.intp] | None = None
    unit_weight: NDArray[np.int64] | None = None
    ids: NDArray[Any] | None = None
    codes: Callable[[str], NDArray[np.intp]] | None = None
    inside: NDArray[np.bool_] | None = None
    closed: Mapping[str, Closed] = field(default_factory=dict)
    jackknife: Callable[[], F64] | None = None
    point: F64 | None = None
    offset: float = 0.0
    chunk: int = CHUNK_ELEMENTS
    prepare: Callable[[], Tally] | None = None

    def ready(self) -> Tally:
        """The tally with its rows: itself, or the one ``prepare`` makes (a domain whose
        rows cost time to make and whose closed forms may cover every key makes them only
        when a resample is drawn; the engine calls this before drawing)."""
        return self if self.prepare is None else self.prepare()

    @property
    def rows(self) -> int:
        """The number of distinct rows."""
        return int(np.size(self.multiplicity))

    def unit_rows(self) -> NDArray[np.intp]:
        """Each unit's row (the identity when every unit is its own row)."""
        return np.arange(self.rows, dtype=np.intp) if self.unit is None else self.unit

    def estimate(self) -> F64:
        """The values of the data itself (every row taken as often as it stands for), or
        the domain's ``point``."""
        if self.point is not None:
            return self.point
        w = np.asarray(self.multiplicity, dtype=np.float64)[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.values(w), dtype=np.float64)[0]

    def gap(self, part: Tally | None = None) -> Tally:
        """The tally of each slice-minus-whole gap: one resample ``w`` of every row gives the
        whole set's values (``self``) and the slice's (``part``, default ``self``, over the
        same rows, at ``w * inside``); keys are the slice's keys the whole set also has.
        ``self.inside`` marks the slice's rows. Closed forms do not apply to a gap."""
        if self.prepare is not None:
            return self.ready().gap(part)
        assert self.inside is not None, "a gap needs the tally made with the slice's mask"
        p = self if part is None else part.ready()
        where = {k: j for j, k in enumerate(self.keys)}
        keys = tuple(k for k in p.keys if k in where)
        pj = np.array([j for j, k in enumerate(p.keys) if k in where], dtype=np.intp)
        wj = np.array([where[k] for k in keys], dtype=np.intp)
        inside = self.inside.astype(np.float64)

        def values(w: F64) -> F64:
            return p.values(w * inside)[:, pj] - self.values(w)[:, wj]

        return replace(self, keys=keys, values=values, closed={}, jackknife=None, point=None)


def leave_one_out(values: Callable[[F64], F64], multiplicity: NDArray[np.int64]) -> F64:
    """The jackknife (m, k) of a ``values`` of weighted row sums: row ``r`` left out once,
    ``values(multiplicity - e_r)`` (rows standing for no unit: the estimate), in chunks.

    Example:
        >>> leave_one_out(lambda w: w @ np.array([[1.0], [3.0]]) / w.sum(1, keepdims=True),
        ...               np.array([1, 1])).tolist()
        [[3.0], [1.0]]
    """
    m = np.asarray(multiplicity, dtype=np.float64)
    parts, step = [], max(1, CHUNK_ELEMENTS // max(1, m.size))
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(0, m.size, step):
            rows = np.arange(i, min(m.size, i + step))
            w = np.repeat(m[None, :], rows.size, axis=0)
            w[np.arange(rows.size), rows] -= 1.0
            w[m[rows] == 0] = m
            parts.append(np.asarray(values(w), dtype=np.float64))
    return np.concatenate(parts, axis=0)


@runtime_checkable
class Tallied(Protocol):
    """The contract's tally side: an evaluator that can carry intervals gives its tallies
    (one bootstrap each) of the data it holds; the engine needs nothing else from it."""

    def tally(self) -> Sequence[Tally]: ...
