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
  statistics are one row of :class:`~assay.uncertainty.clusters.Clusters`
  (:func:`membership`), and a resample's are the drawn clusters' summed. Every row must have a
  cluster.

The gap of a slice's record to the whole set's is the same with two families side by side,
drawn jointly (:func:`gap_draw`). Each way of drawing is a :class:`Draw`: rows with their
multiplicities (or clusters) and the records' values of resample weights over them, the shape
of the per-unit tally the one engine of assay takes. :func:`attach_intervals` serves the LLM
fairness suite's records (a family of its own cells with the suite's formulas on arrays).

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
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.fairness.tally import Family, Tally
from assay.fairness.units import Units, joint
from assay.results import Metric
from assay.uncertainty.clusters import Clusters
from assay.uncertainty.intervals import INTERVAL_KEYS, CIOptions, bootstrap, percentile

__all__ = [
    "Draw",
    "attach_intervals",
    "draw",
    "draws",
    "gap_draw",
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


@dataclass(frozen=True)
class Draw:
    """One bootstrap of some records, in the shape of the per-unit tally every engine of
    assay takes (:class:`assay.llm.tally.Tally`): ``records`` (the point estimate's, in the
    order of the values' columns), ``values(w)`` their values (b, k) of resample weights
    ``w`` (b, m) over the drawn rows, NaN where a record would be ``None``, and
    ``multiplicity``: how many units each row stands for (a multinomial draw over the rows),
    or :class:`~assay.uncertainty.clusters.Clusters` (the cluster bootstrap)."""

    records: list[Metric]
    values: Callable[[F64], F64]
    multiplicity: NDArray[np.int64] | Clusters

    def replicates(self, opts: CIOptions) -> F64:
        """The values (num_bootstrap, k) of every resample."""
        return bootstrap(self.values, self.multiplicity, opts.num_bootstrap, opts.seed)

    def attach(self, opts: CIOptions) -> None:
        """The percentile interval on each record."""
        if not self.records:
            return
        lo, hi = percentile(self.replicates(opts), opts.level)
        for m, a, b in zip(self.records, lo.tolist(), hi.tolist()):
            m.parameters.update(opts.parameters(float(a), float(b), "bootstrap"))


def intervals(tally: Tally, opts: CIOptions, keep: Keep = None) -> None:
    """Intervals on the records of ``tally``'s families (those ``keep`` wants, when given: no
    interval is drawn for the others), from its :func:`draws`."""
    fams = [f for f in tally.families if keep is None or any(keep(m) for m in f.records)]
    means = [f for f in fams if f.kind == "mean"]
    one = len(means) == 1 and sum(f.kind == "definition" for f in fams) == 1
    for d in draws(tally, [f for f in fams if not (one and f.kind == "mean")], opts, keep):
        d.attach(opts)
    if one:  # the mean of one definition is that definition: the same interval
        first = next(f for f in fams if f.kind == "definition")
        for avg, it in zip(means[0].records, first.records):
            keys = INTERVAL_KEYS & it.parameters.keys()
            avg.parameters.update({k: it.parameters[k] for k in keys})


def draws(tally: Tally, fams: list[Family], opts: CIOptions, keep: Keep = None) -> list[Draw]:
    """What the resamples of ``fams`` (families of ``tally``) draw: with ``cluster`` the
    clusters, every family at once; without, each family its own cells when the rows came
    without weights (not the mean over definitions), and the others the classes of datums
    at once (none, and ``ci_undefined`` on their records, from a state without them)."""
    if opts.cluster:
        flats = [f.flat for f in fams]
        clusters = membership(tally.clusters, lambda c: np.concatenate([g(c) for g in flats]))
        return [draw(fams, clusters, keep=keep)]
    own = [f for f in fams if not tally.counts.weighted and f.kind != "mean"]
    out = [draw([f], np.rint(f.flat(tally.counts)).astype(np.int64), keep=keep) for f in own]
    rest = [f for f in fams if f not in own]
    if rest and tally.units is None:
        for f in rest:
            mark_no_interval(f.records, NO_UNITS, opts)
    elif rest and tally.units is not None:
        out.append(draw(rest, tally.units.counts, stacked(rest, tally.units), keep))
    return out


def membership(clusters: Mapping[str, Any], flat: Callable[[Any], F64]) -> Clusters:
    """:class:`Clusters` whose row ``g`` is the ``flat`` statistics of ``clusters[g]`` (a
    cluster's :class:`~assay.fairness.tally.Counts`; clusters in sorted order)."""
    from scipy import sparse

    rows = [np.asarray(flat(clusters[v]), dtype=np.float64).ravel() for v in sorted(clusters)]
    return Clusters(sparse.csr_matrix(np.stack(rows)))


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


def draw(
    families: Sequence[Family], multiplicity: Any, chain: Any = None, keep: Keep = None
) -> Draw:
    """The draw of ``families`` whose flat statistics, side by side, are the drawn rows
    mapped by the ``chain`` of sparse matrices (None: the rows are the flat statistics);
    dict-valued records (counts) and, with ``keep``, the records it does not want are left
    out."""
    starts = np.cumsum([0, *(f.width for f in families)])
    want = [[j for j, m in enumerate(f.records) if _interval(m, keep)] for f in families]
    rows = transposed(chain)

    def values(w: F64) -> F64:
        flat = mapped(rows, w)
        parts = [f.replicates(flat[:, a : a + f.width])[:, j]
                 for f, a, j in zip(families, starts, want)]  # fmt: skip
        return np.concatenate(parts, axis=1)

    records = [f.records[j] for f, js in zip(families, want) for j in js]
    return Draw(records, values, multiplicity)


Pair = tuple[Family, Family, list[tuple[int, int]]]


def gap_draw(pairs: Sequence[Pair], multiplicity: Any, chain: Any = None) -> Draw:
    """The draw of slice-minus-whole differences: each pair is a slice's family, the whole
    set's, and the (slice record, whole record) indices wanted; the flat statistics are every
    pair's slice then whole statistics, side by side (the records: the slice's)."""
    starts = np.cumsum([0, *(s.width + w.width for s, w, _ in pairs)])
    rows = transposed(chain)

    def values(weights: F64) -> F64:
        flat, out = mapped(rows, weights), []
        for (s, w, want), a in zip(pairs, starts):
            mine = s.replicates(flat[:, a : a + s.width])
            theirs = w.replicates(flat[:, a + s.width : a + s.width + w.width])
            i, j = (list(x) for x in zip(*want))
            out.append(mine[:, i] - theirs[:, j])
        return np.concatenate(out, axis=1)

    return Draw([s.records[i] for s, _, want in pairs for i, _ in want], values, multiplicity)


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
    draw([fam], flat if clusters is None else clusters).attach(opts)


def mark_no_interval(records: list[Metric], why: str, opts: CIOptions) -> None:
    """``ci_undefined`` (with the interval's settings) on defined metric records."""
    for m in records:
        if m.value is not None and not isinstance(m.value, dict):
            m.parameters.update(opts.parameters(None, None, "bootstrap", undefined=why))
