"""Accumulating group-fairness evaluator.

For each privileged-group definition it keeps eight counts (TP/FP/FN/TN of the
unprivileged and privileged groups), for each group column (or crossing of columns, each
within every control level when there are control columns) the four counts of every group
seen and, with sample weights, their weight sums (a
:class:`~assay.fairness.group_table.GroupTable`), and the four counts (and weight sums)
over all datums; so batches and merged evaluators add up exactly. It also keeps the
distinct label and prediction values seen, to refuse data whose labels and predictions do
not match (see :mod:`assay.fairness.batch`), and how many datums matched each privileged
value, to refuse a value that occurs nowhere. With ``ci`` it keeps the classes of
interchangeable datums (:mod:`assay.fairness.units`), with ``by`` each slice's counts and with
``cluster`` each cluster's (each a sub-evaluator of the same configuration). Its
:meth:`~FairnessEvaluator.tally` gives its records in families with the point estimate's
formulas on a resample axis (:mod:`assay.fairness.tally`), from which
:mod:`assay.fairness.intervals` and :mod:`assay.fairness.slices` draw intervals, slices and gaps.

Records (built by :mod:`assay.fairness.records`): per definition and their mean, the four
AIF360-style metrics and ``GroupCounts``; per group ``SelectionRate``, ``TruePositiveRate``,
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
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.fairness.batch import Batch, check_value_sets, read_batch, read_table
from assay.fairness.by_group import check_options
from assay.fairness.compute import GroupCounts, group_counts
from assay.fairness.group_table import GroupTable, confusion_cell, tables_from_state, tables_state
from assay.fairness.grouping import column_key, control_key
from assay.fairness.intervals import intervals
from assay.fairness.slices import slice_records, slices_from, slices_state
from assay.fairness.tally import Counts, Tally, families
from assay.fairness.types import PrivilegedGroup
from assay.fairness.units import Units, grown, joined, units_from_state, units_state
from assay.results import MetricSet
from assay.uncertainty.intervals import ci_options
from assay.uncertainty.slices import check_by

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
            (``parameters.cluster``; needs ``ci``; :mod:`assay.fairness.intervals`).
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
        batch = read_batch(self, y_true, y_pred, group_values or {}, source=source, fields=fields,
                           sample_weight=sample_weight, weight_field=weight_field)  # fmt: skip
        # Everything is validated: only now does the state change.
        self._take(batch, source)
        for v, r in batch.clusters:
            self._clusters.setdefault(v, self._cluster_sub())._take(batch.on(r), None)
        return self

    def _take(self, batch: Batch, source: str | None) -> None:
        """Count a validated batch and its slices' rows."""
        self._accumulate(batch.t, batch.p, batch.w, batch.masked, batch.groupings)
        self._remember(*batch.seen, source)
        for column, v, rows in batch.cuts if self.by else ():
            sub = self._slices[column].setdefault(v, self._sub())
            sub._take(batch.on(rows, cuts=False), None)

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
        arrays = read_table(self, data, label, prediction, source, sample_weight)
        return self.add_arrays(**arrays, source=source)

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
        parts = [(self._slices[c], other._slices[c]) for c in self.by]
        for here, there in [*parts, (self._clusters, other._clusters)]:
            for v, sub in there.items():  # one new here is copied: later adds stay here
                if v in here:
                    here[v]._merge(sub)
                else:
                    here[v] = FairnessEvaluator.from_state(sub.state())

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
        whole = self.tally()
        if self.ci is not None:
            intervals(whole, self.ci)
        out = whole.records()
        parts = {c: {v: self._slice_tally(c, v) for v in subs} for c, subs in self._slices.items()}
        return MetricSet([*out, *slice_records(whole, out, parts, self.ci)])

    def counts(self) -> Counts:
        """The counts of the rows added: per definition, per group column, overall, each with
        its weight sums (:class:`~assay.fairness.tally.Counts`)."""
        sums = None if self._weighted_counts is None else list(self._weighted_counts)
        return Counts(list(self._counts), list(self._tables), self._overall, sums,
                      self._overall_weights)  # fmt: skip

    def tally(self, *, mean: bool = True) -> Tally:
        """The :class:`~assay.fairness.tally.Tally` of the rows added: the point estimate's
        records in families (with ``mean``, their mean over the definitions too), the classes
        of datums and, with ``cluster``, each cluster's counts."""
        clusters = {g: c.counts() for g, c in self._clusters.items()}
        return self._tally_of(clusters, mean=mean)

    def _tally_of(self, clusters: Mapping[str, Counts], *, mean: bool) -> Tally:
        counts = self.counts()
        return Tally(families(self, counts, mean=mean), counts, self._units, clusters)

    def _slice_tally(self, column: str, value: str) -> Tally:
        """The tally of one slice: its rows' counts, and each cluster's rows in the slice."""
        clusters = {g: c._slices[column][value].counts() for g, c in self._clusters.items()
                    if value in c._slices[column]}  # fmt: skip
        return self._slices[column][value]._tally_of(clusters, mean=False)

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

    # The arrays: ``counts`` (definition x TP/FP/FN/TN x unprivileged/privileged),
    # ``overall``, ``privileged_matched``, the group tables, the weight sums when weighted, the
    # label and prediction values seen, the classes of datums with ``ci`` (``unit_*``), then
    # the slices' and clusters' own states under their prefixes (``slices.*``, ``clusters.*``).

    def _state(self) -> dict[str, np.ndarray]:
        counts = np.zeros((0, 4, 2), dtype=np.int64)
        if self._counts:
            counts = np.stack([np.stack([c.tp, c.fp, c.fn, c.tn]) for c in self._counts])
        state = {
            "counts": counts.astype(np.int64),
            "overall": self._overall.astype(np.int64),
            "privileged_matched": np.concatenate([np.zeros(0, np.int64), *self._matched]),
        }
        state |= tables_state(self._tables)
        if self._overall_weights is not None:
            state["overall_weights"] = self._overall_weights.astype(np.float64)
        if self._weighted_counts:
            sums = [np.stack(astuple(c)) for c in self._weighted_counts]
            state["definition_weights"] = np.stack(sums).astype(np.float64)
        if self._labels is not None and self._predictions is not None:
            state["label_values"] = self._labels
            state["prediction_values"] = self._predictions
        clusters = slices_state({"": self._clusters}, "clusters") if self._clusters else {}
        return state | units_state(self._units) | slices_state(self._slices) | clusters

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Fill this (configured, empty) evaluator from :meth:`_state`'s arrays (older
        states too)."""
        counts = np.asarray(state["counts"], dtype=np.int64)
        self._counts = [GroupCounts(tp=c[0], fp=c[1], fn=c[2], tn=c[3]) for c in counts]
        if "overall" in state:
            self._overall = np.asarray(state["overall"], dtype=np.int64)
        elif len(counts):  # a state from before group columns: one definition's sums
            self._overall = counts[0].sum(axis=1)
        if "privileged_matched" in state:
            flat = np.asarray(state["privileged_matched"], dtype=np.int64)
            cuts = np.cumsum([len(m) for m in self._matched])[:-1]
            self._matched = list(np.split(flat, cuts)) if self._matched else []
        self._tables = tables_from_state(state, len(self.group_columns))
        self._units = units_from_state(state, len(self.group_columns))
        if "overall_weights" in state:
            self._overall_weights = np.asarray(state["overall_weights"], dtype=np.float64)
            sums = np.asarray(state.get("definition_weights", np.zeros((0, 4, 2))), np.float64)
            # a state from before weighted definitions had none: its rows weigh 1
            self._weighted_counts = [GroupCounts(*c) for c in sums] or self._definition_weights()
        if "label_values" in state:
            self._labels = np.asarray(state["label_values"])
            self._predictions = np.asarray(state["prediction_values"])
        self._slices = slices_from(state, self.by, lambda a: self._loaded(self._sub(), a))
        if "clusters.0.values" in state:
            load = lambda a: self._loaded(self._cluster_sub(), a)  # noqa: E731
            self._clusters = slices_from(state, [""], load, "clusters")[""]

    @staticmethod
    def _loaded(sub: FairnessEvaluator, arrays: Mapping[str, np.ndarray]) -> FairnessEvaluator:
        sub._load_state(arrays)
        return sub
