"""Accumulating group-fairness evaluator.

For each privileged-group definition it keeps eight counts (TP/FP/FN/TN of the
unprivileged and privileged groups), so batches and merged evaluators add up exactly; it
also keeps the distinct label and prediction values seen, to refuse data whose labels and
predictions do not match (see :mod:`assay.fairness.values`).

Records (built by :mod:`assay.fairness.records`):

* ``StatisticalParityDifference``, ``DisparateImpact``, ``AverageOddsDifference``,
  ``EqualOpportunityDifference`` per definition (``group_column``, ``threshold``,
  ``invert``, ``privileged``, ``positive_label``), and the same types with
  ``average_over`` for the mean over all definitions (undefined if any definition's value
  is undefined, naming it);
* ``GroupCounts`` per definition and ``group`` (``"unprivileged"``, ``"privileged"``);
* ``Accuracy``, ``Precision``, ``Recall`` over all datums (binary, on the positive label).

Example:
    >>> ev = FairnessEvaluator(["sex"], positive_label=1)
    >>> _ = ev.add_arrays([1, 0, 1, 0], [1, 1, 0, 0], {"sex": [1, 1, 0, 0]})
    >>> ev.compute().get("StatisticalParityDifference", group_column="sex").value
    -1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay import ratios
from assay._compat import UNSET, renamed
from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.evaluator import Evaluator
from assay.fairness import records
from assay.fairness.compute import FAIRNESS_METRICS, GroupCounts, group_counts
from assay.fairness.types import PrivilegedGroup
from assay.fairness.values import (
    check_same_language,
    check_value_sets,
    kind_and_values,
)
from assay.io.tables import as_dataframe, require_columns
from assay.results import Metric, MetricSet

__all__ = ["FairnessEvaluator", "evaluate_fairness"]

GroupSpec = PrivilegedGroup | str | Mapping[str, Any]


def _positive_label(value: Any) -> Any:
    v = value.item() if isinstance(value, np.generic) else value
    if not isinstance(v, (str, bool, int, float)):
        raise InvalidInputError(
            f"must be a string, number or boolean, got {value!r}", source="positive_label"
        )
    return v


def _counts_value(c: GroupCounts, i: int) -> dict[str, int]:
    return {"tp": int(c.tp[i]), "fp": int(c.fp[i]), "fn": int(c.fn[i]), "tn": int(c.tn[i])}


class FairnessEvaluator(Evaluator):
    """Group fairness over batches.

    Args:
        groups: privileged-group definitions, as :class:`PrivilegedGroup`, text
            ``"COLUMN[:THRESHOLD[:invert]]"`` or dicts ``{"group_column", "threshold", "invert"}``.
        positive_label: the favourable label value, compared with ``==`` to labels and
            predictions (``pos_label=`` is its deprecated name).
    """

    def __init__(
        self, groups: Iterable[GroupSpec], *, positive_label: Any = 1, pos_label: Any = UNSET
    ) -> None:
        self.groups = tuple(PrivilegedGroup.coerce(g) for g in groups)
        if not self.groups:
            raise InvalidInputError(
                "at least one privileged-group definition is required", source="groups"
            )
        label = renamed(
            "positive_label", positive_label, "pos_label", pos_label, where="FairnessEvaluator"
        )
        self.positive_label = _positive_label(label)
        self._counts = [GroupCounts.zeros() for _ in self.groups]
        self._labels: NDArray[Any] | None = None  # distinct label values seen
        self._predictions: NDArray[Any] | None = None  # distinct prediction values seen
        self._sources: list[str] = []

    @property
    def pos_label(self) -> Any:
        """Deprecated name of :attr:`positive_label`."""
        return self.positive_label

    def config(self) -> dict[str, Any]:
        return {
            "groups": [g.as_dict() for g in self.groups],
            "positive_label": self.positive_label,
        }

    # ------------------------------------------------------------ accumulate

    def add_arrays(
        self,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        group_values: Mapping[str, ArrayLike] | None = None,
        *,
        source: str | None = None,
        fields: tuple[str, str] = ("y_true", "y_pred"),
        sensitive: Any = UNSET,
    ) -> Self:
        """Add a batch: labels, predictions and one array per group column.

        ``fields`` names the label and prediction columns in messages; ``sensitive=`` is the
        deprecated name of ``group_values``.
        """
        group_values = renamed(
            "group_values", group_values, "sensitive", sensitive, where="add_arrays"
        )
        t = as_1d(y_true, source=source or fields[0], field=fields[0] if source else None)
        p = as_1d(y_pred, source=source or fields[1], field=fields[1] if source else None)
        n = check_same_length(**{fields[0]: t, fields[1]: p})
        masks = [self._mask(g, group_values or {}, n, source) for g in self.groups]
        _, labels = kind_and_values(t, source=source, field=fields[0])
        _, predictions = kind_and_values(p, source=source, field=fields[1])
        check_same_language(labels, predictions, self.positive_label, source=source, fields=fields)
        # Everything is validated: only now does the state change.
        for i, m in enumerate(masks):
            self._counts[i] += group_counts(t, p, m, positive_label=self.positive_label)
        self._remember(labels, predictions, source)
        return self

    def _mask(
        self, g: PrivilegedGroup, values: Mapping[str, ArrayLike], n: int, source: str | None
    ) -> NDArray[np.bool_]:
        if g.group_column not in values:
            raise InvalidInputError(
                "missing group column", source=source or "group_values", field=g.group_column
            )
        v = as_1d(values[g.group_column], source=source or "group_values", field=g.group_column)
        if len(v) != n:
            raise InvalidInputError(
                f"has {len(v)} values for {n} labels", source=source, field=g.group_column
            )
        return g.privileged(v, source=source)

    def _remember(self, labels: NDArray[Any], predictions: NDArray[Any], source: Any) -> None:
        if self._labels is None or self._predictions is None:
            self._labels, self._predictions = labels, predictions
        else:
            self._labels = np.union1d(self._labels, labels)
            self._predictions = np.union1d(self._predictions, predictions)
        if source is not None and source not in self._sources:
            self._sources.append(str(source))

    def add(self, data: Any, *, label: str, prediction: str, source: str = "data") -> Self:
        """Add a batch from a table (pandas/polars frame, file path or records) by column names."""
        df = as_dataframe(data, source=source)
        cols = [label, prediction, *dict.fromkeys(g.group_column for g in self.groups)]
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
            {g.group_column: df[g.group_column].to_numpy() for g in self.groups},
            source=source,
            fields=(label, prediction),
        )

    @property
    def is_empty(self) -> bool:
        return int(self._counts[0].size.sum()) == 0

    def _merge(self, other: Self) -> None:
        if other._labels is None or other._predictions is None:
            return
        self._counts = [a + b for a, b in zip(self._counts, other._counts)]
        self._remember(other._labels, other._predictions, None)
        self._sources += [s for s in other._sources if s not in self._sources]

    # ------------------------------------------------------------ compute

    def _compute(self) -> MetricSet:
        assert self._labels is not None and self._predictions is not None
        check_value_sets(
            self._labels,
            self._predictions,
            self.positive_label,
            source=", ".join(self._sources) or "labels and predictions",
        )
        out: list[Metric] = []
        for g, c in zip(self.groups, self._counts):
            out += self._definition_records(g, c)
        out += self._average_records()
        out += self._overall_records()
        return MetricSet(out)

    def _value(self, name: str, c: GroupCounts) -> tuple[float | None, str | None]:
        try:
            return FAIRNESS_METRICS[name](c), None
        except UndefinedMetricError as e:
            return None, e.reason

    def _definition_records(self, g: PrivilegedGroup, c: GroupCounts) -> list[Metric]:
        out = []
        for name in FAIRNESS_METRICS:
            value, why = self._value(name, c)
            worst = None
            if name == "EqualOpportunityDifference" and (c.positives == 0).any():
                worst = "a group has no positive labels"
            out.append(
                records.per_definition(
                    name,
                    value,
                    g,
                    positive_label=self.positive_label,
                    undefined=why,
                    worst_value=worst,
                )
            )
        for i, which in ((0, "unprivileged"), (1, "privileged")):
            out.append(
                records.group_counts(
                    _counts_value(c, i), g, which=which, positive_label=self.positive_label
                )
            )
        return out

    def _average_records(self) -> list[Metric]:
        out = []
        for name in FAIRNESS_METRICS:
            values = [self._value(name, c) for c in self._counts]
            missing = [(g, why) for g, (v, why) in zip(self.groups, values) if v is None]
            mean = None if missing else float(np.mean([v for v, _ in values]))
            why = (
                f"undefined for definition {missing[0][0].label}: {missing[0][1]}"
                if missing
                else None
            )
            out.append(
                records.average(
                    name, mean, self.groups, positive_label=self.positive_label, undefined=why
                )
            )
        return out

    def _overall_records(self) -> list[Metric]:
        # Every definition sees the same datums: the overall counts are one definition's sums.
        c = self._counts[0]
        tp, fp, fn, tn = (int(x.sum()) for x in (c.tp, c.fp, c.fn, c.tn))
        out = []
        for name, num, den, req in (
            ("Accuracy", tp + tn, tp + fp + fn + tn, "requires at least one data point"),
            ("Precision", tp, tp + fp, "requires TP + FP > 0"),
            ("Recall", tp, tp + fn, "requires TP + FN > 0"),
        ):
            value = ratios.value_or_none(ratios.divide(num, den))
            out.append(
                records.overall(name, value, positive_label=self.positive_label, undefined=req)
            )
        return out

    # ------------------------------------------------------------ state

    def _state(self) -> dict[str, np.ndarray]:
        counts = np.stack([np.stack([c.tp, c.fp, c.fn, c.tn]) for c in self._counts])
        state = {"counts": counts.astype(np.int64)}
        if self._labels is not None and self._predictions is not None:
            state["label_values"] = self._labels
            state["prediction_values"] = self._predictions
        return state

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        counts = np.asarray(state["counts"], dtype=np.int64)
        self._counts = [GroupCounts(tp=c[0], fp=c[1], fn=c[2], tn=c[3]) for c in counts]
        if "label_values" in state:
            self._labels = np.asarray(state["label_values"])
            self._predictions = np.asarray(state["prediction_values"])


def evaluate_fairness(
    data: Any,
    *,
    label: str,
    prediction: str,
    groups: Sequence[GroupSpec],
    positive_label: Any = 1,
    pos_label: Any = UNSET,
) -> MetricSet:
    """One-call fairness evaluation of a table (``pos_label=``: deprecated ``positive_label=``).

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "sex": [1, 1, 0, 0]})
        >>> ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex"])
        >>> ms.get("DisparateImpact", group_column="sex").value
        0.0
    """
    label_value = renamed(
        "positive_label", positive_label, "pos_label", pos_label, where="evaluate_fairness"
    )
    return (
        FairnessEvaluator(groups, positive_label=label_value)
        .add(data, label=label, prediction=prediction)
        .compute()
    )
