"""The interval of an average over datasets (``llm average --ci``): a stratified bootstrap
over each dataset's stored items.

The average of a metric is the mean over the datasets where the metric is defined
(:mod:`assay.llm.suites.average`). Its datasets are independent samples, so the bootstrap
is stratified: every resample draws each dataset's ``n_d`` test rows from its own rows with
replacement (each dataset its own random stream, :func:`stratum_seed`), scores each
dataset's resample as its run was scored, and averages the resampled metrics over the
datasets where they are defined (``NaN`` when none is; such resamples are left out of the
percentile interval, as everywhere in :mod:`assay.intervals`).

**The unit and its state.** An LLM fairness run's unit is a test row: its target, its group
(privileged or not), the answer to its prompt and to its counterfactual prompt, coded as in
:mod:`assay.llm.suites.fairness_metrics`. The store keeps every call's parsed answer, and
(since the ``info`` column) the row's facts (``LLMTask.item_info``), so the
:class:`~assay.llm.suites.fairness_metrics.LLMFairnessEvaluator` arguments come back from
the stored item rows alone (:func:`stored_args`), no data file and no model call. Rows with
equal codes collapse (at most 80 distinct rows); each distinct row's evaluator state (its
counts) is one vector, so a resample's state is the count-weighted sum of them (the
evaluator's state is additive: ``merge`` sums it), and the resample's metrics are the
evaluator's own records of that state (``from_state(...).compute()``: the same formulas
and the same undefined cases as the point estimate; a loop over resamples on 20 counts,
never over items).

An evaluation whose items cannot be scored again (stored without items, or before the
``info`` column) gives every averaged record ``ci_undefined`` with the reason, and so does
one whose items do not give its stored values back.

Example:
    >>> args = {"target": [1, 0, 1, 0], "predicted": [1, 0, 0, -1],
    ...         "privileged": [1, 1, 0, 0], "counterfactual": [1, 1, -1, -1]}
    >>> rows, mult = stratum_units(args)
    >>> rows.shape, mult.tolist()
    ((4, 4), [1, 1, 1, 1])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from assay.collapsing import collapse
from assay.intervals import CIOptions, bootstrap, percentile
from assay.llm.suites.fairness_metrics import ERROR, INVALID, NOT_ASKED, LLMFairnessEvaluator
from assay.results import Metric, MetricSet

__all__ = ["FIELDS", "stored_args", "stratum_units", "stratum_seed", "attach_average_intervals"]

#: The evaluator's ``add`` arguments, in the column order of a unit row.
FIELDS = ("target", "predicted", "privileged", "counterfactual")
_FACTS = ("row", "target", "privileged", "counterfactual")
F64 = NDArray[np.float64]
Args = Mapping[str, Any]


class StoredItem(Protocol):
    """What :func:`stored_args` reads of a stored item row (``assay.store.ItemRecord``)."""

    item_id: str
    ok: bool
    parsed: Any
    info: Mapping[str, Any] | None


def answer_code(parsed: Any) -> int:
    """The code of a stored parsed answer: no parsed result (a call error, or a reply the
    driver refused, stored as ``{"invalid": reason}``) is an error, as in the run."""
    if not isinstance(parsed, Mapping) or "valid" not in parsed:
        return ERROR
    return int(bool(parsed["predicted"])) if parsed["valid"] else INVALID


def stored_args(items: Sequence[StoredItem] | None) -> tuple[dict[str, list[int]] | None, str]:
    """The evaluator's ``add`` arguments (one entry per test row) from a stored LLM fairness
    run's item rows, or ``None`` and why they cannot be had."""
    if not items:
        return None, "stored without items"
    originals: list[tuple[Mapping[str, Any], bool, int]] = []
    cf: dict[int, int] = {}
    for it in items:
        info = it.info
        if not isinstance(info, Mapping) or any(k not in info for k in _FACTS):
            return None, (
                f"item {it.item_id!r} was stored without its row's facts (target, group): "
                "stored before assay kept them; run it again (answered calls come from the "
                "cache)"
            )
        code = answer_code(it.parsed)
        if info["counterfactual"]:
            cf[int(info["row"])] = code
        else:
            originals.append((info, bool(it.ok), code))
    if not originals:
        return None, "no original prompt among its items"
    return {
        "target": [int(bool(i["target"])) for i, _, _ in originals],
        "predicted": [code for _, _, code in originals],
        "privileged": [int(bool(i["privileged"])) for i, _, _ in originals],
        # a counterfactual counts only where its original call did not fail (as in the run)
        "counterfactual": [
            cf.get(int(i["row"]), NOT_ASKED) if ok else NOT_ASKED for i, ok, _ in originals
        ],
    }, ""


def stratum_units(args: Args) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct unit rows (columns :data:`FIELDS`) of one dataset and how many test rows
    each stands for (the multiplicities its resamples draw from)."""
    units = np.stack([np.asarray(args[k], dtype=np.int64) for k in FIELDS], axis=1)
    rows, mult, _ = collapse(units)
    return np.asarray(rows, dtype=np.int64), mult


def stratum_seed(seed: int, j: int) -> int:
    """The seed of the ``j``-th dataset's resamples: ``SeedSequence([seed, j])``'s first
    word, so the datasets draw independent streams and ``seed`` fixes them all."""
    return int(np.random.SeedSequence([int(seed), int(j)]).generate_state(1)[0])


def _overall(ms: MetricSet, kind: str) -> float:
    from assay.llm.suites.average import _overall as pick

    m = pick(ms, kind)
    v = None if m is None else m.value
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan


class _Stratum:
    """One dataset's distinct units as evaluator state vectors."""

    def __init__(self, args: Args) -> None:
        self.rows, self.mult = stratum_units(args)
        probe = LLMFairnessEvaluator().state()
        self.config = probe.pop("config")
        self.layout = [(k, np.shape(v)) for k, v in sorted(probe.items())]
        states = []
        for r in self.rows:
            ev = LLMFairnessEvaluator().add(**{k: [int(x)] for k, x in zip(FIELDS, r)})
            st = ev.state()
            states.append(np.concatenate([np.ravel(st[k]) for k, _ in self.layout]))
        self.states = np.asarray(states, dtype=np.float64)  # (distinct rows, counts)

    def statistic(self, kinds: Sequence[str]) -> Callable[[F64], F64]:
        """:meth:`metrics` of ``kinds`` as a bootstrap statistic."""
        return lambda weights: self.metrics(weights, kinds)

    def metrics(self, weights: F64, kinds: Sequence[str]) -> F64:
        """The ``kinds`` of each resample's state (weights: (b, distinct rows)) -> (b, k)."""
        summed = np.rint(np.asarray(weights, dtype=np.float64) @ self.states).astype(np.int64)
        out = np.full((summed.shape[0], len(kinds)), np.nan)
        for i, vec in enumerate(summed):
            state: dict[str, Any] = {"config": self.config}
            at = 0
            for k, shape in self.layout:
                size = int(np.prod(shape))
                state[k] = vec[at : at + size].reshape(shape)
                at += size
            ms = LLMFairnessEvaluator.from_state(state).compute()
            out[i] = [_overall(ms, kind) for kind in kinds]
        return out


def attach_average_intervals(
    records: Sequence[Metric],
    evaluations: Mapping[str, tuple[int, MetricSet]],
    items: Mapping[str, Sequence[StoredItem] | None],
    opts: CIOptions,
) -> None:
    """Put the stratified bootstrap interval on the defined averaged ``records`` in place
    (``evaluations``: dataset -> (id, its stored records); ``items``: dataset -> its stored
    item rows)."""
    kinds = [m.type for m in records]
    strata, why = [], None
    for dataset, (eid, ms) in evaluations.items():
        args, reason = stored_args(items.get(dataset))
        if args is None:
            why = f"evaluation {eid} ({dataset}): {reason}"
            break
        st = _Stratum(args)
        again = st.metrics(st.mult[None, :].astype(np.float64), kinds)[0]
        stored = np.array([_overall(ms, k) for k in kinds])
        if not np.array_equal(again, stored, equal_nan=True):
            j = int(np.flatnonzero(~((again == stored) | (np.isnan(again) & np.isnan(stored))))[0])
            why = (
                f"evaluation {eid} ({dataset}): its items give {kinds[j]} = {again[j]}, "
                f"its record says {stored[j]}"
            )
            break
        strata.append(st)
    if why is not None:
        for m in records:
            if m.value is not None:
                m.parameters.update(opts.parameters(None, None, "bootstrap", undefined=why))
        return
    reps = []  # per dataset: (resamples, kinds)
    for j, st in enumerate(strata):
        stat = st.statistic(kinds)
        reps.append(bootstrap(stat, st.mult, opts.num_bootstrap, stratum_seed(opts.seed, j)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # no dataset defines it: NaN
        mean = np.nanmean(np.stack(reps), axis=0)
    lo, hi = percentile(mean, opts.level)
    for j, m in enumerate(records):
        if m.value is not None:
            none = "no resample defines it" if np.isnan(lo[j]) else None
            m.parameters.update(opts.parameters(float(lo[j]), float(hi[j]), "bootstrap", none))
