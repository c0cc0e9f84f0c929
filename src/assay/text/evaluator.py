"""``TextEvaluator``: ROUGE and BLEU over batches of (prediction, references) pairs.

Scores are per datum, so a batch is scored when it is added and the evaluator keeps the
per-datum values (and uids); merging concatenates them. ``compute()`` gives one record
per datum and metric and one aggregate record per metric (see :mod:`assay.text.records`).

Example:
    >>> ev = TextEvaluator(metrics=["bleu"], bleu_weights=[0.5, 0.5])
    >>> ev.add(["a cat sat"], ["a cat sat"], uids=["d1"]).compute()[0].value
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay._validation import check_same_length
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.results import Metric, MetricSet
from assay.stats.means import (
    NUM_BOOTSTRAP,
    datum_record,
    mean_gap_intervals,
    mean_tally,
    mean_unit_values,
)
from assay.stats.means import mean_record as aggregate
from assay.text.bleu import bleu
from assay.text.declared import BLEU_WEIGHTS, METRICS, OPTIONS, ROUGE_TYPES
from assay.text.records import bleu_record, rouge_record
from assay.text.rouge import rouge_scores
from assay.uncertainty.intervals import interval_from
from assay.uncertainty.slices import annotate, slice_text, text_slices
from assay.uncertainty.tally import Key, Tally

__all__ = ["TextEvaluator", "evaluate_text", "TEXT_METRICS"]

#: The names ``metrics=`` takes (the families of :data:`assay.text.declared.METRICS`).
TEXT_METRICS: tuple[str, ...] = METRICS.families
#: The families with parameters of their own; every other one is a plain per-datum score,
#: its builder ``(predictions, references) -> values`` (sacrebleu's BLEU, chrF).
_OWN = ("rouge", "bleu")
_PLAIN = {f: METRICS.family(f)[0] for f in METRICS.families if f not in _OWN}


class TextEvaluator(Evaluator):
    """ROUGE and BLEU of predictions against one or several references per datum.

    Args:
        metrics: ``"rouge"``, ``"bleu"`` (NLTK's, Valor's), and sacrebleu's ``"sacrebleu"``
            (sentence BLEU) and ``"chrf"``, both on sacrebleu's 0-100 scale.
        rouge_types: ROUGE types (``rouge1``..``rouge9``, ``rougeL``, ``rougeLsum``).
        use_stemmer: Porter-stem ROUGE tokens longer than three characters.
        rouge_measures: which of ``fmeasure``, ``precision``, ``recall`` to report.
        bleu_weights: BLEU n-gram weights (default BLEU-4, uniform).
        smoothing: BLEU smoothing (``None``, ``"method1"``, ``"method2"``).
        bleu_tokenize: BLEU's tokens, ``"whitespace"`` (NLTK's examples) or ``"valor"``
            (valor-lite's: periods dropped).
        num_bootstrap, seed: the aggregate's bootstrap interval.
        ci, ci_method: the aggregate interval's level and method (``bootstrap``, ``t``,
            ``wilson``; :func:`~assay.stats.means.mean_record`); without ``ci`` a 95%
            bootstrap.
        by: datum columns (``add(..., columns=...)``) to slice every aggregate by: each
            again per value, with ``slice_column``, ``slice``, ``n``, ``gap`` and under
            ``ci`` the gap's interval (:func:`~assay.stats.means.mean_gap_intervals`).
        cluster: a datum column (``add(..., columns=...)``) whose values are clusters
            (needs ``ci``): every interval is the cluster bootstrap, drawing whole clusters
            (:func:`~assay.stats.means.mean_tally`); ``parameters.cluster``.
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        metrics: Sequence[str] = ("rouge", "bleu"),
        rouge_types: Sequence[str] = ROUGE_TYPES,
        use_stemmer: bool = False,
        rouge_measures: Sequence[str] = ("fmeasure",),
        bleu_weights: Sequence[float] = BLEU_WEIGHTS,
        smoothing: str | None = None,
        bleu_tokenize: str = "whitespace",
        num_bootstrap: int = NUM_BOOTSTRAP,
        seed: int = 0,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        by: Sequence[str] = (),
        cluster: str | None = None,
    ) -> None:
        self.metrics = tuple(metrics)
        self.rouge_types = tuple(rouge_types)
        self.use_stemmer = use_stemmer
        self.rouge_measures = tuple(rouge_measures)
        self.bleu_weights = tuple(bleu_weights)
        self.smoothing = smoothing
        self.bleu_tokenize = bleu_tokenize
        self.num_bootstrap = num_bootstrap
        self.seed = seed
        self.ci = interval_from(self.options)
        self.by = tuple(dict.fromkeys(by))
        self.cluster = cluster
        self.columns = tuple(dict.fromkeys([*self.by, *([cluster] if cluster else [])]))
        # Per datum, in batches (lists of array chunks): its ``by`` columns, uid, and value
        # of every metric.
        self._cols: dict[str, list[np.ndarray]]
        self._uids: list[np.ndarray]
        self._unnamed: list[np.ndarray]
        self._values: dict[str, list[np.ndarray]]
        self.add_state("_cols", {c: [] for c in self.columns}, "cat")
        self.add_state("_uids", [], "cat")
        # True where a datum was added without a uid. Such datums are numbered by their
        # position among all datums when the arrays are built, so a merged evaluator
        # numbers them as one that was given all batches (never "0" twice).
        self.add_state("_unnamed", [], "cat")
        self.add_state("_values", {k: [] for k in self._keys()}, "cat")

    def _keys(self) -> list[str]:
        keys = []
        if "rouge" in self.metrics:
            keys += [f"rouge:{t}:{m}" for t in self.rouge_types for m in self.rouge_measures]
        if "bleu" in self.metrics:
            keys.append("bleu")
        keys += [m for m in _PLAIN if m in self.metrics]
        return keys

    def add(  # type: ignore[override]
        self,
        predictions: Sequence[str],
        references: Sequence[str | Sequence[str]],
        *,
        uids: Sequence[Any] | None = None,
        columns: Mapping[str, Sequence[Any]] | None = None,
    ) -> TextEvaluator:
        """Score a batch; ``uids`` default to the running position (``"0"``, ``"1"``, ...)
        among all datums added and merged, in order; so does a ``None`` among ``uids``.
        With ``by``, ``columns`` holds each datum's value of every ``by`` column."""
        preds = list(predictions)
        cols = _slice_columns(self.columns, columns, len(preds))
        if uids is None:
            ids = np.full(len(preds), "", dtype=str)
            unnamed = np.ones(len(preds), dtype=bool)
        else:
            ids = np.array(["" if u is None else str(u) for u in uids], dtype=str)
            unnamed = np.array([u is None for u in uids], dtype=bool)
            check_same_length(predictions=preds, uids=ids)
        if self.cluster and (cols[self.cluster] == "").any():
            none = np.flatnonzero(cols[self.cluster] == "")
            first = int(none[0])
            raise InvalidInputError(
                f"no cluster value ({none.size} of {len(preds)} datums have none)",
                source="--cluster",
                record=f"datum {first + 1} of the batch" if unnamed[first] else f"uid {ids[first]}",
                field=self.cluster,
            )
        new: dict[str, np.ndarray] = {}
        if "rouge" in self.metrics:
            scores = rouge_scores(
                preds, references, rouge_types=self.rouge_types, use_stemmer=self.use_stemmer
            )
            for t, s in scores.items():
                for m in self.rouge_measures:
                    new[f"rouge:{t}:{m}"] = s.measure(m)
        if "bleu" in self.metrics:
            new["bleu"] = bleu(
                preds,
                references,
                weights=self.bleu_weights,
                smoothing=self.smoothing,
                tokenize=self.bleu_tokenize,
            )
        for f in _PLAIN:
            if f in self.metrics:
                new[f] = METRICS.builder(f)(preds, references)
        self._uids.append(ids)
        self._unnamed.append(unnamed)
        for c, col in cols.items():
            self._cols[c].append(col)
        for k, v in new.items():
            self._values[k].append(np.asarray(v, dtype=np.float64))
        return self

    def _arrays(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        uids = np.concatenate(self._uids) if self._uids else np.zeros(0, dtype=str)
        unnamed = np.concatenate(self._unnamed) if self._unnamed else np.zeros(0, dtype=bool)
        if unnamed.any():
            width = max(uids.dtype.itemsize // 4, len(str(len(uids))))
            uids = uids.astype(f"<U{width}")
            uids[unnamed] = np.flatnonzero(unnamed).astype(str)
        return uids, {k: np.concatenate(v) if v else np.zeros(0) for k, v in self._values.items()}

    def uids(self) -> np.ndarray:
        """The datums' uids, in order (those added without one numbered by position).

        Example:
            >>> TextEvaluator().add(["a", "b"], ["a", "b"], uids=["x", None]).uids().tolist()
            ['x', '1']
        """
        return self._arrays()[0]

    def tally(self) -> list[Tally]:
        """The tallies of the aggregates' intervals (:func:`~assay.stats.means.mean_tally`;
        units: the datums, by uid), keyed by :func:`aggregate_key`."""
        uids, values = self._arrays()
        order = np.argsort(uids, kind="stable")
        codes = None
        if self.cluster:
            clusters = self._column(self.cluster)[order]
            codes = np.unique(clusters, return_inverse=True)[1].reshape(-1)
        b, seed = (
            (self.ci.num_bootstrap, self.ci.seed) if self.ci else (self.num_bootstrap, self.seed)
        )
        out = []
        for key, v in values.items():
            k = _aggregate_key(key)
            out.append(mean_tally(k, v[order], codes, b, seed, ids=uids[order]))
        return out

    def record_tally_key(self, m: Metric) -> Key | None:
        """Record ``m``'s key among :meth:`tally`'s (None for a per-datum record)."""
        return aggregate_key(m)

    def unit_values(self, key: Key) -> tuple[str, Any, Any, None] | None:
        """Each datum's value of one aggregate (its :func:`aggregate_key`), for the paired t
        test of two runs (:mod:`assay.compare.runs`); None for another key."""
        uids, values = self._arrays()
        found = [v for k, v in values.items() if _aggregate_key(k) == tuple(key)]
        return mean_unit_values(uids, found[0]) if found else None

    def _compute(self) -> MetricSet:
        uids, values = self._arrays()
        out: list[Metric] = []
        specs: list[tuple[str, np.ndarray, dict[str, Any]]] = []  # each aggregate's inputs
        for key, v in values.items():
            if key in _PLAIN:
                out += [datum_record(_PLAIN[key], u, x) for u, x in zip(uids, v, strict=True)]
                specs.append((_PLAIN[key], v, {}))
                continue
            if key == "bleu":
                w, sm, tok = self.bleu_weights, self.smoothing, self.bleu_tokenize
                out += [
                    bleu_record(u, x, weights=w, smoothing=sm, tokenize=tok)
                    for u, x in zip(uids, v)
                ]
                params: dict[str, Any] = {"weights": list(w)}
                if sm is not None:
                    params["smoothing"] = sm
                if tok != "whitespace":
                    params["tokenize"] = tok
                specs.append(("BLEU", v, params))
                continue
            _, t, m = key.split(":")
            st = self.use_stemmer
            out += [rouge_record(u, x, t, use_stemmer=st, measure=m) for u, x in zip(uids, v)]
            params = {"rouge_type": t, "use_stemmer": st, "measure": m}
            specs.append(("ROUGE", v, params))
        clusters = self._column(self.cluster) if self.cluster else None
        agg = [self._aggregate(t, v, uids, p, clusters) for t, v, p in specs]
        return MetricSet(out + agg + self._slices(uids, specs, agg))

    def _slices(
        self, uids: np.ndarray, specs: list[tuple[str, np.ndarray, dict[str, Any]]],
        whole: list[Metric],
    ) -> list[Metric]:  # fmt: skip
        """Every aggregate again per value of each ``by`` column, with the gap to the whole
        set's and, under ``ci``, the gap's interval (one joint bootstrap over datums)."""
        out: list[Metric] = []
        clusters = self._column(self.cluster) if self.cluster else None
        for c in self.by:
            values = self._column(c)
            names = text_slices(values)  # "" last: the units without a value (slice null)
            gaps = [
                mean_gap_intervals(v, values, names, self.ci, clusters) if self.ci else {}
                for _, v, _ in specs
            ]
            for name in names:
                keep = values == name
                part = None if clusters is None else clusters[keep]
                for (t, v, p), ref, g in zip(specs, whole, gaps, strict=True):
                    rec = self._aggregate(t, v[keep], uids[keep], p, part)
                    cis = {(t,): g[name]} if name in g else None
                    n = int(keep.sum())
                    out += annotate(
                        [rec], [ref], column=c, value=name or None, n=n, where=(), gap_ci=cis
                    )
        return out

    def _column(self, c: str) -> np.ndarray:
        return np.concatenate(self._cols[c]) if self._cols[c] else np.zeros(0, str)

    def _aggregate(
        self,
        type: str,
        v: np.ndarray,
        uids: np.ndarray,
        params: dict[str, Any],
        clusters: np.ndarray | None = None,
    ) -> Metric:
        return aggregate(
            type, v, uids, params, num_bootstrap=self.num_bootstrap, seed=self.seed, ci=self.ci,
            clusters=None if clusters is None else (clusters, clusters[:0]),
        )  # fmt: skip


def evaluate_text(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    uids: Sequence[Any] | None = None,
    **options: Any,
) -> MetricSet:
    """One call: :class:`TextEvaluator` (``options`` are its arguments) over one batch.

    Example:
        >>> ms = evaluate_text(["the cat"], ["the cat"], metrics=["rouge"], rouge_types=["rouge1"])
        >>> [(m.type, m.value) for m in ms][0]
        ('ROUGE', 1.0)
    """
    return TextEvaluator(**options).add(predictions, references, uids=uids).compute()


def aggregate_key(m: Metric) -> Key | None:
    """An aggregate record's key among the tallies' (None: a per-datum record)."""
    if m.parameters.get("aggregate") != "mean":
        return None
    return (m.type, m.parameters.get("rouge_type"), m.parameters.get("measure"))


def _aggregate_key(key: str) -> Key:
    """The aggregate key of a metric's values (``rouge:rouge1:fmeasure``, ``bleu``, ...)."""
    if key.startswith("rouge:"):
        _, t, m = key.split(":")
        return ("ROUGE", t, m)
    return (METRICS.family(key)[0], None, None)


def _slice_columns(
    by: Sequence[str], columns: Mapping[str, Sequence[Any]] | None, n: int
) -> dict[str, np.ndarray]:
    """Each ``by`` column of a batch as slice text (empty: a missing value, in no slice)."""
    out = {}
    for c in by:
        if columns is None or c not in columns:
            raise InvalidInputError("missing slice column", source="TextEvaluator.add", field=c)
        vals = list(columns[c])
        if len(vals) != n:
            raise InvalidInputError(
                f"expected {n} values, got {len(vals)}", source="TextEvaluator.add", field=c
            )
        missing = [v is None or (isinstance(v, float) and np.isnan(v)) for v in vals]
        out[c] = np.array(["" if m else slice_text(v) for v, m in zip(vals, missing)], dtype=str)
    return out
