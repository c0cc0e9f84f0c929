"""``grouped()``: one metric applied to each group of samples, plus an aggregate.

The samples are split by their sample-metadata value in ``group_column`` (every sample
needs one). Each group is named ``str(value)``, in order of first appearance, and gets its
own record; the aggregate is the metric over all samples (``all="samples"``), the
unweighted mean of the group values (``all="groups"``, undefined when any group's value
is), or absent (``all=False``).

Record parameters (the names of ``docs/records.md``): ``group_column``, ``group`` (the
group's value, or ``all_label`` for the aggregate, which also carries ``all``), and
``name`` when a ``name_template`` other than the default renames the groups.

Example:
    >>> from assay.stats import ScoreFrame, accuracy
    >>> f = ScoreFrame.from_arrays([1, 0, 1, 1], metadata={"topic": ["a", "a", "b", "b"]})
    >>> grouped(accuracy(), "topic")(f)
    {'a': 0.5, 'b': 1.0, 'all': 0.75}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

import assay.stats.compute as compute
from assay._compat import removed_keywords
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.results import Metric
from assay.stats.frame import ScoreFrame
from assay.stats.metric_registry import MetricFn, check_spec, get_metric
from assay.stats.records import aggregate_context, group_context, record, undefined_record
from assay.stats.score import SampleScore
from assay.stats.score_input import as_frame, as_objects
from assay.stats.tally import SampleCI

__all__ = ["GroupedMetricFn", "grouped", "metric_from_spec"]

AllMode = Literal["samples", "groups", False]
_DEFAULT_TEMPLATE = "{group_name}"


class GroupedMetricFn(MetricFn):
    """A metric applied per group of a sample-metadata column; see :func:`grouped`."""

    def __init__(
        self,
        inner: MetricFn,
        group_column: str,
        all: AllMode,
        all_label: str,
        name_template: str,
    ) -> None:
        options = {
            "group_column": group_column,
            "all": all,
            "all_label": all_label,
            "name_template": name_template,
        }
        spec = None if inner.spec is None else {**inner.spec, "grouped": options}
        super().__init__(inner.name, inner.params, inner.fn, spec, takes=inner.takes)
        self.inner = inner
        self.to_float = inner.to_float
        self.group_column = group_column
        self.all = all
        self.all_label = all_label
        self.name_template = name_template

    def __repr__(self) -> str:
        return f"grouped({self.inner!r}, {self.group_column!r}, all={self.all!r})"

    def _groups(self, frame: Any) -> list[tuple[str, str, Any]]:
        if len(frame) == 0:
            return []
        if not isinstance(frame, ScoreFrame):  # SampleScore objects, for raw-value metrics
            return self._check_labels(self._object_groups(frame))
        col = frame.column(self.group_column)
        labels = np.asarray([str(x) for x in col.tolist()], dtype=object)
        codes, uniques = compute.factorize(labels)
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(np.bincount(codes, minlength=len(uniques)))[:-1]
        out = []
        for gi, idx in enumerate(np.split(order, bounds)):
            label = str(uniques[gi])
            out.append((label, self.name_template.format(group_name=label), frame.take(idx)))
        return self._check_labels(out)

    def _object_groups(self, scores: list[SampleScore]) -> list[tuple[str, str, Any]]:
        groups: dict[str, list[SampleScore]] = {}
        for s in scores:
            value = (s.sample_metadata or {}).get(self.group_column)
            if value is None:
                raise InvalidInputError(
                    f"sample metadata has no value for {self.group_column!r}",
                    record=f"sample {s.sample_id!r}",
                    field=self.group_column,
                )
            groups.setdefault(str(value), []).append(s)
        return [(k, self.name_template.format(group_name=k), g) for k, g in groups.items()]

    def _check_labels(self, out: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
        if self.all is not False and any(name == self.all_label for _, name, _ in out):
            raise InvalidInputError(
                f"group name {self.all_label!r} collides with the aggregate's label; pass "
                "another all_label= to grouped()",
                field=self.group_column,
            )
        return out

    def _evaluate(
        self, frame: Any, context: Mapping[str, Any], ci: SampleCI | None = None
    ) -> tuple[list[Metric], list[str]]:
        """The records and, in the same order, the names the groups are called by."""
        records: list[Metric] = []
        names: list[str] = []
        renamed = self.name_template != _DEFAULT_TEMPLATE
        for label, name, sub in self._groups(frame):
            ctx = group_context(
                context, group_column=self.group_column, group=label, name=name if renamed else None
            )
            records.extend(self.inner.records(sub, ctx, ci))
            names.append(name)
        if self.all is not False:
            ctx = aggregate_context(
                context, group_column=self.group_column, group=self.all_label, all=self.all
            )
            records.append(self._aggregate(frame, records, ctx, ci))
            names.append(self.all_label)
        return records, names

    def _aggregate(
        self, frame: Any, groups: list[Metric], ctx: dict[str, Any], ci: SampleCI | None
    ) -> Metric:
        if self.all == "samples":
            (over_samples,) = self.inner.records(frame, ctx, ci)
            return over_samples
        params, n = self.inner.record_parameters(), len(frame)
        bad = [r for r in groups if not isinstance(r.value, float)]
        if not groups:
            reason = "requires at least 1 group"
            return undefined_record(self.name, reason, params=params, context=ctx, n=n)
        if bad:
            why = bad[0].parameters.get("undefined", "value is not a number")
            reason = (
                f"all='groups' needs every group's value; group "
                f"{bad[0].parameters['group']!r}: {why}"
            )
            return undefined_record(self.name, reason, params=params, context=ctx, n=n)
        value = float(np.mean([r.value for r in groups]))
        return record(self.name, value, params=params, context=ctx, n=n)

    def records(
        self, frame: Any, context: Mapping[str, Any] | None = None, ci: SampleCI | None = None
    ) -> list[Metric]:
        if self.takes != "frame":
            frame = as_objects(frame)
        return self._evaluate(frame, dict(context or {}), ci)[0]

    def __call__(self, scores: Any) -> dict[str, float]:  # type: ignore[override]
        out: dict[str, float] = {}
        data = (
            as_frame(scores, self.to_float, borrow=True)
            if self.takes == "frame"
            else as_objects(scores)
        )
        records, names = self._evaluate(data, {})
        for name, r in zip(names, records):
            if r.value is None:
                raise UndefinedMetricError(
                    self.name, f"group {name!r}: {r.parameters['undefined']}"
                )
            out[name] = r.value
        return out


@removed_keywords(key="group_column", group_key="group_column")
def grouped(
    metric: MetricFn,
    group_column: str | None = None,
    *,
    all: AllMode = "samples",
    all_label: str = "all",
    name_template: str = _DEFAULT_TEMPLATE,
) -> GroupedMetricFn:
    """Apply ``metric`` to each group of samples sharing a value of ``group_column``.

    For groups g with samples S_g, the record of g is ``metric(S_g)``; the aggregate is
    ``metric(all samples)`` (``all="samples"``) or ``mean_g metric(S_g)``
    (``all="groups"``). Called directly it returns ``{name: value}`` with names from
    ``name_template.format(group_name=...)`` and the aggregate under ``all_label``.

    Parameters
    ----------
    metric
        A configured metric, e.g. ``accuracy()``.
    group_column
        The sample-metadata key to group by (Inspect AI calls it ``group_key``; give it by
        position to write code both accept).
    all
        ``"samples"``, ``"groups"`` or False, see above.
    all_label
        The aggregate's label (it may not also be a group's name).
    name_template
        How a group is named in the returned dict (and in the records' ``name``).

    Returns
    -------
    GroupedMetricFn

    Raises
    ------
    InvalidInputError
        A sample without the column, naming it; a group named like the aggregate.

    Examples
    --------
    >>> from assay.stats import ScoreFrame, accuracy
    >>> f = ScoreFrame.from_arrays([1, 0, 1, 1], metadata={"topic": ["a", "a", "b", "b"]})
    >>> grouped(accuracy(), "topic", all="groups", name_template="topic_{group_name}")(f[:3])
    {'topic_a': 0.5, 'topic_b': 1.0, 'all': 0.75}
    """
    if group_column is None:
        raise InvalidInputError("give the metadata column to group by", field="group_column")
    column = str(group_column)
    if all not in ("samples", "groups", False):
        raise InvalidInputError(f"must be 'samples', 'groups' or False, got {all!r}", field="all")
    if not isinstance(metric, MetricFn):
        raise InvalidInputError(
            "expected a metric built by a factory, e.g. accuracy() (note the parentheses)",
            field="metric",
        )
    return GroupedMetricFn(metric, column, all, all_label, name_template)


def metric_from_spec(spec: Mapping[str, Any] | str) -> MetricFn:
    """Rebuild a metric from its ``spec`` (or a bare registered name).

    Example:
        >>> from assay.stats import stderr
        >>> metric_from_spec(stderr(cluster="doc").spec)
        Stderr(cluster='doc')
    """
    if isinstance(spec, str):
        return get_metric(spec)
    check_spec(spec, "metric")
    if spec.get("grouped") is not None:
        inner = metric_from_spec({k: v for k, v in spec.items() if k != "grouped"})
        return grouped(inner, **spec["grouped"])
    return get_metric(str(spec["metric"]), **dict(spec.get("params") or {}))
