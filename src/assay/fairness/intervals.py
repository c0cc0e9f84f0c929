"""Confidence intervals of the fairness metrics: a bootstrap of a
:class:`~assay.fairness.tally.Tally`, every resample of a chunk at once.

A datum's whole contribution to one privileged-group definition is its cell: (unprivileged
or privileged) x (TP, FP, FN, TN), eight cells; to one group column, (group, or control level
and group) x (TP, FP, FN, TN). Resampling datums and counting them per cell is a multinomial
draw over the cells with probabilities count / n, so the kept counts are the sufficient
statistics: no datum is re-read. A resample gives every family's flat statistics from what it
draws, and the family's ``values`` give its records' replicates (NaN, and left out, where the
record would be ``None``):

* the family's own cells (``drawn`` their counts, no ``chain``): the unweighted datum
  bootstrap of a definition, a group column or the overall numbers;
* classes of interchangeable datums (:class:`~assay.fairness.units.Units`; ``drawn`` their
  multiplicities, a ``chain`` of sparse matrices from class counts to flat statistics): the
  mean over definitions and everything weighted;
* clusters (``cluster=COLUMN``, CLI ``--cluster``): every resample draws whole clusters (a
  patient, a site) and every row counts as often as its cluster was drawn; a cluster's flat
  statistics are one row of :class:`~assay.clusters.Clusters` (:func:`membership`), and a
  resample's are the drawn clusters' summed. Every row must have a cluster.

The gap of a slice's record to the whole set's is the same with two families side by side,
drawn jointly (:func:`gap_replicates`). :func:`attach_intervals` serves the LLM fairness
suite's records (a family of its own cells with the suite's formulas on arrays).

Example:
    >>> import numpy as np
    >>> from assay.fairness import FairnessEvaluator
    >>> ev = FairnessEvaluator(["sex=F"], ci=0.9, num_bootstrap=50, cluster="site")
    >>> ev = ev.add_arrays([1, 0, 1, 1], [1, 0, 0, 1],
    ...     {"sex": ["F", "M", "F", "M"], "site": ["a", "a", "b", "b"]})
    >>> spd = ev.compute()[0]
    >>> spd.parameters["cluster"], spd.parameters["ci_method"]
    ('site', 'bootstrap')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.clusters import Clusters
from assay.fairness.tally import Family, Tally
from assay.fairness.units import Units, joint
from assay.intervals import INTERVAL_KEYS, CIOptions, bootstrap, percentile
from assay.results import Metric

__all__ = [
    "attach",
    "attach_intervals",
    "gap_replicates",
    "intervals",
    "mapped",
    "mark_no_interval",
    "membership",
    "stacked",
    "transposed",
]

F64 = NDArray[np.float64]
Keep = Callable[[Metric], bool] | None
NO_UNITS = "the state has no classes of datums (saved by an older version)"


def intervals(tally: Tally, opts: CIOptions, keep: Keep = None) -> None:
    """Intervals on the records of ``tally``'s families (those ``keep`` wants, when given: no
    interval is drawn for the others). With ``cluster`` every family from the clusters' draw;
    otherwise, without sample weights, each family from its own cells except the mean over
    definitions, and with weights every family, from the classes of datums."""
    fams = [f for f in tally.families if keep is None or any(keep(m) for m in f.records)]
    means = [f for f in fams if f.kind == "mean"]
    one = len(means) == 1 and sum(f.kind == "definition" for f in fams) == 1
    drawn = [f for f in fams if not (one and f.kind == "mean")]
    if opts.cluster:
        flats = [f.flat for f in drawn]
        clusters = membership(tally.clusters, lambda c: np.concatenate([g(c) for g in flats]))
        attach(drawn, clusters, opts, keep=keep)
    else:
        _datums(tally, drawn, opts, keep)
    if one:  # the mean of one definition is that definition: the same interval
        d = next(f for f in fams if f.kind == "definition")
        for avg, it in zip(means[0].records, d.records):
            keys = INTERVAL_KEYS & it.parameters.keys()
            avg.parameters.update({k: it.parameters[k] for k in keys})


def _datums(tally: Tally, fams: list[Family], opts: CIOptions, keep: Keep) -> None:
    """The datum bootstrap of ``fams``: each family from its own cells when the rows came
    without weights (not the mean), the rest from the classes of datums."""
    own = [f for f in fams if not tally.counts.weighted and f.kind != "mean"]
    for f in own:  # the family's own cells: the datums' classes for this family alone
        attach([f], np.rint(f.flat(tally.counts)).astype(np.int64), opts, keep=keep)
    joint_ = [f for f in fams if f not in own]
    if joint_ and tally.units is None:
        for f in joint_:
            mark_no_interval(f.records, NO_UNITS, opts)
    elif joint_ and tally.units is not None:
        attach(joint_, tally.units.counts, opts, stacked(joint_, tally.units), keep)


def membership(clusters: Mapping[str, Any], flat: Callable[[Any], F64]) -> Clusters:
    """:class:`Clusters` whose row ``g`` is the ``flat`` statistics of ``clusters[g]`` (a
    cluster's :class:`~assay.fairness.tally.Counts`; clusters in sorted order)."""
    from scipy import sparse

    rows = [np.asarray(flat(clusters[v]), dtype=np.float64).ravel() for v in sorted(clusters)]
    return Clusters(sparse.csr_matrix(np.stack(rows)))


def _replicates(drawn: Any, chain: Any, opts: CIOptions, row: Callable[[F64], F64]) -> F64:
    """``row`` (b, k) of every chunk of resamples' flat statistics (b, m): ``drawn``
    multiplicities (or :class:`~assay.clusters.Clusters`), mapped by the ``chain`` of sparse
    matrices (None: the draw is the flat statistics)."""
    rows = transposed(chain)
    return bootstrap(lambda w: row(mapped(rows, w)), drawn, opts.num_bootstrap, opts.seed)


def transposed(chain: Sequence[Any] | None) -> list[Any]:
    """A ``chain`` of sparse matrices transposed, row-major (a product with them is faster)."""
    return [m.T.tocsr() for m in chain or ()]


def mapped(rows: Sequence[Any], w: F64) -> F64:
    """Resample weights (b, m) through a :func:`transposed` chain: the flat statistics."""
    for m in rows:
        w = np.asarray((m @ w.T).T)
    return w


def stacked(families: Sequence[Family], units: Units) -> list[Any]:
    """The chain from class counts to the families' flat statistics side by side (one draw of
    the classes serves them all): to the joint cells' counts and sums, then to the families'."""
    from scipy import sparse

    a, cells = joint(units)
    return [a, sparse.hstack([f.matrix(cells) for f in families], format="csr")]


def _interval(m: Metric, keep: Keep) -> bool:
    """Whether record ``m`` gets an interval: a number (not a dict of counts) that ``keep``
    (None: every record) wants."""
    return m.value is not None and not isinstance(m.value, dict) and (keep is None or keep(m))


def attach(
    families: Sequence[Family], drawn: Any, opts: CIOptions, chain: Any = None, keep: Keep = None
) -> None:
    """Bootstrap intervals on every family's records, from one draw whose flat statistics are
    the families' side by side; dict-valued records (counts) and, with ``keep``, the records
    it does not want get none (nor are their replicates' percentiles taken)."""
    starts = np.cumsum([0, *(f.width for f in families)])
    want = [[j for j, m in enumerate(f.records) if _interval(m, keep)] for f in families]
    if not any(want):
        return

    def row(flat: F64) -> F64:
        parts = [f.replicates(flat[:, a : a + f.width])[:, w]
                 for f, a, w in zip(families, starts, want)]  # fmt: skip
        return np.concatenate(parts, axis=1)

    lo, hi = percentile(_replicates(drawn, chain, opts, row), opts.level)
    at = 0
    for f, w in zip(families, want):
        for j in w:
            m = f.records[j]
            m.parameters.update(opts.parameters(float(lo[at]), float(hi[at]), "bootstrap"))
            at += 1


Pair = tuple[Family, Family, list[tuple[int, int]]]


def gap_replicates(pairs: Sequence[Pair], drawn: Any, opts: CIOptions, chain: Any = None) -> F64:
    """Replicates (b, wanted) of slice-minus-whole differences: each pair is a slice's family,
    the whole set's, and the (slice record, whole record) indices wanted; the flat statistics
    are every pair's slice then whole statistics, side by side."""
    starts = np.cumsum([0, *(s.width + w.width for s, w, _ in pairs)])

    def row(flat: F64) -> F64:
        out = []
        for (s, w, want), a in zip(pairs, starts):
            mine = s.replicates(flat[:, a : a + s.width])
            theirs = w.replicates(flat[:, a + s.width : a + s.width + w.width])
            i, j = (list(x) for x in zip(*want))
            out.append(mine[:, i] - theirs[:, j])
        return np.concatenate(out, axis=1)

    return _replicates(drawn, chain, opts, row)


def attach_intervals(
    records: list[Metric], cells: NDArray[Any], values: Callable[[F64], Any],
    opts: CIOptions, clusters: Clusters | None = None,
) -> None:  # fmt: skip
    """Intervals on ``records``: ``values`` of a chunk of resampled counts (b,) + the shape
    of ``cells`` gives their values (b, records), in order, NaN where a record would be
    ``None`` (the point estimate's formulas on arrays); dict-valued records (counts) get
    none. ``clusters``: each cluster's cells (the cluster bootstrap). One family drawn from
    its own cells."""

    def unused(*_: Any) -> Any:
        raise AssertionError("a family drawn from its own cells, never rebuilt")

    fam = Family(records, "own", unused, np.shape(cells), False, unused, unused,
                 lambda k, _: values(k))  # fmt: skip
    flat = np.asarray(cells).reshape(-1).astype(np.int64)
    attach([fam], flat if clusters is None else clusters, opts)


def mark_no_interval(records: list[Metric], why: str, opts: CIOptions) -> None:
    """``ci_undefined`` (with the interval's settings) on defined metric records."""
    for m in records:
        if m.value is not None and not isinstance(m.value, dict):
            m.parameters.update(opts.parameters(None, None, "bootstrap", undefined=why))
