"""The metrics of LLM fairness: group fairness, accuracy and counterfactual change rates.

Each test point has a target (the dataset's positive label or not), a group (privileged
= the sensitive value declared second: PISA male 1, COMPAS White), the model's answer
coded ``1`` (positive), ``0`` (negative), ``-1`` (invalid) or ``-2`` (call error), and the
answer to the counterfactual prompt (the same prompt with the sensitive value swapped),
coded the same way or ``-3`` when it was not asked (the original call failed).

On the valid answers only:

* ``StatisticalParityDifference``, ``DisparateImpact``, ``AverageOddsDifference`` and
  ``EqualOpportunityDifference`` are :mod:`assay.fairness`'s kernels on the per-group
  confusion counts (unprivileged minus, or over, privileged); each is ``null`` with the
  reason when a group has no valid answer, or when the kernel's own condition fails;
* ``Accuracy = (TP + TN) / valid``, ``Precision = TP / (TP + FP)``,
  ``Recall = TP / (TP + FN)``, ``null`` with the reason on a zero denominator.

``ResponseCounts`` is ``{valid, invalid, errors}`` of the original prompts.
``CounterfactualChangeRate = changed / compared`` over the points where neither call
failed, overall and per original group (``parameters.group``). A point *changed* when one
answer is valid and the other is not, or both are valid and differ; two invalid answers
never count as a change, whatever their texts. When no compared point has a valid answer
in either variant, nothing was measured: the rate is ``null`` with the reason (a 0.0 there
would read as "perfectly counterfactually fair"), overall and per group alike.

Example:
    >>> ev = LLMFairnessEvaluator(group_column="male", groups=["0", "1"])
    >>> _ = ev.add(target=[1, 0, 1, 0], predicted=[1, 0, 0, -1],
    ...            privileged=[1, 1, 0, 0], counterfactual=[1, 1, -1, -1])
    >>> ms = ev.compute()
    >>> ms.get("Accuracy").value, ms.get("CounterfactualChangeRate", group="1").value
    (0.6666666666666666, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import assay.llm.suites.records as records
from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.fairness.compute import FAIRNESS_METRICS, FAIRNESS_VALUES, GroupCounts
from assay.fairness.tally import attach_intervals
from assay.llm.slicing import TalliedEvaluator
from assay.llm.suites.declared import FAIRNESS, FAIRNESS_OPTIONS
from assay.llm.suites.tally import item_tally
from assay.ratios import divide
from assay.results import Metric, MetricSet
from assay.uncertainty.intervals import interval_from
from assay.uncertainty.tally import Tally

__all__ = ["LLMFairnessEvaluator", "POSITIVE", "NEGATIVE", "INVALID", "ERROR", "NOT_ASKED"]

POSITIVE, NEGATIVE, INVALID, ERROR, NOT_ASKED = 1, 0, -1, -2, -3


class LLMFairnessEvaluator(TalliedEvaluator):
    """Accumulates the counts behind every LLM fairness metric (see the module docstring).

    Args:
        group_column: the sensitive column (for the records' ``parameters``).
        groups: its two values, ``[unprivileged, privileged]``.
        ci, ci_method, num_bootstrap, seed: a bootstrap interval over the points on every
            numeric record.
    """

    OPTIONS = FAIRNESS_OPTIONS
    METRICS = FAIRNESS

    def __init__(
        self,
        *,
        group_column: str = "group",
        groups: Sequence[str] = ("0", "1"),
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
    ) -> None:
        self.ci = interval_from(self.options)
        self.group_column = group_column
        self.groups = list(groups)
        # counts: tp[2], fp[2], fn[2], tn[2] of the valid answers; valid, invalid and error
        # responses (original, counterfactual); compared[2], changed[2], informative[2]
        self._confusion: np.ndarray
        self._responses: np.ndarray
        self._cf_responses: np.ndarray
        self._cf: np.ndarray
        self.add_state("_confusion", np.zeros(8, np.int64), "sum")
        self.add_state("_responses", np.zeros(3, np.int64), "sum")
        self.add_state("_cf_responses", np.zeros(3, np.int64), "sum")
        self.add_state("_cf", np.zeros(6, np.int64), "sum")

    def add(
        self, target: Any, predicted: Any, privileged: Any, counterfactual: Any = None
    ) -> LLMFairnessEvaluator:
        total = _item_cells(target, predicted, privileged, counterfactual).sum(axis=0)
        self._confusion += total[:8]
        self._responses += total[8:11]
        self._cf_responses += total[11:14]
        self._cf += total[14:]
        return self

    def item_tally(
        self, target: Any, predicted: Any, privileged: Any, counterfactual: Any = None
    ) -> Tally:
        """Each point's cells: its confusion cell (valid answers), its original and
        counterfactual response kind, and whether it was compared, changed, informative in
        its group (:func:`~assay.llm.suites.tally.item_tally`)."""
        cells = _item_cells(target, predicted, privileged, counterfactual).astype(np.float64)
        col = self.group_column
        kinds = [*FAIRNESS_VALUES, *_RATES, *["CounterfactualChangeRate"] * 3]
        params: list[dict[str, Any]] = [{"group_column": col, "privileged": self.groups[1]}] * 4
        params += [{}] * 3 + [{"group_column": col, "group": g} for g in (None, *self.groups)]

        def values(flat: np.ndarray) -> np.ndarray:
            return np.concatenate([group_values(flat[:, :8]), change_values(flat[:, 14:])], 1)

        return item_tally(cells, list(zip(kinds, params)), values)

    def counts(self) -> GroupCounts:
        """Confusion counts of the valid answers, ``[unprivileged, privileged]``."""
        tp, fp, fn, tn = self._confusion.reshape(4, 2)
        return GroupCounts(tp=tp.copy(), fp=fp.copy(), fn=fn.copy(), tn=tn.copy())

    def _compute(self) -> MetricSet:
        out = self._group_records(self._confusion)
        if self.ci is not None:  # items: the valid answers' cells, then invalid and errors
            cells = np.concatenate([self._confusion, self._responses[1:]])
            attach_intervals(out, cells, lambda k: group_values(k[:, :8]), self.ci)
        for responses, cf in ((self._responses, False), (self._cf_responses, True)):
            v, i, e = (int(x) for x in responses)
            out.append(records.response_counts(v, i, e, counterfactual=cf))
        changes = self._change_records(self._cf)
        if self.ci is not None:
            # items per group: changed, unchanged with a valid answer, two invalid answers;
            # then the points not compared
            compared, changed, informative = self._cf[:2], self._cf[2:4], self._cf[4:]
            rest = int(self._responses.sum()) - int(compared.sum())
            cells = np.array(
                [
                    [changed[k], informative[k] - changed[k], compared[k] - informative[k]]
                    for k in (0, 1)
                ]
            ).ravel()
            resampled = np.append(cells, rest)
            attach_intervals(changes, resampled, lambda k: change_values(_compared(k)), self.ci)
        return MetricSet(out + changes)

    def _group_records(self, confusion: np.ndarray) -> list[Metric]:
        """The four fairness metrics and Accuracy, Precision, Recall of the valid answers'
        confusion counts ``tp[2], fp[2], fn[2], tn[2]`` (values: :func:`group_values`)."""
        tp, fp, fn, tn = np.asarray(confusion, dtype=np.int64).reshape(4, 2)
        c = GroupCounts(tp=tp.copy(), fp=fp.copy(), fn=fn.copy(), tn=tn.copy())
        values = group_values(np.asarray(confusion)[None, :])[0]
        params = {"group_column": self.group_column, "privileged": self.groups[1]}
        out: list[Metric] = []
        empty = [n for n, size in zip(("unprivileged", "privileged"), c.size) if size == 0]
        for value, (name, kernel) in zip(values, FAIRNESS_METRICS.items()):
            why = f"no valid answer in the {empty[0]} group" if empty else _reason(kernel, c)
            out.append(records.fairness(name, value, reason=why, **params))
        tps, fps, fns, tns = (int(x.sum()) for x in (c.tp, c.fp, c.fn, c.tn))
        dens = (tps + fps + fns + tns, tps + fps, tps + fns)
        for value, den, (name, why) in zip(values[4:], dens, _RATES.items()):
            out.append(_ratio(name, value, den, why))
        return out

    def _change_records(self, cf: np.ndarray) -> list[Metric]:
        """``CounterfactualChangeRate`` overall and per group from ``compared[2], changed[2],
        informative[2]`` (values: :func:`change_values`); ``null`` when nothing was compared
        or no compared point has a valid answer in either variant (a rate of 0 would then
        claim fairness unmeasured)."""
        values = change_values(np.asarray(cf)[None, :])[0]
        compared, informative = cf[:2], cf[4:]
        col, name = self.group_column, "CounterfactualChangeRate"
        out = []
        for value, n, inf, group in zip(
            values, [compared.sum(), *compared], [informative.sum(), *informative],
            [None, *self.groups],
        ):  # fmt: skip
            if n > 0 and inf == 0:
                why = "no valid answer in either variant of any compared point"
                out.append(records.rate(name, None, n=int(n), reason=why, group_column=col,
                                        group=group))  # fmt: skip
            else:
                why = "no point where both the original and the counterfactual call succeeded"
                out.append(_ratio(name, value, n, why, group_column=col, group=group))
        return out


#: The rates of the valid answers, and why each is undefined.
_RATES = {
    "Accuracy": "no valid answer",
    "Precision": "no positive prediction (TP + FP = 0)",
    "Recall": "no positive label among valid answers (TP + FN = 0)",
}


def group_values(confusion: np.ndarray) -> np.ndarray:
    """SPD, DI, AOD, EOD, Accuracy, Precision, Recall (b, 7) of confusion counts (b, 8):
    ``tp[2], fp[2], fn[2], tn[2]`` (unprivileged, privileged); NaN where the record is
    ``null`` (a group without a valid answer makes all four fairness metrics undefined).
    The one formula of the records and of every resample's.

    Example:
        >>> group_values(np.array([[1, 1, 0, 1, 0, 0, 1, 1]])).round(3).tolist()
        [[-0.167, 0.75, -0.25, 0.0, 0.8, 0.667, 1.0]]
    """
    c = GroupCounts.of_cells(np.asarray(confusion, np.float64).reshape(-1, 4, 2))
    empty = (np.asarray(c.size) == 0).any(axis=-1)
    fair = [np.where(empty, np.nan, f(c)) for f in FAIRNESS_VALUES.values()]
    tps, fps, fns, tns = (np.asarray(x).sum(axis=-1) for x in (c.tp, c.fp, c.fn, c.tn))
    total = tps + fps + fns + tns
    rates = [divide(tps + tns, total), divide(tps, tps + fps), divide(tps, tps + fns)]
    return np.stack([*fair, *rates], axis=1)


def change_values(cf: np.ndarray) -> np.ndarray:
    """``CounterfactualChangeRate`` overall and per group (b, 3) of ``compared[2],
    changed[2], informative[2]`` (b, 6); NaN where nothing informative was compared.

    Example:
        >>> change_values(np.array([[2, 1, 1, 0, 2, 0]])).tolist()
        [[0.3333333333333333, 0.5, nan]]
    """
    cf = np.asarray(cf, dtype=np.float64)
    compared, changed, informative = cf[:, :2], cf[:, 2:4], cf[:, 4:]
    num = np.column_stack([changed.sum(axis=1), changed])
    den = np.column_stack([compared.sum(axis=1), compared])
    inf = np.column_stack([informative.sum(axis=1), informative])
    return np.where(inf == 0, np.nan, divide(num, den))


def _compared(k: np.ndarray) -> np.ndarray:
    """``compared[2], changed[2], informative[2]`` (b, 6) of (changed, unchanged valid,
    both invalid) x group counts (b, 7; the last: points not compared)."""
    k = np.asarray(k, dtype=np.float64)
    compared = [k[:, 0] + k[:, 1] + k[:, 2], k[:, 3] + k[:, 4] + k[:, 5]]
    return np.column_stack([*compared, k[:, 0], k[:, 3], k[:, 0] + k[:, 1], k[:, 3] + k[:, 4]])


def _reason(kernel: Any, c: GroupCounts) -> str | None:
    """Why ``kernel`` is undefined on ``c`` (None where it is defined)."""
    try:
        kernel(c)
    except UndefinedMetricError as exc:
        return exc.reason
    return None


def _ratio(name: str, value: Any, den: Any, why: str, **group: Any) -> Metric:
    reason = f"requires a non-zero denominator: {why}"
    return records.rate(name, float(value), n=int(den), reason=reason, **group)


def _item_cells(
    target: Any, predicted: Any, privileged: Any, counterfactual: Any = None
) -> np.ndarray:
    """Each point's contribution (n, 20) to the counts: ``tp, fp, fn, tn`` x group (valid
    answers), the original answer's and the counterfactual's (valid, invalid, errors), and
    ``compared, changed, informative`` x group."""
    t = _codes(target, "target", (0, 1)).astype(bool)
    p = _codes(predicted, "predicted", (POSITIVE, NEGATIVE, INVALID, ERROR))
    g = _codes(privileged, "privileged", (0, 1))
    cf = (
        np.full(p.shape, NOT_ASKED, np.int64)
        if counterfactual is None
        else _codes(counterfactual, "counterfactual", (1, 0, -1, -2, -3))
    )
    check_same_length(target=t, predicted=p, privileged=g, counterfactual=cf)
    cell = np.where(t, np.where(p == POSITIVE, 0, 2), np.where(p == POSITIVE, 1, 3))
    both = (p != ERROR) & (cf != ERROR) & (cf != NOT_ASKED)
    changed = both & (((p >= 0) != (cf >= 0)) | ((p >= 0) & (cf >= 0) & (p != cf)))
    informative = both & ((p >= 0) | (cf >= 0))  # at least one variant answered validly
    out = np.zeros((p.shape[0], 20), dtype=np.int64)
    rows = np.arange(p.shape[0])
    out[rows, cell * 2 + g] = p >= 0
    for at, a in ((8, p), (11, cf)):
        out[:, at : at + 3] = np.column_stack([a >= 0, a == INVALID, a == ERROR])
    for at, flag in ((14, both), (16, changed), (18, informative)):
        out[rows, at + g] = flag
    return out


def _codes(values: Any, field: str, allowed: tuple[int, ...]) -> np.ndarray:
    a = as_1d(values, source="LLMFairnessEvaluator.add", field=field).astype(np.int64)
    bad = ~np.isin(a, allowed)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(
            f"expected one of {list(allowed)}, got {a[i]}",
            source="LLMFairnessEvaluator.add",
            record=i,
            field=field,
        )
    return a
