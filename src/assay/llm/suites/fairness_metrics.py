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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.evaluator import Evaluator
from assay.fairness.compute import FAIRNESS_METRICS, GroupCounts, group_counts
from assay.fairness.intervals import attach_intervals
from assay.intervals import ci_options
from assay.llm.suites import records
from assay.ratios import divide
from assay.results import Metric, MetricSet

__all__ = ["LLMFairnessEvaluator", "POSITIVE", "NEGATIVE", "INVALID", "ERROR", "NOT_ASKED"]

POSITIVE, NEGATIVE, INVALID, ERROR, NOT_ASKED = 1, 0, -1, -2, -3


class LLMFairnessEvaluator(Evaluator):
    """Accumulates the counts behind every LLM fairness metric (see the module docstring).

    Args:
        group_column: the sensitive column (for the records' ``parameters``).
        groups: its two values, ``[unprivileged, privileged]``.
    """

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
        self.ci = ci_options(ci, ci_method, num_bootstrap, seed)
        if len(groups) != 2:
            raise InvalidInputError(
                "expected two groups", source="LLMFairnessEvaluator", field="groups"
            )
        self.group_column = str(group_column)
        self.groups = [str(g) for g in groups]
        self._confusion = np.zeros(8, dtype=np.int64)  # tp[2], fp[2], fn[2], tn[2]
        self._responses = np.zeros(3, dtype=np.int64)  # valid, invalid, errors
        self._cf_responses = np.zeros(3, dtype=np.int64)
        self._cf = np.zeros(6, dtype=np.int64)  # compared[2], changed[2], informative[2]

    def config(self) -> dict[str, Any]:
        ci = self.ci.config() if self.ci else {}
        return {"group_column": self.group_column, "groups": self.groups, **ci}

    @property
    def is_empty(self) -> bool:
        return int(self._responses.sum()) == 0

    def add(
        self, target: Any, predicted: Any, privileged: Any, counterfactual: Any = None
    ) -> LLMFairnessEvaluator:
        t = _codes(target, "target", (0, 1)).astype(bool)
        p = _codes(predicted, "predicted", (POSITIVE, NEGATIVE, INVALID, ERROR))
        g = _codes(privileged, "privileged", (0, 1)).astype(bool)
        cf = (
            np.full(p.shape, NOT_ASKED, np.int64)
            if counterfactual is None
            else _codes(counterfactual, "counterfactual", (1, 0, -1, -2, -3))
        )
        check_same_length(target=t, predicted=p, privileged=g, counterfactual=cf)
        valid = p >= 0
        c = group_counts(t[valid], p[valid] == POSITIVE, g[valid])
        self._confusion += np.concatenate([c.tp, c.fp, c.fn, c.tn])
        self._responses += [int(valid.sum()), int((p == INVALID).sum()), int((p == ERROR).sum())]
        self._cf_responses += [
            int((cf >= 0).sum()),
            int((cf == INVALID).sum()),
            int((cf == ERROR).sum()),
        ]
        both = (p != ERROR) & (cf != ERROR) & (cf != NOT_ASKED)
        changed = both & (((p >= 0) != (cf >= 0)) | ((p >= 0) & (cf >= 0) & (p != cf)))
        informative = both & ((p >= 0) | (cf >= 0))  # at least one variant answered validly
        for k in (0, 1):
            in_g = g == bool(k)
            self._cf[k] += int((both & in_g).sum())
            self._cf[2 + k] += int((changed & in_g).sum())
            self._cf[4 + k] += int((informative & in_g).sum())
        return self

    def _merge(self, other: LLMFairnessEvaluator) -> None:
        for name in ("_confusion", "_responses", "_cf_responses", "_cf"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def _state(self) -> dict[str, np.ndarray]:
        return {
            "confusion": self._confusion.copy(),
            "responses": self._responses.copy(),
            "cf_responses": self._cf_responses.copy(),
            "cf": self._cf.copy(),
        }

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        self._confusion = np.asarray(state["confusion"], dtype=np.int64).copy()
        self._responses = np.asarray(state["responses"], dtype=np.int64).copy()
        self._cf_responses = np.asarray(state["cf_responses"], dtype=np.int64).copy()
        self._cf = np.asarray(state["cf"], dtype=np.int64).copy()

    def counts(self) -> GroupCounts:
        """Confusion counts of the valid answers, ``[unprivileged, privileged]``."""
        tp, fp, fn, tn = self._confusion.reshape(4, 2)
        return GroupCounts(tp=tp.copy(), fp=fp.copy(), fn=fn.copy(), tn=tn.copy())

    def _compute(self) -> MetricSet:
        out = self._group_records(self._confusion)
        if self.ci is not None:  # items: the valid answers' cells, then invalid and errors
            cells = np.concatenate([self._confusion, self._responses[1:]])
            attach_intervals(out, cells, lambda k: self._group_records(k[:8]), self.ci)
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
            attach_intervals(changes, np.append(cells, rest), self._resampled_changes, self.ci)
        return MetricSet(out + changes)

    def _group_records(self, confusion: np.ndarray) -> list[Metric]:
        """The four fairness metrics and Accuracy, Precision, Recall of the valid answers'
        confusion counts ``tp[2], fp[2], fn[2], tn[2]``."""
        tp, fp, fn, tn = np.asarray(confusion, dtype=np.int64).reshape(4, 2)
        c = GroupCounts(tp=tp.copy(), fp=fp.copy(), fn=fn.copy(), tn=tn.copy())
        params = {"group_column": self.group_column, "privileged": self.groups[1]}
        out: list[Metric] = []
        for name, kernel in FAIRNESS_METRICS.items():
            empty = [n for n, size in zip(("unprivileged", "privileged"), c.size) if size == 0]
            value, why = None, f"no valid answer in the {empty[0]} group" if empty else None
            if not empty:
                try:
                    value = kernel(c)
                except UndefinedMetricError as exc:
                    why = exc.reason
            out.append(records.fairness(name, value, reason=why, **params))
        tps, fps, fns, tns = (int(x.sum()) for x in (c.tp, c.fp, c.fn, c.tn))
        for name, num, den, why in (
            ("Accuracy", tps + tns, tps + fps + fns + tns, "no valid answer"),
            ("Precision", tps, tps + fps, "no positive prediction (TP + FP = 0)"),
            ("Recall", tps, tps + fns, "no positive label among valid answers (TP + FN = 0)"),
        ):
            out.append(_ratio(name, num, den, why))
        return out

    def _resampled_changes(self, k: np.ndarray) -> list[Metric]:
        """Change-rate records of resampled (changed, unchanged valid, both invalid) x group
        counts."""
        compared = [k[0] + k[1] + k[2], k[3] + k[4] + k[5]]
        return self._change_records(np.array([*compared, k[0], k[3], k[0] + k[1], k[3] + k[4]]))

    def _change_records(self, cf: np.ndarray) -> list[Metric]:
        """``CounterfactualChangeRate`` overall and per group from ``compared[2], changed[2],
        informative[2]``."""
        compared, changed, informative = cf[:2], cf[2:4], cf[4:]
        col = self.group_column
        out = [_change_rate(changed.sum(), compared.sum(), informative.sum(), col)]
        for k in (0, 1):
            out.append(_change_rate(changed[k], compared[k], informative[k], col, self.groups[k]))
        return out


def _change_rate(
    changed: Any, compared: Any, informative: Any, col: str, group: Any = None
) -> Metric:
    """``CounterfactualChangeRate``; ``null`` when nothing was compared or no compared point
    has a valid answer in either variant (a rate of 0 would then claim fairness unmeasured)."""
    name = "CounterfactualChangeRate"
    if compared > 0 and informative == 0:
        why = "no valid answer in either variant of any compared point"
        return records.rate(name, None, n=int(compared), reason=why, group_column=col, group=group)
    why = "no point where both the original and the counterfactual call succeeded"
    return _ratio(name, changed, compared, why, group_column=col, group=group)


def _ratio(name: str, num: Any, den: Any, why: str, **group: Any) -> Metric:
    reason = f"requires a non-zero denominator: {why}"
    return records.rate(name, float(divide(num, den)), n=int(den), reason=reason, **group)


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
