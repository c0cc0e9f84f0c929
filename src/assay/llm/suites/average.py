"""Average LLM fairness over datasets: the mean of each metric over their last evaluations.

For each dataset, the caller passes the metric records of its last finished
``llm_fairness`` evaluation. For each of ``StatisticalParityDifference``,
``DisparateImpact``, ``AverageOddsDifference``, ``EqualOpportunityDifference``,
``Accuracy``, ``Precision``, ``Recall`` and the overall ``CounterfactualChangeRate``, the
result is the mean over the evaluations where the metric has a value: a metric that is
``null`` for a dataset is left out of that metric's mean (not counted as 0), and the record
says which evaluations it averaged (``parameters.evaluations``, ``parameters.datasets``)
and how many (``parameters.n``). A metric no evaluation has is ``null`` with the reason.

**The interval** (``llm average --ci``): a stratified bootstrap over each dataset's stored
items. The datasets are independent samples, so every resample draws each dataset's ``n_d``
test rows from its own rows with replacement (each dataset its own random stream,
:func:`stratum_seed`), scores each
dataset's resample as its run was scored, and averages the resampled metrics over the
datasets where they are defined (``NaN`` when none is; such resamples are left out of the
percentile interval, as everywhere in :mod:`assay.uncertainty.intervals`).

**The unit and its state.** An LLM fairness run's unit is a test row: its target, its group
(privileged or not), the answer to its prompt and to its counterfactual prompt, coded as in
:mod:`assay.llm.suites.fairness_metrics`. The store keeps every call's parsed answer, and
(since the ``info`` column) the row's facts (``LLMTask.item_info``), so the
:class:`~assay.llm.suites.fairness_metrics.LLMFairnessEvaluator` arguments come back from
the stored item rows alone (:func:`stored_args`), no data file and no model call. Rows with
equal codes collapse (at most 80 distinct rows); each distinct row's evaluator state (its
counts) is one vector, so a resample's counts are the count-weighted sum of them, and the
evaluator's item tally (:func:`~assay.llm.suites.tally.item_tally`) gives every
resample's records at once with the point estimate's own formulas and undefined cases (no
evaluator runs per resample).

An evaluation whose items cannot be scored again (stored without items, or before the
``info`` column) gives every averaged record ``ci_undefined`` with the reason, and so does
one whose items do not give its stored values back.

Example:
    >>> from assay.results import Metric, MetricSet
    >>> a = MetricSet([Metric("Accuracy", 0.5), Metric("Recall", None, {"undefined": "x"})])
    >>> b = MetricSet([Metric("Accuracy", 0.7), Metric("Recall", 0.4)])
    >>> ms = average_fairness({"pisa": (1, a), "compas": (2, b)})
    >>> round(ms.get("Accuracy").value, 6), ms.get("Recall").value, ms.get("Recall").parameters["n"]
    (0.6, 0.4, 1)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

import assay.llm.suites.records as records
from assay.llm.slicing import record_key
from assay.llm.suites.declared import FAIRNESS
from assay.llm.suites.fairness_metrics import ERROR, INVALID, NOT_ASKED, LLMFairnessEvaluator
from assay.llm.suites.records import overall
from assay.results import Metric, MetricSet
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import CIOptions, bootstrap, ci_options, percentile

__all__ = [
    "AVERAGED",
    "FIELDS",
    "attach_average_intervals",
    "average_fairness",
    "stored_args",
    "stratum_seed",
    "stratum_units",
]

#: The metrics averaged: every LLM fairness type with a number as value (those a slice
#: repeats), in the order the evaluator emits them.
AVERAGED = FAIRNESS.sliced


def average_fairness(
    evaluations: Mapping[str, tuple[int, MetricSet]],
    *,
    items: Mapping[str, Sequence[Any] | None] | None = None,
    ci: float | None = None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> MetricSet:
    """``{dataset: (evaluation id, its metrics)}`` -> one mean record per metric.

    With ``ci`` (and ``ci_method``, ``num_bootstrap``, ``seed``), each defined mean gets a
    stratified bootstrap interval over the datasets' items (``items``: dataset -> its stored
    item rows, ``Store.get(id, items=True).items``; below).
    Every method gives the bootstrap (a mean over datasets is no proportion nor AUC), and
    the records say so in ``ci_method``.
    """
    opts = ci_options(ci, ci_method, num_bootstrap, seed)
    out = []
    for kind in AVERAGED:
        ids, names, values = [], [], []
        for dataset, (eid, ms) in evaluations.items():
            m = records.overall(ms, kind)
            if m is not None and isinstance(m.value, (int, float)):
                ids.append(eid)
                names.append(dataset)
                values.append(float(m.value))
        mean = sum(values) / len(values) if values else None
        out.append(records.averaged(kind, mean, evaluations=ids, datasets=names))
    if opts is not None:
        attach_average_intervals(out, evaluations, items or {}, opts)
    return MetricSet(out)


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


def _value(m: Metric | None) -> float:
    v = None if m is None else m.value
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan


class _Stratum:
    """One dataset's distinct units: its records (the evaluator on every test row) and its
    item tally (every resample's records at once)."""

    def __init__(self, args: Args) -> None:
        self.rows, self.mult = stratum_units(args)
        columns = {k: self.rows[:, i].tolist() for i, k in enumerate(FIELDS)}
        self.tally = LLMFairnessEvaluator().item_tally(**columns)
        every = {k: np.repeat(self.rows[:, i], self.mult).tolist() for i, k in enumerate(FIELDS)}
        self.records = LLMFairnessEvaluator().add(**every).compute()

    def statistic(self, kinds: Sequence[str]) -> Callable[[F64], F64]:
        """The overall records of ``kinds`` of each resample (weights: (b, distinct rows))
        -> (b, k); NaN where undefined or where the data has no such record."""
        col = {k: j for j, k in enumerate(self.tally.keys)}
        found = [overall(self.records, k) for k in kinds]
        at = np.array([-1 if m is None else col.get(record_key(m.type, m.parameters), -1)
                       for m in found])  # fmt: skip
        ok = at >= 0

        def statistic(weights: F64) -> F64:
            v = self.tally.values(np.asarray(weights, np.float64))
            out = np.full((v.shape[0], at.size), np.nan)
            out[:, ok] = v[:, at[ok]]
            return out

        return statistic


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
        again = np.array([_value(overall(st.records, k)) for k in kinds])
        stored = np.array([_value(overall(ms, k)) for k in kinds])
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
