"""Paired comparison of two runs' records on the units they share (``assay compare``).

A run here is its records and, where its units were kept, the evaluator they rebuild
(:class:`RunUnits`). For every record both runs have, :func:`paired_records` gives a
:class:`~assay.compare.paired.Paired`: the difference (the second run minus the first),
its interval, the two-sided p-value and the test's name, on the shared units:

Each test has its own interval, one rule per test (``Paired.ci_method``):

``delong``
    a ROC AUC whose evaluator gives each unit's label and score (``unit_values``): DeLong's
    test and its normal interval;
``mcnemar``
    a proportion of units right or wrong (``unit_values`` gives 0/1 per unit): the exact
    McNemar p-value and Newcombe's hybrid score interval of paired proportions;
``paired_t``
    a mean of per-unit values (``unit_values`` gives them): the paired t test and its t
    interval;
``paired_bootstrap``
    every other record of a tally (mAP, QWK, corpus BLEU, a ratio): the p-value from the
    bootstrap distribution of the difference, one set of resample weights for both runs,
    and the normal interval with the bootstrap's standard error
    (:func:`~assay.compare.bootstrap.paired_bootstrap`).

An evaluator's ``unit_values(key)`` (optional) returns ``(test, ids, values, labels)``
for one tally key: ``test`` is ``"delong"`` (``values`` the scores, ``labels`` 0/1),
``"mcnemar"`` (``values`` 0/1) or ``"paired_t"`` (``values`` per unit), or ``None`` when it
has none. The values are used only if they give the run's own record value (their mean,
or the AUC), so a hook can never change a number silently.

A record is matched to its tally key by the evaluator's ``record_tally_key(m)`` (its own
map; None for a record no tally holds, e.g. one datum's), else its ``tally_where`` (the
parameter names after the type, as its tallies key records), else by its parameter values.
A slice's record is never paired through the whole set's tally.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from assay.compare.bootstrap import Pairing, pair_units, paired_bootstrap
from assay.compare.paired import Paired, delong_test, mcnemar, paired_t
from assay.results import Metric
from assay.uncertainty.slices import record_key
from assay.uncertainty.tally import Key, Tally

__all__ = ["RunUnits", "PairedRecords", "paired_records", "tally_key", "shared_units"]


@dataclass
class RunUnits:
    """One run's evaluator rebuilt from its units (``None``: none kept), its tallies made
    on first use."""

    evaluator: Any = None
    _tallies: list[Tally] | None = None

    @property
    def tallies(self) -> list[Tally]:
        if self._tallies is None:
            ev = self.evaluator
            self._tallies = [] if ev is None else [t for t in ev.tally()]
        return self._tallies

    def find(self, m: Metric) -> tuple[Tally, Key] | None:
        """The tally holding record ``m`` and its key there (none for a slice's record: its
        units are the slice's, not the tally's)."""
        if "slice_column" in m.parameters:
            return None
        for t in self.tallies:
            k = tally_key(self.evaluator, m, t.keys)
            if k is not None:
                return t, k
        return None


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def tally_key(ev: Any, m: Metric, keys: Sequence[Key]) -> Key | None:
    """The key among ``keys`` of record ``m``: by the evaluator's ``tally_where`` names, or
    the one key of ``m``'s type whose every defined value is one of ``m``'s parameters (the
    most such values; ``None`` when two tie)."""
    own: Callable[[Metric], Key | None] | None = getattr(ev, "record_tally_key", None)
    if own is not None:  # the evaluator's own record -> key (None: a per-datum record)
        k = own(m)
        return k if k in keys else None
    where = getattr(ev, "tally_where", None)
    if where is not None:
        k = record_key(m, where)
        return k if k in keys else None
    values = list(m.parameters.values())
    best: list[Key] = []
    most = -1
    for k in keys:
        if k[0] != m.type:
            continue
        left, hit = list(values), 0
        for v in k[1:]:
            if v is None:
                continue
            j = next((i for i, x in enumerate(left) if _same(x, v)), None)
            if j is None:
                break
            left.pop(j)
            hit += 1
        else:
            if hit > most:
                best, most = [k], hit
            elif hit == most:
                best.append(k)
    return best[0] if len(best) == 1 else None


def shared_units(a: Tally, b: Tally) -> Pairing | None:
    """The pairing of two tallies by unit id; ``None`` when either has no ids or stands
    for several units per entry (a compact form: its entries are not units)."""
    for t in (a, b):
        if t.ids is None or (t.unit_weight is not None and np.any(t.unit_weight != 1)):
            return None
    return pair_units(a, b)


@dataclass
class PairedRecords:
    """What :func:`paired_records` found: each record's comparison, and the units of the
    pairing (the largest of the run's tallies): shared, only in the first, only in the
    second."""

    results: dict[Any, Paired]
    n_paired: int = 0
    only_a: int = 0
    only_b: int = 0
    paired: bool = False
    #: whether any record was found in both runs' tallies
    tallied: bool = False


def _values(ev: Any, key: Key) -> tuple[str, Any, Any, Any] | None:
    hook: Callable[[Key], Any] | None = getattr(ev, "unit_values", None)
    return None if hook is None else hook(key)


def _closed(
    a: RunUnits, b: RunUnits, ka: Key, kb: Key, ma: Metric, mb: Metric, level: float
) -> Paired | None:
    """The closed-form test of one record, when both evaluators give per-unit values that
    reproduce their records."""
    va, vb = _values(a.evaluator, ka), _values(b.evaluator, kb)
    if va is None or vb is None or va[0] != vb[0]:
        return None
    test = va[0]
    ida, idb = np.asarray(va[1]), np.asarray(vb[1])
    xa, xb = np.asarray(va[2], dtype=np.float64), np.asarray(vb[2], dtype=np.float64)
    if not (_reproduces(test, va, ma) and _reproduces(test, vb, mb)):
        return None
    shared, ia, ib = np.intersect1d(ida, idb, assume_unique=True, return_indices=True)
    if shared.size == 0:
        return None
    if test == "delong":
        la, lb = np.asarray(va[3])[ia], np.asarray(vb[3])[ib]
        if not np.array_equal(la, lb):
            return None  # the runs disagree on a unit's truth: no paired ROC test
        return delong_test(la.astype(int), _finite_ranks(xa[ia]), _finite_ranks(xb[ib]), level)
    if test == "mcnemar":
        return mcnemar(xa[ia], xb[ib], level)
    if test == "paired_t":
        return paired_t(xa[ia], xb[ib], level)
    return None


def _finite_ranks(x: np.ndarray) -> np.ndarray:
    """Scores with -inf / +inf (a label not predicted) moved just below / above the
    finite ones: the same order, so the same ranks and the same AUC."""
    finite = x[np.isfinite(x)]
    lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
    return np.where(x == -np.inf, lo - 1.0, np.where(x == np.inf, hi + 1.0, x))


def _reproduces(test: str, v: tuple[str, Any, Any, Any], m: Metric) -> bool:
    """Whether per-unit values give the record's own value."""
    if not isinstance(m.value, (int, float)) or isinstance(m.value, bool):
        return False
    x = np.asarray(v[2], dtype=np.float64)
    if x.size == 0 or np.isnan(x).any():
        return False
    if test == "delong":
        y = np.asarray(v[3]).astype(bool)
        if y.all() or not y.any():
            return False
        pos, neg = np.sort(x[y]), np.sort(x[~y])
        auc = float(
            (np.searchsorted(neg, pos, "left") + np.searchsorted(neg, pos, "right")).sum()
            / (2.0 * pos.size * neg.size)
        )
    else:
        auc = float(x.mean())
    return math.isclose(auc, float(m.value), rel_tol=1e-9, abs_tol=1e-12)


def paired_records(
    a: RunUnits,
    b: RunUnits,
    records: Mapping[Any, tuple[Metric, Metric]],
    *,
    level: float = 0.95,
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> PairedRecords:
    """Each record's paired comparison (see the module); ``records``: row -> (the first
    run's record, the second's). Records without a tally in both runs, or whose tallies
    share no unit, are left out (the caller shows them unpaired)."""
    out = PairedRecords({})
    pairs: dict[tuple[int, int], tuple[Tally, Tally, Pairing | None]] = {}
    boots: dict[tuple[int, int], dict[Key, Paired]] = {}
    biggest = -1
    for row, (ma, mb) in records.items():
        fa, fb = a.find(ma), b.find(mb)
        if fa is None or fb is None:
            continue
        (ta, ka), (tb, kb) = fa, fb
        out.tallied = True
        tag = (id(ta), id(tb))
        if tag not in pairs:
            ra, rb = ta.ready(), tb.ready()
            pairs[tag] = (ra, rb, shared_units(ra, rb))
            pairing = pairs[tag][2]
            if pairing is not None and pairing.n + pairing.only_a + pairing.only_b > biggest:
                biggest = pairing.n + pairing.only_a + pairing.only_b
                out.n_paired, out.only_a, out.only_b = pairing.n, pairing.only_a, pairing.only_b
                out.paired = out.paired or pairing.n > 0
        ra, rb, pairing = pairs[tag]
        if pairing is None or pairing.n == 0 or ka != kb:
            continue
        closed = _closed(a, b, ka, kb, ma, mb, level)
        if closed is not None:  # its own test and interval: no bootstrap
            out.results[row] = replace(closed, n=pairing.n) if closed.test == "delong" else closed
            continue
        if tag not in boots:  # one paired bootstrap per pair of tallies, made when needed
            boots[tag] = paired_bootstrap(
                ra, rb, level=level, num_bootstrap=num_bootstrap, seed=seed, pairing=pairing
            )
        res = boots[tag].get(ka)
        if res is not None:
            out.results[row] = res
    return out
