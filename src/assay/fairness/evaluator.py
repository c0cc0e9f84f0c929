"""Accumulating group-fairness evaluator.

For each privileged-group definition it keeps eight counts (TP/FP/FN/TN of the
unprivileged and privileged groups), for each group column (or crossing of columns, each
within every control level when there are control columns) the four counts of every group
seen and, with sample weights, their weight sums (a
:class:`~assay.fairness.group_table.GroupTable`), and the four counts (and weight sums)
over all datums; so batches and merged evaluators add up exactly. It also keeps the
distinct label and prediction values seen, to refuse data whose labels and predictions do
not match (see :mod:`assay.fairness.values`), and how many datums matched each privileged
value, to refuse a value that occurs nowhere.

Records (built by :mod:`assay.fairness.records`, assembled by
:mod:`assay.fairness.summaries`): per definition and their mean, the four AIF360-style
metrics and ``GroupCounts``; per group ``SelectionRate``, ``TruePositiveRate``,
``FalsePositiveRate``, ``Accuracy``, ``GroupCounts`` and over the groups
``DemographicParityDifference``/``Ratio``, ``EqualizedOddsDifference``/``Ratio`` (see
:mod:`assay.fairness.by_group`); ``Accuracy``, ``Precision``, ``Recall`` over all datums.

Example:
    >>> ev = FairnessEvaluator(["sex"], positive_label=1)
    >>> _ = ev.add_arrays([1, 0, 1, 0], [1, 1, 0, 0], {"sex": [1, 1, 0, 0]})
    >>> ev.compute().get("StatisticalParityDifference", group_column="sex").value
    -1.0
    >>> ev = FairnessEvaluator(["L1=en"], group_columns=["L1"])
    >>> _ = ev.add_arrays([1, 0, 1, 0], [1, 1, 0, 0], {"L1": ["en", "en", "fr", "fr"]})
    >>> ms = ev.compute()
    >>> ms.get("SelectionRate", group_column="L1", group="en").value
    1.0
    >>> ms.get("DemographicParityDifference", group_column="L1").value
    1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay._compat import UNSET, renamed
from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.fairness import records
from assay.fairness.assembly import records_of
from assay.fairness.by_group import (
    GroupTable,
    as_group_text,
    check_options,
    confusion_cell,
    group_column_values,
)
from assay.fairness.clusters import cluster_rows, restrict
from assay.fairness.compute import GroupCounts, group_counts
from assay.fairness.group_table import check_weights
from assay.fairness.grouping import batch_grouping, column_key, columns_of, control_key
from assay.fairness.slices import (
    feed,
    merge_slices,
    row_slices,
    slice_records,
)
from assay.fairness.state import load_state, state_of
from assay.fairness.types import PrivilegedGroup
from assay.fairness.units import Units, grown, joined
from assay.fairness.values import (
    check_same_language,
    check_value_sets,
    kind_and_values,
)
from assay.intervals import ci_options
from assay.io.tables import as_dataframe, require_columns
from assay.results import Metric, MetricSet
from assay.slices import check_by

__all__ = ["FairnessEvaluator"]

GroupSpec = PrivilegedGroup | str | Mapping[str, Any]


def _positive_label(value: Any) -> Any:
    v = value.item() if isinstance(value, np.generic) else value
    if not isinstance(v, (str, bool, int, float)):
        raise InvalidInputError(
            f"must be a string, number or boolean, got {value!r}", source="positive_label"
        )
    return v


class FairnessEvaluator(Evaluator):
    """Group fairness over batches.

    Args:
        groups: privileged-group definitions, as :class:`PrivilegedGroup`, text
            ``"COLUMN[:THRESHOLD[:invert]]"`` or ``"COLUMN=V1[,V2...]"``, or dicts
            (:meth:`PrivilegedGroup.as_dict`).
        group_columns: columns whose every distinct value is a group, for per-group metrics
            and the demographic parity / equalized odds aggregates; a tuple (or list) of
            columns makes every combination of their values present in the data a group
            (crossed, intersectional groups).
        control_columns: columns whose values (every combination present, with several)
            are control levels: the groups are formed and compared within each level, every
            per-group record and aggregate is reported per level (fairlearn's
            ``control_features``).
        positive_label: the favourable label value, compared with ``==`` to labels and
            predictions (``pos_label=`` is its deprecated name).
        zero_division: the value of a per-group TPR/FPR whose denominator is 0 (default
            undefined; fairlearn's is 0).
        method: ``"between_groups"`` (default) or ``"to_overall"``: how the aggregates
            compare the groups.
        agg: ``"worst_case"`` (default) or ``"mean"``: how the equalized odds aggregates
            combine their TPR and FPR parts.
        ci, ci_method, num_bootstrap, seed: a bootstrap interval over datums on every
            metric, from the kept counts (default ``ci=None``: none); see
            :mod:`assay.fairness.intervals`.
        by: columns whose every value is a slice: SPD, DI, AOD, EOD and the four
            aggregates again on each slice's rows, with ``slice_column``, ``slice``, ``n``,
            ``gap`` and, with ``ci``, the gap's interval (:mod:`assay.fairness.slices`).
        cluster: a column whose values are clusters (a patient, a site): the bootstrap
            draws whole clusters instead of rows, for every interval and gap interval
            (``parameters.cluster``; needs ``ci``; :mod:`assay.fairness.clusters`).
    """

    def __init__(
        self,
        groups: Iterable[GroupSpec] = (),
        *,
        group_columns: Iterable[str | Sequence[str]] = (),
        control_columns: Iterable[str] = (),
        positive_label: Any = 1,
        zero_division: float | None = None,
        method: str = "between_groups",
        agg: str = "worst_case",
        pos_label: Any = UNSET,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        by: Sequence[str] = (),
        cluster: str | None = None,
    ) -> None:
        self.ci = ci_options(ci, ci_method, num_bootstrap, seed, cluster=cluster)
        self.by = check_by(by)
        self.groups = tuple(PrivilegedGroup.coerce(g) for g in groups)
        self.group_columns = tuple(dict.fromkeys(column_key(c) for c in group_columns))
        self.control_columns = control_key(control_columns)
        if self.control_columns and not self.group_columns:
            raise InvalidInputError(
                "control columns need a group column to split", source="control_columns"
            )
        if not self.groups and not self.group_columns:
            raise InvalidInputError(
                "at least one privileged-group definition or group column is required",
                source="groups",
            )
        label = renamed(
            "positive_label", positive_label, "pos_label", pos_label, where="FairnessEvaluator"
        )
        self.positive_label = _positive_label(label)
        check_options(method, agg)
        self.method, self.agg = method, agg
        if zero_division is not None and not np.isfinite(float(zero_division)):
            raise InvalidInputError(
                f"must be a finite number, got {zero_division!r}", source="zero_division"
            )
        self.zero_division = None if zero_division is None else float(zero_division)
        self._counts = [GroupCounts.zeros() for _ in self.groups]
        # per categorical definition: how many datums matched each privileged value
        self._matched = [np.zeros(len(g.values or ()), dtype=np.int64) for g in self.groups]
        self._tables = [GroupTable.empty() for _ in self.group_columns]
        self._overall = np.zeros(4, dtype=np.int64)  # TP, FP, FN, TN over all datums
        self._overall_weights: NDArray[np.float64] | None = None  # their weight sums
        self._weighted_counts: list[GroupCounts] | None = None  # per definition, weight sums
        self._labels: NDArray[Any] | None = None  # distinct label values seen
        self._predictions: NDArray[Any] | None = None  # distinct prediction values seen
        self._sources: list[str] = []
        self._slices: dict[str, dict[str, FairnessEvaluator]] = {c: {} for c in self.by}
        self._clusters: dict[str, FairnessEvaluator] = {}  # per cluster, its rows' counts
        self._units: Units | None = None  # classes of datums (fairness/units.py)

    @property
    def pos_label(self) -> Any:
        """Deprecated name of :attr:`positive_label`."""
        return self.positive_label

    def config(self) -> dict[str, Any]:
        return {
            "groups": [g.as_dict() for g in self.groups],
            "group_columns": [c if isinstance(c, str) else list(c) for c in self.group_columns],
            "control_columns": list(self.control_columns),
            "positive_label": self.positive_label,
            "zero_division": self.zero_division,
            "method": self.method,
            "agg": self.agg,
            **(self.ci.config() if self.ci else {}),
            **({"by": list(self.by)} if self.by else {}),
        }

    def _sub(self) -> FairnessEvaluator:
        """An evaluator configured as this one, without slices: a slice's counts."""
        return FairnessEvaluator(**{k: v for k, v in self.config().items() if k != "by"})

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
        sample_weight: ArrayLike | None = None,
        weight_field: str = "sample_weight",
    ) -> Self:
        """Add a batch: labels, predictions, one array per group column and optionally a
        weight per datum (``sample_weight``: numbers >= 0, not all 0; they weigh the
        per-group rates, the aggregates and the overall accuracy, precision and recall).

        ``fields`` names the label and prediction columns in messages, ``weight_field`` the
        weights; ``sensitive=`` is the deprecated name of ``group_values``.
        """
        group_values = renamed(
            "group_values", group_values, "sensitive", sensitive, where="add_arrays"
        )
        t = as_1d(y_true, source=source or fields[0], field=fields[0] if source else None)
        p = as_1d(y_pred, source=source or fields[1], field=fields[1] if source else None)
        n = check_same_length(**{fields[0]: t, fields[1]: p})
        values = group_values or {}
        w = None
        if sample_weight is not None:
            w = check_weights(sample_weight, n, source=source, field=weight_field)
        masked = [self._mask(g, values, n, source) for g in self.groups]
        groupings = [
            batch_grouping(values, c, self.control_columns, n, source) for c in self.group_columns
        ]
        _, labels = kind_and_values(t, source=source, field=fields[0])
        _, predictions = kind_and_values(p, source=source, field=fields[1])
        check_same_language(labels, predictions, self.positive_label, source=source, fields=fields)
        cuts = [(c, v, rows) for c in self.by for v, rows in row_slices(values, c, n, source)]
        column = self.ci.cluster if self.ci is not None else None
        clusters = [] if column is None else cluster_rows(values, column, n, source)
        # Everything is validated: only now does the state change.
        self._take((t, p, w), masked, groupings, (labels, predictions), cuts, source)
        for v, r in clusters:
            sub = self._clusters.setdefault(v, self._cluster_sub())
            part = (t[r], p[r], None if w is None else w[r])
            within = [(c, x, rows[r]) for c, x, rows in cuts]
            sub._take(part, *restrict(masked, groupings, r), (labels, predictions), within, None)
        return self

    def _take(
        self,
        batch: tuple[NDArray[Any], NDArray[Any], NDArray[np.float64] | None],
        masked: Any,
        groupings: Any,
        seen: tuple[NDArray[Any], NDArray[Any]],
        cuts: Any,
        source: Any,
    ) -> None:
        """Count a validated batch (labels, predictions, weights) and its slices' rows."""
        self._accumulate(batch[0], batch[1], batch[2], masked, groupings)
        self._remember(seen[0], seen[1], source)
        feed(self._slices, cuts, self._sub, batch, masked, groupings, seen)

    def _cluster_sub(self) -> FairnessEvaluator:
        """An evaluator configured as this one without intervals: a cluster's counts."""
        ci = self.ci.config() if self.ci is not None else {}
        return FairnessEvaluator(**{k: v for k, v in self.config().items() if k not in ci})

    def _accumulate(
        self,
        t: NDArray[Any],
        p: NDArray[Any],
        w: NDArray[np.float64] | None,
        masked: list[tuple[NDArray[np.bool_], NDArray[np.int64]]],
        groupings: list[tuple[NDArray[np.str_], NDArray[np.int64]]],
    ) -> None:
        """Count a validated batch (its privileged masks and groupings computed)."""
        weighted = w is not None or self._overall_weights is not None
        sums = self._definition_weights() if weighted else None
        for i, (mask, matched) in enumerate(masked):
            self._counts[i] += group_counts(t, p, mask, positive_label=self.positive_label)
            self._matched[i] = self._matched[i] + matched
            if sums is not None:
                ones = np.ones(len(t)) if w is None else w
                sums[i] += group_counts(
                    t, p, mask, positive_label=self.positive_label, sample_weight=ones
                )
        self._weighted_counts = sums
        tb, pb = t == self.positive_label, p == self.positive_label
        for j, (names, codes) in enumerate(groupings):
            self._tables[j] = self._tables[j] + GroupTable.from_codes(names, codes, tb, pb, w)
        cell = confusion_cell(tb, pb)
        self._units = grown(self._units, self.ci, cell, masked, groupings, w)
        if w is not None or self._overall_weights is not None:
            now = np.bincount(cell, weights=w, minlength=4)
            self._overall_weights = self._weights() + now
        self._overall = self._overall + np.bincount(cell, minlength=4)

    def _mask(
        self, g: PrivilegedGroup, values: Mapping[str, ArrayLike], n: int, source: str | None
    ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        """The privileged mask and, for privileged values, how many datums matched each."""
        v = group_column_values(values, g.group_column, n, source)
        if g.values is None:
            return g.privileged(v, source=source), np.zeros(0, dtype=np.int64)
        text = as_group_text(v, source=source, field=g.group_column)
        matched = np.array([int((text == x).sum()) for x in g.values], dtype=np.int64)
        return np.isin(text, np.asarray(g.values, dtype=str)), matched

    def _remember(self, labels: NDArray[Any], predictions: NDArray[Any], source: Any) -> None:
        if self._labels is None or self._predictions is None:
            self._labels, self._predictions = labels, predictions
        else:
            self._labels = np.union1d(self._labels, labels)
            self._predictions = np.union1d(self._predictions, predictions)
        if source is not None and source not in self._sources:
            self._sources.append(str(source))

    def add(
        self,
        data: Any,
        *,
        label: str,
        prediction: str,
        source: str = "data",
        sample_weight: str | None = None,
    ) -> Self:
        """Add a batch from a table (pandas/polars frame, file path or records) by column
        names; ``sample_weight`` names a column of weights."""
        df = as_dataframe(data, source=source)
        columns = dict.fromkeys(
            [
                *(g.group_column for g in self.groups),
                *(c for key in self.group_columns for c in columns_of(key)),
                *self.control_columns,
                *self.by,
                *([self.ci.cluster] if self.ci is not None and self.ci.cluster else []),
            ]
        )
        weights = [] if sample_weight is None else [sample_weight]
        cols = [label, prediction, *columns, *weights]
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
            {c: df[c].to_numpy() for c in columns},
            source=source,
            fields=(label, prediction),
            sample_weight=None if sample_weight is None else df[sample_weight].to_numpy(),
            weight_field=sample_weight or "sample_weight",
        )

    @property
    def is_empty(self) -> bool:
        return int(self._overall.sum()) == 0

    def _merge(self, other: Self) -> None:
        if other._labels is None or other._predictions is None:
            return
        if self._overall_weights is not None or other._overall_weights is not None:
            mine, theirs = self._definition_weights(), other._definition_weights()
            self._weighted_counts = [a + b for a, b in zip(mine, theirs)]
            self._overall_weights = self._weights() + other._weights()
        self._units = joined(self._units, other._units, self.is_empty)
        self._counts = [a + b for a, b in zip(self._counts, other._counts)]
        self._matched = [a + b for a, b in zip(self._matched, other._matched)]
        self._tables = [a + b for a, b in zip(self._tables, other._tables)]
        self._overall = self._overall + other._overall
        self._remember(other._labels, other._predictions, None)
        self._sources += [s for s in other._sources if s not in self._sources]
        merge_slices(self._slices, other._slices, FairnessEvaluator.from_state)
        for v, sub in other._clusters.items():
            if v in self._clusters:
                self._clusters[v]._merge(sub)
            else:
                self._clusters[v] = FairnessEvaluator.from_state(sub.state())

    # ------------------------------------------------------------ compute

    def _compute(self) -> MetricSet:
        assert self._labels is not None and self._predictions is not None
        check_value_sets(
            self._labels,
            self._predictions,
            self.positive_label,
            source=", ".join(self._sources) or "labels and predictions",
        )
        self._check_privileged_values()
        out = self._records()
        return MetricSet([*out, *slice_records(self, out)])

    def _records(self, clusters: Mapping[str, FairnessEvaluator] | None = None) -> list[Metric]:
        """The records of the counts (a slice's too: the whole set's checks are done);
        ``clusters``: the per-cluster counts of these rows (default: this evaluator's)."""
        return records_of(self, self._clusters if clusters is None else clusters)

    def _by_group(self, column: Any, table: GroupTable) -> list[Metric]:
        return records.by_group(
            column,
            table,
            positive_label=self.positive_label,
            zero_division=self.zero_division,
            method=self.method,
            agg=self.agg,
            control_columns=self.control_columns,
        )

    def _definition_weights(self) -> list[GroupCounts]:
        """Per definition, the weight sums (the counts as floats when unweighted).

        Called before the counts change, so rows added without weights weigh 1."""
        if self._weighted_counts is not None:
            return list(self._weighted_counts)
        return [GroupCounts(*(x.astype(np.float64) for x in astuple(c))) for c in self._counts]

    def _weights(self) -> NDArray[np.float64]:
        """The overall TP, FP, FN, TN weight sums (the counts when unweighted)."""
        if self._overall_weights is None:
            return self._overall.astype(np.float64)
        return self._overall_weights

    def _check_privileged_values(self) -> None:
        for g, matched in zip(self.groups, self._matched):
            if g.values is None or matched.all():
                continue
            absent = [v for v, k in zip(g.values, matched) if k == 0]
            raise InvalidInputError(
                f"privileged value {absent[0]!r} of {g.label!r} occurs in no row",
                source=", ".join(self._sources) or "group_values",
                field=g.group_column,
            )

    # ------------------------------------------------------------ state

    def _state(self) -> dict[str, np.ndarray]:
        return state_of(self)

    def _load_sub(self, arrays: dict[str, Any]) -> FairnessEvaluator:
        sub = self._sub()
        sub._load_state(arrays)
        return sub

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        load_state(self, state)

    def _load_cluster(self, arrays: dict[str, Any]) -> FairnessEvaluator:
        sub = self._cluster_sub()
        sub._load_state(arrays)
        return sub
