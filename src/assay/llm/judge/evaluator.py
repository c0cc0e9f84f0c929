"""``JudgeEvaluator``: accumulates per-datum judge records and computes the aggregates.

The judge run (:func:`assay.llm.judge.judge`) produces one record per datum and metric;
this evaluator folds such records in batches (or from other processes, via ``merge`` or
``state``), and ``compute()`` gives them back with one aggregate record per metric
(mean, stderr, bootstrap interval, counts of errors and undefined values).

Example:
    >>> from assay.stats.means import datum_record
    >>> ev = JudgeEvaluator(metrics=["bias"])
    >>> ev.add([datum_record("Bias", "d1", 0.5), datum_record("Bias", "d2", None, reason="x")])
    ... # doctest: +ELLIPSIS
    <...JudgeEvaluator object at ...>
    >>> agg = ev.compute().get("Bias", aggregate="mean")
    >>> agg.value, agg.parameters["n"], agg.parameters["n_undefined"]
    (0.5, 1, 1)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.llm.judge.declared import METRICS, OPTIONS
from assay.llm.judge.prompts import PROMPT_VERSION
from assay.llm.judge.registry import get_metric
from assay.llm.slicing import WHERE, column_text
from assay.results import Metric, MetricSet, to_jsonable
from assay.stats.means import (
    NUM_BOOTSTRAP,
    mean_gap_intervals,
    mean_record,
    mean_tally,
    mean_unit_values,
)
from assay.uncertainty.intervals import interval_from
from assay.uncertainty.slices import annotate, text_slices
from assay.uncertainty.tally import Key, Tally

__all__ = ["JudgeEvaluator", "ERROR_PREFIX"]

ERROR_PREFIX = "judge error: "


#: What the evaluator keeps of each record (the names of its accumulated columns).
_ROW_FIELDS = ("type", "uid", "value", "parameters", "columns")


class JudgeEvaluator(Evaluator):
    """Per-datum judge records in, the same records plus one aggregate per metric out.

    Args:
        metrics: judge metric names (their record types are accepted by :meth:`add`).
        num_bootstrap, seed: the aggregates' bootstrap interval.
        ci, ci_method: the interval's level and method (``bootstrap``, ``t``, ``wilson``;
            :func:`~assay.stats.means.mean_record`); without ``ci`` a 95% bootstrap.
        by: item columns to slice the aggregates by (:mod:`assay.llm.slicing`): ``add``
            then takes each record's datum ``columns``.
        cluster: an item column (in ``columns``) whose values are clusters (needs ``ci``):
            every interval is the cluster bootstrap, drawing whole clusters of datums.
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        metrics: Sequence[str],
        num_bootstrap: int = NUM_BOOTSTRAP,
        seed: int = 0,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        cluster: str | None = None,
        by: Sequence[str] = (),
    ) -> None:
        self.metrics = tuple(metrics)
        self.types = tuple(get_metric(m).type for m in self.metrics)
        self.num_bootstrap = num_bootstrap
        self.seed = seed
        self.ci = interval_from(self.options)
        self.by = tuple(dict.fromkeys(by))
        self.cluster = cluster
        self._columns = tuple(dict.fromkeys([*self.by, *([cluster] if cluster else [])]))
        # per record, in batches (lists of array chunks): its type, datum uid, value,
        # parameters (JSON) and its datum's ``by`` columns (JSON)
        self._rows: dict[str, list[np.ndarray]]
        self.add_state("_rows", {k: [] for k in _ROW_FIELDS}, "cat")

    def add(  # type: ignore[override]
        self, records: Iterable[Metric], columns: Mapping[str, Sequence[Any]] | None = None
    ) -> JudgeEvaluator:
        """Fold per-datum records (``parameters["datum_uid"]``) of this evaluator's metrics;
        with ``by``, ``columns`` holds each record's datum's columns (one list per name)."""
        records = list(records)
        cols = _columns(self._columns, columns, len(records))
        if self.cluster and any(not json.loads(c)[self.cluster] for c in cols):
            raise InvalidInputError("every record needs a cluster", field=self.cluster)
        rows = []
        for i, m in enumerate(records):
            if m.type not in self.types:
                raise InvalidInputError(
                    f"record type {m.type!r} is not one of {self.types}", record=i, field="type"
                )
            uid = m.parameters.get("datum_uid")
            if uid is None:
                raise InvalidInputError("missing", record=i, field="datum_uid")
            value = np.nan if m.value is None else float(m.value)
            params = json.dumps(to_jsonable(m.parameters), sort_keys=True)
            rows.append((m.type, str(uid), value, params))
        if rows:
            fields = [*zip(*rows, strict=True), cols]
            for k, values in zip(_ROW_FIELDS, fields, strict=True):
                kind = np.float64 if k == "value" else str
                self._rows[k].append(np.array(values, dtype=kind))
        return self

    def tally(self) -> list[Tally]:
        """The tallies of the aggregates' intervals (:func:`~assay.stats.means.mean_tally`;
        units: the datums, by uid), keyed by :func:`aggregate_key`: each metric's defined
        values, or with ``cluster`` every datum (one without a value drawn with its
        cluster)."""
        if not self._rows["type"]:
            return []
        table = {k: np.concatenate(v) for k, v in self._rows.items()}
        cols = [json.loads(c) for c in table["columns"].tolist()]
        b, seed = (
            (self.ci.num_bootstrap, self.ci.seed) if self.ci else (self.num_bootstrap, self.seed)
        )
        out = []
        for t in self.types:
            mine = table["type"] == t
            if not mine.any():
                continue
            y, uids = table["value"][mine], table["uid"][mine]
            has = ~np.isnan(y)
            # the defined values by uid, then the datums without one (by uid)
            order = np.concatenate(
                [np.flatnonzero(k)[np.argsort(uids[k], kind="stable")] for k in (has, ~has)]
            )
            codes = None
            if self.cluster:
                clusters = np.array([c.get(self.cluster, "") for c in cols], dtype=str)[mine]
                codes = np.unique(clusters[order], return_inverse=True)[1].reshape(-1)
            else:
                order = order[: int(has.sum())]
            out.append(mean_tally((t,), y[order], codes, b, seed, ids=uids[order]))
        return out

    def record_tally_key(self, m: Metric) -> Key | None:
        """Record ``m``'s key among :meth:`tally`'s (None for a per-datum record)."""
        return aggregate_key(m)

    def unit_values(self, key: Key) -> tuple[str, Any, Any, None] | None:
        """Each judged datum's value of one metric (key ``(type,)``), for the paired t test
        of two runs (:mod:`assay.compare.runs`): the datums with a value."""
        if not self._rows["type"] or len(key) != 1:
            return None
        types = np.concatenate(self._rows["type"])
        mine = types == key[0]
        if not mine.any():
            return None
        uids = np.concatenate(self._rows["uid"])[mine]
        return mean_unit_values(uids, np.concatenate(self._rows["value"])[mine])

    def _compute(self) -> MetricSet:
        table = {k: np.concatenate(v).tolist() for k, v in self._rows.items()}
        every = list(zip(table["type"], table["uid"], table["value"], table["parameters"]))
        order = sorted(
            range(len(every)), key=lambda i: (self.types.index(every[i][0]), every[i][1])
        )
        rows = [every[i] for i in order]
        per = [Metric(t, None if np.isnan(v) else v, json.loads(p)) for t, _, v, p in rows]
        cols = [json.loads(table["columns"][i]) for i in order]
        clusters = [c.get(self.cluster, "") for c in cols] if self.cluster else None
        agg = self._aggregates(per, clusters)
        if not self.by:
            return MetricSet(per + agg)
        return MetricSet(per + agg + self._slices(per, cols, agg, clusters))

    def _aggregates(
        self, per: Sequence[Metric], clusters: Sequence[str] | None = None
    ) -> list[Metric]:
        """One mean record per metric type of the per-datum records ``per`` (``clusters``:
        each record's cluster, for the cluster bootstrap)."""
        agg = []
        for t in self.types:
            mine = [m for m in per if m.type == t]
            if not mine:
                continue
            ok = [m for m in mine if m.value is not None]
            cl = None
            if clusters is not None:
                kinds = [(m.value is not None, c) for m, c in zip(per, clusters) if m.type == t]
                cl = ([c for has, c in kinds if has], [c for has, c in kinds if not has])
            errors = sum(
                str(m.parameters.get("undefined", "")).startswith(ERROR_PREFIX) for m in mine
            )
            agg.append(
                mean_record(
                    t,
                    [m.value for m in ok],
                    [m.parameters["datum_uid"] for m in ok],
                    {"prompt_version": PROMPT_VERSION},
                    errors=errors,
                    undefined=len(mine) - len(ok) - errors,
                    num_bootstrap=self.num_bootstrap,
                    seed=self.seed,
                    ci=self.ci,
                    clusters=cl,
                )
            )
        return agg

    def _slices(
        self,
        per: Sequence[Metric],
        cols: Sequence[Mapping[str, str]],
        whole: list[Metric],
        clusters: Sequence[str] | None = None,
    ) -> list[Metric]:
        """The aggregates of every slice of every ``by`` column, with their gaps (and, with
        ``ci``, the gaps' intervals: :func:`~assay.stats.means.mean_gap_intervals`)."""
        out: list[Metric] = []
        for c in self.by:
            values = np.array([row.get(c, "") for row in cols], dtype=str)
            names = text_slices(values)  # "" last: the units without a value (slice null)
            gaps: dict[tuple[Any, ...], tuple[float, float]] = {}
            if self.ci is not None:
                for t in self.types:
                    mine = np.array([m.type == t for m in per])
                    y = np.array([np.nan if m.value is None else m.value for m in per])[mine]
                    cl = None if clusters is None else np.asarray(clusters, str)[mine]
                    found = mean_gap_intervals(y, values[mine], names, self.ci, cl)
                    gaps |= {(v, t): lohi for v, lohi in found.items()}
            for v in names:
                part = [m for m, keep in zip(per, values == v) if keep]
                part_cl = None
                if clusters is not None:
                    part_cl = [c for c, keep in zip(clusters, values == v) if keep]
                n = len({m.parameters["datum_uid"] for m in part})
                keys = {m.type: (m.type, *(m.parameters.get(k) for k in WHERE)) for m in whole}
                cis = {keys[t]: lohi for (sv, t), lohi in gaps.items() if sv == v and t in keys}
                recs = self._aggregates(part, part_cl)
                out += annotate(
                    recs, whole, column=c, value=v or None, n=n, where=WHERE, gap_ci=cis
                )
        return out


def aggregate_key(m: Metric) -> Key | None:
    """An aggregate record's key among the tallies' (None: a per-datum record)."""
    return (m.type,) if m.parameters.get("aggregate") == "mean" else None


def _columns(by: Sequence[str], columns: Mapping[str, Sequence[Any]] | None, n: int) -> list[str]:
    """Each record's ``by`` columns as JSON text (``"{}"`` without ``by``)."""
    if not by:
        return ["{}"] * n
    if columns is None:
        raise InvalidInputError("needs the columns of the slices", field="columns")
    texts = {}
    for c in by:
        if c not in columns:
            raise InvalidInputError("missing slice column", field=c)
        texts[c] = column_text(list(columns[c])).tolist()
        if len(texts[c]) != n:
            raise InvalidInputError(f"expected {n} values, got {len(texts[c])}", field=c)
    return [json.dumps({c: texts[c][i] for c in by}, sort_keys=True) for i in range(n)]
