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
interchangeable datums, with ``by`` each slice's counts and with ``cluster`` each cluster's
(each a sub-evaluator of the same configuration). Every accumulator is declared
(:meth:`~assay.evaluator.Evaluator.add_state`): merge, ``state()`` and ``from_state()`` come
from the base class. :meth:`~FairnessEvaluator.stats` gives its records in families with the
point estimate's formulas on a resample axis, :meth:`~FairnessEvaluator.tally` the tallies
the one engine (:mod:`assay.uncertainty`) draws intervals, slices and gaps from
(:mod:`assay.fairness.tally`).

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
from dataclasses import replace
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay._compat import removed_keywords
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.fairness.batch import Batch, check_value_sets, read_batch, read_table
from assay.fairness.compute import GroupCounts, group_counts
from assay.fairness.declared import METRICS, OPTIONS
from assay.fairness.group_table import GroupTable, confusion_cell, tables_from_state, tables_state
from assay.fairness.grouping import GroupColumn
from assay.fairness.tally import (
    KEY,
    Counts,
    Stats,
    Units,
    drawn,
    families,
    intervals,
    slice_records,
    tallies,
)
from assay.fairness.types import PrivilegedGroup
from assay.results import MetricSet
from assay.uncertainty.intervals import CIOptions, interval_from
from assay.uncertainty.tally import Tally

__all__ = ["FairnessEvaluator", "evaluate_fairness"]

GroupSpec = PrivilegedGroup | str | Mapping[str, Any]


@removed_keywords(pos_label="positive_label")
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
            predictions.
        zero_division: the value of a per-group TPR/FPR whose denominator is 0 (default
            undefined; fairlearn's is 0).
        method: ``"between_groups"`` (default) or ``"to_overall"``: how the aggregates
            compare the groups.
        agg: ``"worst_case"`` (default) or ``"mean"``: how the equalized odds aggregates
            combine their TPR and FPR parts.
        ci, ci_method, num_bootstrap, seed: a bootstrap interval over datums on every
            metric, from the kept counts (default ``ci=None``: none); see
            :mod:`assay.fairness.tally`.
        by: columns whose every value is a slice: SPD, DI, AOD, EOD and the four
            aggregates again on each slice's rows, with ``slice_column``, ``slice``, ``n``,
            ``gap`` and, with ``ci``, the gap's interval (:mod:`assay.fairness.tally`); rows
            without a value are the slice ``None`` (``slice: null``), listed last.
        cluster: a column whose values are clusters (a patient, a site): the bootstrap
            draws whole clusters instead of rows, for every interval and gap interval
            (``parameters.cluster``; needs ``ci``; :mod:`assay.fairness.tally`).
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

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
        by: Sequence[str] = (),
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
    ) -> None:
        self.ci = interval_from(self.options)
        # the values arrive clean (OPTIONS): definitions parsed, column keys made
        self.by: tuple[str, ...] = tuple(by)
        self.groups: tuple[PrivilegedGroup, ...] = tuple(groups)  # type: ignore[arg-type]
        self.group_columns: tuple[GroupColumn, ...] = tuple(group_columns)  # type: ignore[arg-type]
        self.control_columns: tuple[str, ...] = tuple(control_columns)
        self.positive_label = positive_label
        self.method, self.agg = method, agg
        self.zero_division = zero_division
        d, t = len(self.groups), len(self.group_columns)
        self._counts: NDArray[np.int64]
        self._definition_weights: NDArray[np.float64]
        self._privileged_matched: NDArray[np.int64]
        self._tables: list[GroupTable]
        self._overall: NDArray[np.int64]
        self._overall_weights: NDArray[np.float64]
        self._weighted: bool
        self._label_values: NDArray[Any] | None
        self._prediction_values: NDArray[Any] | None
        self._sources: list[str]
        self._slices: dict[str, dict[str | None, FairnessEvaluator]]
        self._clusters: dict[str, FairnessEvaluator]
        self._units: Units | None
        self.add_state("_counts", np.zeros((d, 4, 2), np.int64), "sum")  # TP/FP/FN/TN x priv.
        # their weight sums (the counts as floats for rows added without weights)
        self.add_state("_definition_weights", np.zeros((d, 4, 2)), "sum")
        # per categorical definition, how many datums matched each privileged value
        matched = sum(len(g.values or ()) for g in self.groups)
        self.add_state("_privileged_matched", np.zeros(matched, np.int64), "sum")
        self.add_state("_tables", [GroupTable.empty() for _ in range(t)], _added,
                       encode=tables_state, decode=lambda a: tables_from_state(a, t))  # fmt: skip
        self.add_state("_overall", np.zeros(4, np.int64), "sum")  # TP, FP, FN, TN
        self.add_state("_overall_weights", np.zeros(4), "sum")
        self.add_state("_weighted", False, "max")  # whether some rows came with weights
        self.add_state("_label_values", None, np.union1d)  # distinct labels seen
        self.add_state("_prediction_values", None, np.union1d)
        self.add_state("_sources", [], _joined, encode=_texts, decode=_from_texts)
        self.add_state("_slices", {c: {} for c in self.by}, "children")
        self.add_state("_clusters", {}, "children")  # per cluster, its rows' counts
        # classes of interchangeable datums (fairness/tally.py), for the datum bootstrap
        units = Units.empty(d, t) if self.ci is not None and not self.ci.cluster else None
        self.add_state("_units", units, _added, encode=Units.state, decode=Units.of_state)

    def _sub(self) -> FairnessEvaluator:
        """An evaluator configured as this one, without slices: a slice's counts."""
        return FairnessEvaluator(**{k: v for k, v in self.config().items() if k != "by"})

    # ------------------------------------------------------------ accumulate

    @removed_keywords(sensitive="group_values")
    def add_arrays(
        self,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        group_values: Mapping[str, ArrayLike] | None = None,
        *,
        source: str | None = None,
        fields: tuple[str, str] = ("y_true", "y_pred"),
        sample_weight: ArrayLike | None = None,
        weight_field: str = "sample_weight",
    ) -> Self:
        """Add a batch: labels, predictions, one array per group column and optionally a
        weight per datum (``sample_weight``: numbers >= 0, not all 0; they weigh the
        per-group rates, the aggregates and the overall accuracy, precision and recall).

        ``fields`` names the label and prediction columns in messages, ``weight_field`` the
        weights.
        """
        batch = read_batch(self, y_true, y_pred, group_values or {}, source=source, fields=fields,
                           sample_weight=sample_weight, weight_field=weight_field)  # fmt: skip
        # Everything is validated: only now does the state change.
        self._take(batch, source)
        for v, r in batch.clusters:
            self._clusters.setdefault(v, self._cluster_sub())._take(batch.on(r), None)
        return self

    def _take(self, batch: Batch, source: str | None) -> None:
        """Count a validated batch and its slices' rows."""
        self._accumulate(batch)
        labels, predictions = batch.seen
        self._label_values = _union(self._label_values, labels)
        self._prediction_values = _union(self._prediction_values, predictions)
        if source is not None and source not in self._sources:
            self._sources = [*self._sources, str(source)]
        for column, v, rows in batch.cuts if self.by else ():
            sub = self._slices[column].setdefault(v, self._sub())
            sub._take(batch.on(rows, cuts=False), None)

    def _cluster_sub(self) -> FairnessEvaluator:
        """An evaluator configured as this one without intervals: a cluster's counts."""
        ci = self.ci.config() if self.ci is not None else {}
        return FairnessEvaluator(**{k: v for k, v in self.config().items() if k not in ci})

    def _accumulate(self, batch: Batch) -> None:
        """Count a validated batch (its privileged masks and groupings computed)."""
        t, p, w, label = batch.t, batch.p, batch.w, self.positive_label
        counts, sums = self._counts.copy(), self._definition_weights.copy()
        matched = []
        for i, (mask, hits) in enumerate(batch.masked):
            cells = _cells(group_counts(t, p, mask, positive_label=label))
            counts[i] += cells
            if w is None:
                sums[i] += cells
            else:
                sums[i] += _cells(group_counts(t, p, mask, positive_label=label, sample_weight=w))
            matched.append(hits)
        self._counts, self._definition_weights = counts, sums
        self._privileged_matched = self._privileged_matched + np.concatenate(
            [np.zeros(0, np.int64), *matched]
        )
        tb, pb = t == label, p == label
        for j, (names, codes) in enumerate(batch.groupings):
            self._tables[j] = self._tables[j] + GroupTable.from_codes(names, codes, tb, pb, w)
        cell = confusion_cell(tb, pb)
        if self._units is not None:
            masks = [m for m, _ in batch.masked]
            self._units = self._units + Units.of_batch(cell, masks, batch.groupings, w)
        now = np.bincount(cell, minlength=4)
        self._overall = self._overall + now
        self._overall_weights = self._overall_weights + (
            now if w is None else np.bincount(cell, weights=w, minlength=4)
        )
        self._weighted = self._weighted or w is not None

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

    # ------------------------------------------------------------ compute

    def _compute(self) -> MetricSet:
        assert self._label_values is not None and self._prediction_values is not None
        check_value_sets(
            self._label_values,
            self._prediction_values,
            self.positive_label,
            source=", ".join(self._sources) or "labels and predictions",
        )
        self._check_privileged_values()
        whole = self.stats()
        if self.ci is not None:
            intervals(whole, self.ci)
        out = whole.records()
        parts = {c: {v: self._slice_stats(c, v) for v in subs} for c, subs in self._slices.items()}
        return MetricSet([*out, *slice_records(whole, out, parts, self.ci)])

    def counts(self) -> Counts:
        """The counts of the rows added: per definition, per group column, overall, each with
        its weight sums when some rows came with weights
        (:class:`~assay.fairness.tally.Counts`)."""
        if not self._weighted:
            return Counts(self._counts, list(self._tables), self._overall)
        tables, w = list(self._tables), self._overall_weights
        return Counts(self._counts, tables, self._overall, self._definition_weights, w)

    def stats(self, *, mean: bool = True) -> Stats:
        """The :class:`~assay.fairness.tally.Stats` of the rows added: the point estimate's
        records in families (with ``mean``, their mean over the definitions too), the classes
        of datums and, with ``cluster``, each cluster's counts."""
        clusters = {g: c.counts() for g, c in self._clusters.items()}
        return self._stats_of(clusters, mean=mean)

    #: What identifies a record among its tally's keys (``assay compare``).
    tally_where = KEY

    def tally(self) -> list[Tally]:
        """The tallies of the whole set's records (:func:`~assay.fairness.tally.tallies`):
        what the engine draws for their intervals (``ci``; the percentile bootstrap). With
        ``cluster``, one tally per family (its rows are units); ``compute()`` draws them
        in one tally, the same clusters in every resample."""
        stats = self.stats()
        return tallies(stats, drawn(stats)[0], self.ci or CIOptions(0.95), apart=True)

    def _stats_of(self, clusters: Mapping[str, Counts], *, mean: bool) -> Stats:
        counts = self.counts()
        units = self._units if self._units is not None and self._units.complete else None
        return Stats(families(self, counts, mean=mean), counts, units, clusters)

    def _slice_stats(self, column: str, value: str | None) -> Stats:
        """The stats of one slice: its rows' counts, and each cluster's rows in the slice."""
        clusters = {g: c._slices[column][value].counts() for g, c in self._clusters.items()
                    if value in c._slices[column]}  # fmt: skip
        return self._slices[column][value]._stats_of(clusters, mean=False)

    def _check_privileged_values(self) -> None:
        cuts = np.cumsum([len(g.values or ()) for g in self.groups])[:-1]
        for g, matched in zip(self.groups, np.split(self._privileged_matched, cuts)):
            if g.values is None or matched.all():
                continue
            absent = [v for v, k in zip(g.values, matched) if k == 0]
            raise InvalidInputError(
                f"privileged value {absent[0]!r} of {g.label!r} occurs in no row",
                source=", ".join(self._sources) or "group_values",
                field=g.group_column,
            )

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        # Hand-written for states saved by older versions, which no declaration reads: their
        # keys are renamed first (:func:`_upgraded`), and a state without classes of datums
        # is told from one with none yet, so such data gets no interval drawn from its
        # classes, here or merged (``Units.complete``).
        state = _upgraded(state)
        super()._load_state(state)
        if self._units is not None and not any(k.startswith("units.") for k in state):
            self._units = replace(self._units, complete=not self._overall.any())


def _upgraded(state: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
    """A state of an older version in today's keys: the group tables and classes of datums
    under their accumulators' names, the overall counts of one from before group columns,
    the weight sums of one without weights (its counts). Slices and clusters of an older
    state are refused (they would be lost silently)."""
    if "counts" not in state:
        return state
    if any(k.endswith(".column") and k.startswith(("slices.", "clusters.")) for k in state):
        raise InvalidInputError(
            "a state saved by an older version with slices or clusters: compute it again",
            source="FairnessEvaluator.from_state",
        )
    out: dict[str, np.ndarray] = {}
    for k, v in state.items():
        if k.startswith("group_"):
            k = f"tables.{k}"
        elif k.startswith("unit_"):
            k = "units." + k[len("unit_") :]
        out[k] = v
    counts = np.asarray(out["counts"], dtype=np.int64)
    if "overall" not in out and len(counts):  # from before group columns: one definition's
        out["overall"] = counts[0].sum(axis=1)
    if "weighted" not in out:
        out["weighted"] = np.array("overall_weights" in out)
    if "overall_weights" not in out:
        out["overall_weights"] = np.asarray(out.get("overall", np.zeros(4)), np.float64)
    if "definition_weights" not in out:
        out["definition_weights"] = counts.astype(np.float64)
    return out


@removed_keywords(pos_label="positive_label")
def evaluate_fairness(
    data: Any,
    *,
    label: str,
    prediction: str,
    groups: Sequence[GroupSpec] = (),
    group_columns: Sequence[str | Sequence[str]] = (),
    control_columns: Sequence[str] = (),
    positive_label: Any = 1,
    sample_weight: str | None = None,
    zero_division: float | None = None,
    method: str = "between_groups",
    agg: str = "worst_case",
    by: Sequence[str] = (),
    **interval: Any,
) -> MetricSet:
    """One-call fairness evaluation of a table; ``sample_weight`` names a column of weights;
    ``by`` columns to slice by; the other arguments (``interval``: ``ci``, ``ci_method``,
    ``num_bootstrap``, ``seed``, ``cluster``) are :class:`FairnessEvaluator`'s.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "sex": [1, 1, 0, 0]})
        >>> ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex"])
        >>> ms.get("DisparateImpact", group_column="sex").value
        0.0
    """
    return (
        FairnessEvaluator(
            groups,
            group_columns=group_columns,
            control_columns=control_columns,
            positive_label=positive_label,
            zero_division=zero_division,
            method=method,
            agg=agg,
            by=by,
            **interval,
        )
        .add(data, label=label, prediction=prediction, sample_weight=sample_weight)
        .compute()
    )


def _cells(c: GroupCounts) -> NDArray[Any]:
    """A definition's (4, 2) cells: TP, FP, FN, TN x unprivileged, privileged."""
    return np.stack([c.tp, c.fp, c.fn, c.tn])


def _added(a: Any, b: Any) -> Any:
    """Tables (a list, by group column) or classes of datums added."""
    return [x + y for x, y in zip(a, b)] if isinstance(a, list) else a + b


def _union(a: NDArray[Any] | None, b: NDArray[Any]) -> NDArray[Any]:
    return b if a is None else np.union1d(a, b)


def _joined(a: list[str], b: list[str]) -> list[str]:
    return [*a, *(s for s in b if s not in a)]


def _texts(names: list[str]) -> dict[str, np.ndarray]:
    return {"names": np.array(names, dtype=str)}


def _from_texts(arrays: Mapping[str, np.ndarray]) -> list[str]:
    return [str(x) for x in np.asarray(arrays["names"]).reshape(-1).tolist()]
