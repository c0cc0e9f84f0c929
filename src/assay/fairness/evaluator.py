"""Accumulating group-fairness evaluator.

For each privileged-group definition it keeps eight counts (TP/FP/FN/TN of the
unprivileged and privileged groups), so batches and merged evaluators add up exactly.

Records (``parameters`` hold ``sensitive``, ``threshold``, ``invert``, ``positive_label``):

* ``StatisticalParityDifference``, ``DisparateImpact``, ``AverageOddsDifference``,
  ``EqualOpportunityDifference`` per definition, and the same types with
  ``sensitive="average"`` for the mean over all definitions (undefined if any definition's
  value is undefined, naming it);
* ``GroupCounts`` per definition: the counts behind the metrics;
* ``Accuracy``, ``Precision``, ``Recall`` over all datums (binary, on the positive label).

Example:
    >>> ev = FairnessEvaluator(["sex"], pos_label=1)
    >>> _ = ev.add_arrays([1, 0, 1, 0], [1, 1, 0, 0], {"sex": [1, 1, 0, 0]})
    >>> ev.compute().get("StatisticalParityDifference", sensitive="sex").value
    -1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from assay.classification.compute import ratio
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.fairness.compute import FAIRNESS_METRICS, GroupCounts, group_counts
from assay.fairness.types import PrivilegedGroup
from assay.io.tables import as_dataframe, require_columns
from assay.results import Metric, MetricSet, undefined

__all__ = ["FairnessEvaluator", "evaluate_fairness"]


def _groups(groups: Iterable[PrivilegedGroup | str]) -> tuple[PrivilegedGroup, ...]:
    out = tuple(g if isinstance(g, PrivilegedGroup) else PrivilegedGroup.parse(g) for g in groups)
    if not out:
        raise InvalidInputError(
            "at least one privileged-group definition is required", source="groups"
        )
    return out


class FairnessEvaluator:
    """Group fairness over batches.

    Args:
        groups: privileged-group definitions, as :class:`PrivilegedGroup` or text
            ``"COLUMN[:THRESHOLD[:invert]]"``.
        pos_label: the favourable label value, compared with ``==`` to labels and predictions.
    """

    def __init__(self, groups: Iterable[PrivilegedGroup | str], *, pos_label: Any = 1) -> None:
        self.groups = _groups(groups)
        self.pos_label = pos_label
        self._counts = [GroupCounts.zeros() for _ in self.groups]

    def add_arrays(
        self,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        sensitive: Mapping[str, ArrayLike],
        *,
        source: str | None = None,
    ) -> FairnessEvaluator:
        """Add a batch: labels, predictions and one array per sensitive column."""
        t, p = np.asarray(y_true), np.asarray(y_pred)
        if t.shape != p.shape or t.ndim != 1:
            raise InvalidInputError(
                f"y_true has shape {t.shape}, y_pred {p.shape}; expected equal 1-D", source=source
            )
        masks = []
        for g in self.groups:
            if g.column not in sensitive:
                raise InvalidInputError("missing sensitive column", source=source, field=g.column)
            v = np.asarray(sensitive[g.column])
            if v.shape != t.shape:
                raise InvalidInputError(
                    f"has {len(v)} values for {len(t)} labels", source=source, field=g.column
                )
            masks.append(g.privileged(v, source=source))
        # Validate everything before changing state: a bad batch leaves the evaluator as it was.
        for i, m in enumerate(masks):
            self._counts[i] = self._counts[i] + group_counts(t, p, m, pos_label=self.pos_label)
        return self

    def add(
        self, data: Any, *, label: str, prediction: str, source: str = "data"
    ) -> FairnessEvaluator:
        """Add a batch from a table (pandas/polars DataFrame, file path or records) by column names."""
        df = as_dataframe(data, source=source)
        cols = [label, prediction, *dict.fromkeys(g.column for g in self.groups)]
        require_columns(df, cols, source=source)
        for c in (label, prediction):
            miss = df[c].isna().to_numpy()
            if miss.any():
                raise InvalidInputError(
                    "missing value", source=source, record=int(np.flatnonzero(miss)[0]) + 1, field=c
                )
        return self.add_arrays(
            df[label].to_numpy(),
            df[prediction].to_numpy(),
            {g.column: df[g.column].to_numpy() for g in self.groups},
            source=source,
        )

    def merge(self, other: FairnessEvaluator) -> FairnessEvaluator:
        """Add another evaluator's counts (same definitions and positive label)."""
        if other.groups != self.groups or other.pos_label != self.pos_label:
            raise InvalidInputError(
                "can only merge evaluators with the same groups and positive label", source="merge"
            )
        self._counts = [a + b for a, b in zip(self._counts, other._counts)]
        return self

    def compute(self) -> MetricSet:
        """Per-definition and averaged fairness metrics, group counts, and overall accuracy/precision/recall."""
        out: list[Metric] = []
        per_def: dict[str, list[tuple[PrivilegedGroup, float | None, str | None]]] = {
            name: [] for name in FAIRNESS_METRICS
        }
        for g, c in zip(self.groups, self._counts):
            params = {
                "sensitive": g.column,
                "threshold": g.threshold,
                "invert": g.invert,
                "positive_label": self.pos_label,
            }
            for name, kernel in FAIRNESS_METRICS.items():
                try:
                    v = kernel(c)
                except UndefinedMetricError as e:
                    out.append(undefined(name, e.reason, **params))
                    per_def[name].append((g, None, e.reason))
                    continue
                p = dict(params)
                if name == "EqualOpportunityDifference" and (c.positives == 0).any():
                    p["worst_value"] = "a group has no positive labels"
                out.append(Metric(name, v, p))
                per_def[name].append((g, v, None))
            out.append(Metric("GroupCounts", _counts_value(c), params))

        avg_params = {
            "sensitive": "average",
            "definitions": [g.label for g in self.groups],
            "positive_label": self.pos_label,
        }
        for name, rows in per_def.items():
            missing = [(g, why) for g, v, why in rows if v is None]
            if missing:
                g, why = missing[0]
                out.append(
                    undefined(name, f"undefined for definition {g.label}: {why}", **avg_params)
                )
            else:
                out.append(Metric(name, float(np.mean([v for _, v, _ in rows])), avg_params))

        c = self._counts[
            0
        ]  # every definition sees the same datums: overall counts are its group sums
        tp, fp, fn, tn = (int(x.sum()) for x in (c.tp, c.fp, c.fn, c.tn))
        overall = {"positive_label": self.pos_label}
        for name, num, den, req in (
            ("Accuracy", tp + tn, tp + fp + fn + tn, "at least one data point"),
            ("Precision", tp, tp + fp, "TP + FP > 0"),
            ("Recall", tp, tp + fn, "TP + FN > 0"),
        ):
            try:
                out.append(
                    Metric(
                        name,
                        ratio(num, den, metric=name, requires=req, zero_division=None),
                        overall,
                    )
                )
            except UndefinedMetricError as e:
                out.append(undefined(name, e.reason, **overall))
        return MetricSet(out)


def _counts_value(c: GroupCounts) -> dict[str, dict[str, int]]:
    return {
        name: {"tp": int(c.tp[i]), "fp": int(c.fp[i]), "fn": int(c.fn[i]), "tn": int(c.tn[i])}
        for i, name in ((0, "unprivileged"), (1, "privileged"))
    }


def evaluate_fairness(
    data: Any,
    *,
    label: str,
    prediction: str,
    groups: Sequence[PrivilegedGroup | str],
    pos_label: Any = 1,
) -> MetricSet:
    """One-call fairness evaluation of a table.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "sex": [1, 1, 0, 0]})
        >>> ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex"])
        >>> ms.get("DisparateImpact", sensitive="sex").value
        0.0
    """
    return (
        FairnessEvaluator(groups, pos_label=pos_label)
        .add(data, label=label, prediction=prediction)
        .compute()
    )
