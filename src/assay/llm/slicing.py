"""Slices of every LLM evaluation: the headline metrics again per value of an item column.

``by=["bias_type"]`` (CLI ``--by bias_type``) gives, for every value ``v`` of the item
column, the evaluation's headline records computed on the items whose column is ``v``,
exactly as evaluating that subgroup alone would give them (with its own interval under
``ci``), with ``slice_column``, ``slice``, ``n`` (the items in the slice) and ``gap`` (the
slice's value minus the whole set's) after the record's own parameters
(:func:`assay.uncertainty.slices.annotate`). Items whose column is empty are in no slice. A
slice too small for a metric gives ``value: null`` with the reason, as the whole set would.

Everything comes from the parsed answers the evaluation already has (one pass over the
model, no call made twice): :class:`SlicedEvaluator` keeps each item's arguments to the
evaluator and its columns (state that merges by concatenation), and computes the whole set
and each slice through the evaluator itself.

**The gap's interval** (``gap_ci_low``, ``gap_ci_high``, with ``ci``): a percentile
bootstrap in which every resample draws ``n`` items from all ``n`` items, and the slice's
value and the whole set's are computed from the same draw. Items with equal arguments and
equal slice value are collapsed first (:func:`assay.uncertainty.collapsing.collapse`: the
resample counts over the distinct rows are exactly those of per-item draws), and every
resample's records come at once from the evaluator's item tally
(:mod:`assay.llm.suites.tally`) of the distinct rows: the drawn counts times each row's
cells are the resamples' outcome counts, and the point estimate's own formulas run on all
of them (NaN where a record would be ``null``). No evaluator runs per resample.

Example:
    >>> from assay.llm.suites.language import LanguageEvaluator
    >>> ev = SlicedEvaluator(evaluator=LanguageEvaluator, by=["level"])
    >>> _ = ev.add({"level": ["a", "a", "b"]}, languages=["en", "en", "en"],
    ...            outcomes=["correct", "incorrect", "correct"])
    >>> m = ev.compute().get("Accuracy", language="all", slice="a")
    >>> m.value, m.parameters["n"], m.parameters["gap"]
    (0.5, 2, -0.16666666666666663)
"""

from __future__ import annotations

import importlib
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.options import REQUIRED, Bad, Option, Options, custom, names
from assay.results import Metric, MetricSet
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import CIOptions, gap_bounds, interval_from, tally_bounds
from assay.uncertainty.options import interval_options
from assay.uncertainty.slices import annotate, slice_text, text_slices
from assay.uncertainty.tally import Key, Tally

__all__ = [
    "SLICED_OPTIONS",
    "SlicedEvaluator",
    "TalliedEvaluator",
    "WHERE",
    "check_by",
    "check_clusters",
    "column_text",
    "headline",
    "record_key",
]

F64 = NDArray[np.float64]

#: What identifies an LLM record within a slice (beside its type): its gap is to the whole
#: set's record with the same values of these parameters.
WHERE = (
    "scope",
    "language",
    "group_column",
    "group",
    "privileged",
    "counterfactual",
    "aggregate",
    "prompt_version",
)


def record_key(kind: str, parameters: Mapping[str, Any]) -> Key:
    """The record's type and its :data:`WHERE` parameters (None where absent): its key
    among the tallies' keys.

    Example:
        >>> record_key("LMS", {"scope": "gender", "n": 3})[:2]
        ('LMS', 'gender')
    """
    return (kind, *(parameters.get(k) for k in WHERE))


class TalliedEvaluator(Evaluator):
    """An LLM evaluator whose state is counts that items add to: :meth:`item_tally` of some
    items is the tally over them (:func:`assay.llm.suites.tally.item_tally`) that
    :class:`SlicedEvaluator` draws its cluster bootstrap and gaps from."""

    #: the record types that carry an interval (None: every record of the item tally)
    kinds: tuple[str, ...] | None = None

    @abstractmethod
    def item_tally(self, *args: Any, **kwargs: Any) -> Tally:
        """The tally over the items ``add`` would take (checked as ``add`` checks)."""

    def unit_tallies(self, *args: Any, **kwargs: Any) -> list[Tally]:
        """The tallies its own intervals come from (``tally()``), made of the items ``add``
        would take, each item a unit named by its position (default: none; its intervals
        are not on the engine)."""
        return []


def _tallied(name: str) -> type[TalliedEvaluator]:
    """The :class:`TalliedEvaluator` class of a dotted name (:class:`Bad` otherwise)."""
    mod, _, attr = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(mod), attr) if mod else None
    except (ImportError, AttributeError):
        found = None
    if not (isinstance(found, type) and issubclass(found, TalliedEvaluator)):
        raise Bad(
            f"must be a TalliedEvaluator (see assay.llm.slicing) or its dotted name, got {name!r}"
        )
    return found


def _evaluator_name(v: Any) -> str:
    """A :class:`TalliedEvaluator` class or its dotted name, as the dotted name."""
    if isinstance(v, type):
        v = f"{v.__module__}.{v.__qualname__}"
    if not isinstance(v, str):
        raise Bad(
            f"must be a TalliedEvaluator (see assay.llm.slicing) or its dotted name, got {v!r}"
        )
    _tallied(v)
    return v


def _inner_config(v: Any) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise Bad(f"must be the wrapped evaluator's keyword arguments (a mapping), got {v!r}")
    return dict(v)


#: The options of :class:`SlicedEvaluator`: the evaluator it wraps (stored by its dotted
#: name), that evaluator's own options, the slices and the intervals (the cluster bootstrap
#: is the wrapper's). The library's only: an LLM command takes them from its run options.
SLICED_OPTIONS = Options(
    Option(
        "evaluator",
        REQUIRED,
        custom(
            "a TalliedEvaluator class or its dotted name",
            _evaluator_name,
            (3, "no.such.Evaluator", "assay.evaluator.Evaluator"),
        ),
        None,
        "The evaluator sliced (a TalliedEvaluator), or its dotted name.",
        example="assay.llm.suites.cat.CATEvaluator",
    ),
    Option(
        "config",
        None,
        custom("a mapping of keyword arguments or None", _inner_config, ("x", 3)),
        None,
        "The wrapped evaluator's keyword arguments.",
    ),
    Option("by", (), names(), None, "Item columns to slice every headline record by."),
    interval_options(unit="item"),
)


def check_by(by: Sequence[str], columns: Sequence[str], what: str, source: str = "--by") -> None:
    """Every ``by`` column is an item column of the evaluation (before any call).

    Example:
        >>> check_by(["topic"], ["uid", "topic"], "text rows")
        >>> check_by(["site"], ["uid"], "text rows")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --by: unknown column 'site'; the text rows have: uid
    """
    have = list(dict.fromkeys(columns))
    for c in by:
        if c not in have:
            shown = ", ".join(have) or "no column"
            raise InvalidInputError(
                f"unknown column {c!r}; the {what} have: {shown}", source=source
            )


def check_clusters(column: str, items: Sequence[tuple[str, Any]], what: str = "items") -> None:
    """Every item has a value of the ``--cluster`` column ``column`` (checked before any
    call; scoring refuses an item without one): ``items`` are each item's name as the user
    finds it in the data and its value. The first item without a value is refused.

    Example:
        >>> check_clusters("site", [("uid a", "s1"), ("uid b", 2.0)])
        >>> check_clusters("site", [("uid a", "s1"), ("uid b", None)], "text rows")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --cluster: uid b: field 'site': no cluster value \
(1 of 2 text rows have none)
    """
    empty = np.flatnonzero(column_text([v for _, v in items]) == "")
    if empty.size:
        raise InvalidInputError(
            f"no cluster value ({empty.size} of {len(items)} {what} have none)",
            source="--cluster",
            record=items[int(empty[0])][0],
            field=column,
        )


def column_text(values: Sequence[Any]) -> NDArray[np.str_]:
    """An item column as slice text (``3`` for 3.0; empty for a missing value).

    Example:
        >>> column_text([3.0, "x", None, float("nan")]).tolist()
        ['3', 'x', '', '']
    """

    def one(v: Any) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return ""
        return slice_text(v)

    return np.array([one(v) for v in values], dtype=str)


def headline(records: Sequence[Metric]) -> list[Metric]:
    """The records a slice repeats: those with a number (or ``null``) as value, not counts
    and not per-datum records.

    Example:
        >>> [m.type for m in headline([Metric("LMS", 50.0), Metric("CATCounts", {"errors": 0})])]
        ['LMS']
    """
    return [m for m in records if not isinstance(m.value, dict) and "datum_uid" not in m.parameters]


def _key(m: Metric) -> tuple[Any, ...]:
    return record_key(m.type, m.parameters)


class SlicedEvaluator(Evaluator):
    """An LLM evaluator (``evaluator``: the class or its dotted name, ``config`` its keyword
    arguments) with slices by the item columns ``by`` and intervals under ``ci``.

    ``add(columns, **args)`` takes the evaluator's ``add`` arguments as item-aligned
    arrays (one entry per item) and the item ``columns`` named in ``by`` (and ``cluster``).

    ``cluster`` (with ``ci``): an item column whose values are clusters; every interval
    (the whole set's, each slice's, the gaps') is then the cluster bootstrap: a resample
    draws whole clusters (:class:`assay.uncertainty.clusters.Clusters`), and the records of the
    distinct (arguments, cluster) rows weighted by their clusters' draws (the evaluator's
    item tally, every resample at once) are exactly the evaluator's on
    a copy of every item of every drawn cluster. ``evaluator`` is a
    :class:`TalliedEvaluator` (every suite's is).
    """

    OPTIONS = SLICED_OPTIONS

    def __init__(
        self,
        *,
        evaluator: type[Evaluator] | str,
        config: Mapping[str, Any] | None = None,
        by: Sequence[str] = (),
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
    ) -> None:
        self.cls = _tallied(str(evaluator))
        self.inner = dict(config or {})
        self.by = tuple(by)
        self.ci = interval_from(self.options)
        self.cluster = cluster
        self.columns = tuple(dict.fromkeys([*self.by, *([cluster] if cluster else [])]))
        # per item, in batches (lists of array chunks): the evaluator's arguments, the columns
        self._args: dict[str, list[np.ndarray]]
        self._cols: dict[str, list[np.ndarray]]
        self.add_state("_args", {}, "cat")
        self.add_state("_cols", {c: [] for c in self.columns}, "cat")

    def item_tally(self, args: Mapping[str, np.ndarray]) -> Tally:
        """The wrapped evaluator's tally over the items ``args``."""
        ev = self.make(None)
        assert isinstance(ev, TalliedEvaluator)
        return ev.item_tally(**args)

    def tally(self) -> list[Tally]:
        """The tallies of the whole set's intervals, each item a unit named by its position:
        with ``cluster`` one over the distinct (arguments, cluster) rows of the items, of
        every record with an interval (:func:`record_key`); else the wrapped evaluator's
        own."""
        args, cols = self.arrays()
        ev = self.make(self.ci)
        assert isinstance(ev, TalliedEvaluator)
        if not args:
            return []
        if self.cluster is None:
            return ev.unit_tallies(**args)
        joint, _ = self._joint(args, [], cols[self.cluster])
        if ev.kinds is None:
            return [joint]
        keep = np.array([k[0] in ev.kinds for k in joint.keys])
        keys = tuple(k for k, ok in zip(joint.keys, keep) if ok)
        return [replace(joint, keys=keys, values=lambda w: joint.values(w)[:, keep])]

    def _joint(
        self, args: Mapping[str, np.ndarray], extra: Sequence[np.ndarray], clusters: Any
    ) -> tuple[Tally, np.ndarray]:
        """The tally over the distinct rows of the items' arguments (with the ``extra``
        integer codes, and the cluster), each item a unit named by its position, and each
        row's ``extra`` codes: the wrapped evaluator's item tally of an item of each row."""
        pattern, rows, mult, inverse, groups = _distinct(args, extra, clusters)
        inner = self.item_tally(pattern)
        tally = replace(
            inner,
            values=lambda w: inner.values(np.rint(w)),
            multiplicity=mult,
            unit=inverse,
            ids=np.arange(inverse.size),
            codes=None if groups is None else (lambda column: groups[inverse]),
        )
        return tally, rows

    def make(self, ci: CIOptions | None) -> Evaluator:
        """A fresh evaluator of the wrapped class (with the interval options ``ci``; the
        cluster bootstrap is this class's, so the wrapped one never sees ``cluster``)."""
        opts = ci.config() if ci else {}
        opts.pop("cluster", None)
        return self.cls(**self.inner, **opts)

    def add(self, columns: Mapping[str, Sequence[Any]], **args: Any) -> SlicedEvaluator:  # type: ignore[override]
        arrays = {k: np.asarray(v) for k, v in args.items()}
        n = {a.shape[0] for a in arrays.values()}
        if len(n) != 1:
            raise InvalidInputError("item arguments differ in length", source="SlicedEvaluator")
        size = n.pop()
        cols = {}
        for c in self.columns:
            if c not in columns:
                raise InvalidInputError("missing item column", source="SlicedEvaluator", field=c)
            cols[c] = column_text(list(columns[c]))
            if cols[c].shape[0] != size:
                raise InvalidInputError("length differs", source="SlicedEvaluator", field=c)
        if self.cluster is not None and (cols[self.cluster] == "").any():
            missing = int((cols[self.cluster] == "").sum())
            raise InvalidInputError(
                f"{missing} item(s) have no cluster", source="cluster", field=self.cluster
            )
        if self._args and set(arrays) != set(self._args):
            raise InvalidInputError("other item arguments than before", source="SlicedEvaluator")
        self.make(None).add(**arrays)  # the evaluator checks the batch (nothing kept on error)
        for k, a in arrays.items():
            self._args.setdefault(k, []).append(a)
        for c, v in cols.items():
            self._cols[c].append(v)
        return self

    def _check_merge(self, other: SlicedEvaluator) -> None:
        if self._args and other._args and set(other._args) != set(self._args):
            raise InvalidInputError("other item arguments", source="SlicedEvaluator.merge")

    def arrays(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The items' arguments and columns, each one array."""
        args = {k: np.concatenate(v) for k, v in self._args.items()}
        n = next(iter(args.values())).shape[0] if args else 0
        cols = {c: np.concatenate(v) if v else np.zeros(n, str) for c, v in self._cols.items()}
        return args, cols

    def _records(self, args: Mapping[str, np.ndarray], clusters: np.ndarray | None) -> MetricSet:
        """The evaluator's records of ``args`` (with its intervals, or with the cluster
        bootstrap's over ``clusters``)."""
        out = self.make(self.ci).add(**args).compute()
        if clusters is not None:
            _cluster_intervals(self, args, clusters, list(out))
        return out

    def _compute(self) -> MetricSet:
        args, cols = self.arrays()
        clusters = cols[self.cluster] if self.cluster else None
        whole = self._records(args, clusters)
        out = list(whole)
        wanted = headline(whole)
        for c in self.by:
            values = cols[c]
            names = text_slices(values)  # "" last: the units without a value (slice null)
            gaps = self._gap_intervals(args, values, names, wanted, clusters) if self.ci else {}
            for v in names:
                keep = values == v
                part = self._records(
                    {k: a[keep] for k, a in args.items()},
                    None if clusters is None else clusters[keep],
                )
                found = {k[1:]: lohi for k, lohi in gaps.items() if k[0] == v}
                out += annotate(
                    headline(part), wanted, column=c, value=v or None, n=int(keep.sum()),
                    where=WHERE, gap_ci=found,
                )  # fmt: skip
        return MetricSet(out)

    def _gap_intervals(
        self,
        args: Mapping[str, np.ndarray],
        values: np.ndarray,
        names: list[str],
        whole: list[Metric],
        clusters: np.ndarray | None = None,
    ) -> dict[tuple[Any, ...], tuple[float, float]]:
        """``{(slice, *record key): (low, high)}`` of every slice's gaps: one tally of every
        gap, its resamples drawn once, each slice's values read from the same draws as the
        whole set's (a key the tally lacks: NaN)."""
        assert self.ci is not None
        sl = np.unique(values, return_inverse=True)
        tally, rows = self._joint(args, [sl[1].reshape(-1)], clusters)
        keep = [sl[0][rows[:, 0]] == v for v in names]
        col = {k: j for j, k in enumerate(tally.keys)}
        keys = [_key(m) for m in whole]
        at = np.array([col.get(k, -1) for k in keys], dtype=np.intp)

        def gaps(w: F64) -> F64:
            base = tally.values(w)
            parts = [tally.values(w * mask) - base for mask in keep]
            out = np.concatenate([np.where(at >= 0, p[:, at], np.nan) for p in parts], axis=1)
            return out

        gap = replace(tally, keys=tuple((v, *k) for v in names for k in keys), values=gaps)
        return gap_bounds([gap], self.ci)


def _distinct(args: Mapping[str, np.ndarray], extra: Sequence[np.ndarray], clusters: Any) -> Any:
    """The distinct rows of the items' arguments (with the ``extra`` integer codes, and the
    cluster): an item of each (``pattern``), the distinct ``extra`` codes (one column each),
    the rows' multiplicities, each item's row and, with ``clusters``, each row's cluster
    (``0 .. G-1``)."""
    codes = [np.unique(a.astype(str), return_inverse=True)[1].reshape(-1) for a in args.values()]
    groups = None if clusters is None else np.unique(clusters, return_inverse=True)[1].reshape(-1)
    table = np.column_stack([*codes, *extra, *([] if groups is None else [groups])])
    rows, mult, inverse = collapse(table)
    rep = np.zeros(rows.shape[0], dtype=np.int64)  # an item of each distinct row
    rep[inverse[::-1]] = np.arange(inverse.size)[::-1]
    pattern = {k: a[rep] for k, a in args.items()}
    found = None if groups is None else rows[:, -1].astype(np.intp)
    return pattern, rows[:, len(codes) :], mult, inverse, found


def _cluster_intervals(
    ev: SlicedEvaluator, args: Mapping[str, np.ndarray], clusters: np.ndarray, records: list[Metric]
) -> None:
    """Replace, in place, the interval of every headline record that has one by the
    percentile cluster bootstrap over ``clusters`` (the items' cluster values)."""
    assert ev.ci is not None
    targets = [m for m in headline(records) if "ci_low" in m.parameters]
    if not targets:
        return
    tally, _ = ev._joint(args, [], clusters)
    ends, _ = tally_bounds(tally, ev.ci)
    col = {k: j for j, k in enumerate(tally.keys)}
    nan = np.full(2, np.nan)
    ci = np.column_stack([ends[:, col[k]] if k in col else nan for k in map(_key, targets)])
    for j, m in enumerate(targets):
        lo, hi = (float(ci[0, j]), float(ci[1, j])) if m.value is not None else (None, None)
        for stale in ("ci_undefined", "num_bootstrap", "seed"):
            m.parameters.pop(stale, None)
        m.parameters.update(ev.ci.parameters(lo, hi, "bootstrap"))
