"""Accumulating classification evaluator: ``add()`` batches, ``merge()`` evaluators, ``compute()``.

Metric types (one record each; ``parameters`` always hold ``label_key``):

=============================  ===============================================================
``Counts``                     ``{"tp", "fp", "fn", "tn"}`` per label value and score threshold
``Precision`` / ``Recall`` /   per label value and score threshold, from the highest-scoring
``F1``                         prediction of each datum (hardmax, see
                               :mod:`assay.classification.hardmax`)
``Accuracy``                   per key and score threshold: correct top predictions / datums
``ROCAUC``                     per label value, one-vs-rest over all scores of that label
``mROCAUC``                    per key: mean ROC AUC over the labels where it is defined
``ROCCurve``                   per key: ``{label: {fpr, tpr, thresholds}}``, the exact ROC
                               curve's turning points (opt-in: up to one point per score)
``PrecisionRecallCurve``       per key: ``{label: {threshold: {tp, fp, fn, tn, precision,
                               recall, f1_score}}}``, every label its own binary problem
``DetailedPrecisionRecallCurve``  per key: the same thresholds, with false positives and false
                               negatives split by kind (misclassifications / no_predictions)
                               and up to ``pr_curve_max_examples`` example uids each
``ConfusionMatrix``            per key and score threshold: ``{truth: {prediction: count}}``
                               and ``unmatched_ground_truths`` (see
                               :mod:`assay.classification.confusion`)
``ConfusionMatrixWithExamples``  the same with example ``{datum_uid, score}`` per cell (opt-in)
``Examples``                   per datum and score threshold: its TP/FP/FN labels (opt-in)
=============================  ===============================================================

``hardmax=False`` lets every label scoring ``>= score_threshold`` count (valor-lite's
``hardmax=False``): Counts, Precision, Recall, F1, Accuracy and the confusion types then
treat each label as its own binary problem, and their records carry ``hardmax: false``.

Undefined values (a ratio with denominator 0, a ROC AUC with one class) are ``None`` with the
reason in ``parameters["undefined"]`` (inside curves: ``None`` entries), unless
``zero_division`` is set, in which case that value is used as scikit-learn does.

Example:
    >>> import pandas as pd
    >>> ev = ClassificationEvaluator()
    >>> _ = ev.add(pd.DataFrame({"uid": ["a", "b"], "value": ["cat", "dog"]}),
    ...            pd.DataFrame({"uid": ["a", "b"], "value": ["cat", "cat"], "score": [0.9, 0.6]}))
    >>> ms = ev.compute()
    >>> ms.get("Precision", label_value="cat", score_threshold=0.0).value
    0.5
    >>> ms.get("Precision", label_value="dog", score_threshold=0.0).parameters["undefined"]
    'requires TP + FP > 0'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from assay.classification.declared import METRICS, OPTIONS
from assay.classification.state import blocks_from_arrays, blocks_to_arrays
from assay.classification.tally import WHERE, gap_tallies, tallies
from assay.classification.types import (
    DEFAULT_KEY,
    KeyBlock,
    block_from_arrays,
    compact_block,
    concat_blocks,
)
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.io.metadata import metadata_from, metadata_from_frame
from assay.results import Metric, MetricSet
from assay.thresholds import PR_CURVE_SCORE_THRESHOLDS
from assay.uncertainty.intervals import attach, gap_bounds, interval_from
from assay.uncertainty.slices import record_key, slice_masks, slice_records
from assay.uncertainty.tally import Tally

__all__ = [
    "ClassificationEvaluator",
    "evaluate_classification",
]

#: The types that carry an interval with ``ci`` (the others never match a tally).
_WITH_INTERVAL = frozenset(METRICS.with_interval())


class ClassificationEvaluator(Evaluator):
    """Classification metrics over batches of datums (see the module docstring).

    Args:
        score_thresholds: thresholds in [0, 1] for Counts, Precision, Recall, F1 and
            Accuracy; the top prediction of a datum counts only if its score is ``>=`` one.
        pr_curve_thresholds: thresholds in [0, 1] of the (detailed) precision-recall curves
            (default 0.05, 0.10, ..., 0.95).
        pr_curve_max_examples: example uids kept per observation in the detailed curve.
        metrics: metric types to compute (default: the table's default set,
            :data:`assay.classification.declared.METRICS`).
        zero_division: value to use where a ratio's denominator is 0 (default: undefined).
        hardmax: only a datum's top prediction counts (default) or every label at or above
            the threshold.
        number_of_examples: examples kept per cell of ``ConfusionMatrixWithExamples``
            (default ``None``: all, as valor-lite).
        examples_limit, examples_offset: page the ``Examples`` records: the datums
            ``examples_offset .. examples_offset + examples_limit - 1`` in uid order
            (valor-lite's ``limit`` and ``offset``; default: every datum).
        compact: keep counts of distinct (truth, scores) datums instead of every datum
            (:func:`assay.classification.types.compact_block`): state, memory and what
            travels between Dask workers are O(labels x distinct score vectors), e.g. with
            scores rounded to k decimals O(labels x 10^k) for a binary problem, and the
            records are the same. Needs ``pr_curve_max_examples=0`` and no example-carrying
            metric types (they name datums); uids and metadata are not kept, so ``filter``
            is refused.
        ci: confidence level of intervals on Precision, Recall, F1, Accuracy, ROCAUC and
            mROCAUC (default ``None``: no intervals); see
            :mod:`assay.classification.tally`.
        ci_method: ``bootstrap`` (default), ``wilson`` (Accuracy, Precision, Recall) or
            ``delong`` (ROCAUC), as each type's ``intervals`` in the table say; the other
            metrics get the bootstrap.
        num_bootstrap, seed: the bootstrap's resamples over datums and its seed.
        cluster: a datum metadata field whose values are clusters: the bootstrap draws
            whole clusters instead of datums (every interval is then the bootstrap, with
            ``cluster`` in its parameters; see :class:`assay.uncertainty.clusters.Clusters`).
        by: datum metadata fields whose every value is a slice: the headline records again
            per slice, with ``slice_column``, ``slice``, ``n`` and ``gap``
            (:mod:`assay.uncertainty.slices`).

    A batch holds whole datums: a datum's ground truth and all its predictions (for a key)
    arrive in the same ``add`` call. Ties for the top prediction go to the label value that
    sorts first.

    The options, their rules and what ``config()`` stores are declared once in
    :data:`assay.classification.declared.OPTIONS`, the metric types in
    :data:`~assay.classification.declared.METRICS`.
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        score_thresholds: Sequence[float] = (0.0,),
        pr_curve_thresholds: Sequence[float] = PR_CURVE_SCORE_THRESHOLDS,
        pr_curve_max_examples: int = 1,
        metrics: Iterable[str] | None = None,
        zero_division: float | None = None,
        hardmax: bool = True,
        number_of_examples: int | None = None,
        examples_limit: int | None = None,
        examples_offset: int = 0,
        compact: bool = False,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
        by: Sequence[str] = (),
    ) -> None:
        # clean values (OPTIONS): tuples of floats in [0, 1], the curve grid sorted, the
        # default metric types filled in, numbers as float or int
        self.score_thresholds: tuple[float, ...] = tuple(score_thresholds)
        self.pr_curve_thresholds: tuple[float, ...] = tuple(pr_curve_thresholds)
        self.pr_curve_max_examples = pr_curve_max_examples
        self.metrics: tuple[str, ...] = tuple(metrics or ())
        self.zero_division = zero_division
        self.hardmax = hardmax
        self.number_of_examples = number_of_examples
        self.examples_offset, self.examples_limit = examples_offset, examples_limit
        self.compact = compact
        self.ci = interval_from(self.options)
        self.by: tuple[str, ...] = tuple(by)
        # per label key, its datums in blocks (the compact form folds them into one)
        self._blocks: dict[str, list[KeyBlock]]
        rule = _compact_cat if self.compact else "cat"
        self.add_state("_blocks", {}, rule, encode=blocks_to_arrays, decode=blocks_from_arrays)

    # ------------------------------------------------------------ accumulate

    def add(
        self,
        groundtruths: Any,
        predictions: Any,
        *,
        gt_source: str = "groundtruths",
        pd_source: str = "predictions",
        metadata_columns: Sequence[str] | None = None,
    ) -> Self:
        """Add a batch in long form (see :func:`assay.classification.parse_long_form`).

        A datum's metadata (for filters) is the ``metadata`` mapping of its ground-truth
        rows, or their columns named in ``metadata_columns``.
        """
        from assay.classification.io import parse_long_form  # pandas: tables only

        blocks = parse_long_form(
            groundtruths,
            predictions,
            gt_source=gt_source,
            pd_source=pd_source,
            metadata_columns=metadata_columns,
        )
        for key, block in blocks.items():
            self._append(key, [block])
        return self

    def add_arrays(
        self,
        y_true: ArrayLike,
        y_score: ArrayLike,
        *,
        labels: Sequence[Any],
        uids: ArrayLike | None = None,
        key: str = DEFAULT_KEY,
        metadata: Any = None,
    ) -> Self:
        """Add a batch from arrays (see :func:`assay.classification.block_from_arrays`).

        Without ``uids``, datums are numbered by their position among all the datums of the
        key, in the order they were added (and merged). ``metadata``: one mapping per datum,
        or a DataFrame with one column per metadata field.
        """
        block = block_from_arrays(y_true, y_score, labels=labels, uids=uids, key=key)
        if metadata is not None:
            block = replace(block, metadata=metadata_from(metadata, block.n))
        self._append(key, [block])
        return self

    def add_wide(self, data: Any, **layout: Any) -> Self:
        """Add a wide table, one row per datum (see :func:`assay.classification.parse_wide`).

        ``layout``: ``y_true=`` and either ``y_score=`` (binary, with ``positive_label=``)
        or ``y_score_columns=`` (``predict_proba`` layout); optional ``uid=``, ``source=``,
        and ``metadata_columns=``, the columns that hold datum metadata.
        """
        from assay.classification.wide import parse_wide  # pandas: tables only
        from assay.io.tables import as_dataframe

        columns = layout.pop("metadata_columns", None)
        if columns:
            source = layout.get("source", "data")
            data = as_dataframe(data, source=source)
            md = metadata_from_frame(data, list(columns), source=source)
        block = parse_wide(data, **layout)
        if columns:
            block = replace(block, metadata=md)
        self._append(block.key, [block])
        return self

    def _append(self, key: str, blocks: list[KeyBlock]) -> None:
        """Keep the blocks of a key; the compact form folds them into one at once."""
        kept = self._blocks.get(key, [])
        self._blocks[key] = _compact_cat(kept, blocks) if self.compact else kept + blocks

    @property
    def is_empty(self) -> bool:
        # not derived: a key's block may hold labels but no datum
        return not any(b.n for blocks in self._blocks.values() for b in blocks)

    # ------------------------------------------------------------ compute

    def _compute(self) -> MetricSet:
        out: list[Metric] = []
        want = frozenset(self.metrics)
        for key in sorted(self._blocks):
            # a fresh block object: its kept sorted scores live for this compute only
            b = replace(concat_blocks(self._blocks[key]))
            if self.ci is not None and "ROCAUC" in want:
                b.keep_sorted_splits()  # the DeLong interval reads them after the estimate
            if b.n == 0:
                continue
            whole = self._block_records(b, want)
            out += whole
            for column in self.by:
                out += self._slices(b, column, whole, want)
        return MetricSet(out)

    def _slices(
        self, b: KeyBlock, column: str, whole: list[Metric], want: frozenset[str]
    ) -> list[Metric]:
        """The headline records of every slice of ``column`` in ``b`` (each the slice's
        datums evaluated alone, intervals included), gaps to ``whole``, and with ``ci`` the
        gaps' intervals (one resample of all datums gives both values)."""
        sliced = want & frozenset(METRICS.sliced)

        def records(keep: np.ndarray) -> list[Metric]:
            return [m for m in self._block_records(b.take(keep), sliced) if m.type in sliced]

        def gaps(keep: np.ndarray) -> dict[tuple[Any, ...], tuple[float, float]]:
            assert self.ci is not None
            return gap_bounds(gap_tallies(b, keep, want=want, **self._tally_kw()), self.ci)

        masks = slice_masks(b.metadata, column, f"datums of label key {b.key!r}")
        return slice_records(
            whole,
            masks,
            column=column,
            where=WHERE,
            records=records,
            gaps=None if self.ci is None else gaps,
        )

    def _tally_kw(self) -> dict[str, Any]:
        kw = {"hardmax": self.hardmax, "zero_division": self.zero_division}
        return {"thresholds": self.score_thresholds, **kw}

    #: the parameters after the type in the tallies' keys (:func:`record_key`)
    tally_where = WHERE

    def unit_values(self, key: tuple[Any, ...]) -> tuple[str, Any, Any, Any] | None:
        """Each datum's part in one tally key's record, for the closed-form paired tests
        (:mod:`assay.compare.runs`): ``("mcnemar", uids, right, None)`` for Accuracy (top
        prediction right and at or above the threshold), ``("delong", uids, scores,
        truth)`` for a label's ROCAUC; ``None`` for any other (or a compact evaluator)."""
        kind, label_key = key[0], key[1]
        if self.compact or label_key not in self._blocks or kind not in ("Accuracy", "ROCAUC"):
            return None
        b = concat_blocks(self._blocks[label_key])
        if kind == "Accuracy" and self.hardmax:
            top, score = b.top()
            right = (top == b.gt) & (score >= key[3])
            return "mcnemar", b.uid_array(), right.astype(np.float64), None
        if kind == "ROCAUC" and key[2] in b.labels:
            c = b.labels.index(key[2])
            return "delong", b.uid_array(), b.dense_scores()[c], (b.gt == c).astype(np.int64)
        return None

    def tally(self) -> list[Tally]:
        """The per-unit tallies of the records that carry intervals, every label key's
        (:mod:`assay.classification.tally`; the engine: :mod:`assay.uncertainty`)."""
        want = frozenset(self.metrics)
        blocks = (concat_blocks(self._blocks[key]) for key in sorted(self._blocks))
        return [t for b in blocks if b.n for t in tallies(b, want=want, **self._tally_kw())]

    def _block_records(self, b: KeyBlock, want: frozenset[str]) -> list[Metric]:
        """The records of one label key's datums (the whole set, or one slice)."""
        out: list[Metric] = []
        for family in METRICS.families:  # the table's order: hardmax, curves, confusion
            if want.intersection(METRICS.family(family)):
                out += METRICS.builder(family)(b, want, self.options)
        if self.ci is not None:
            found = tallies(b, want=want, **self._tally_kw())
            headline = [m for m in out if m.type in _WITH_INTERVAL]
            attach(headline, found, self.ci, key=lambda m: record_key(m, WHERE))
        return out

    # ------------------------------------------------------------ filter

    def filter(
        self,
        *,
        datums: Any = None,
        groundtruths: Any = None,
        predictions: Any = None,
        labels: Iterable[Any] | None = None,
        label_keys: Iterable[str] | None = None,
    ) -> ClassificationEvaluator:
        """A new evaluator (same configuration) on the data the filters keep; no re-reading.

        ``datums``: uids (datums added without uids are numbered 0, 1, ...) or an expression
        over ``uid`` and metadata; ``groundtruths`` / ``predictions``: expressions (a datum
        whose ground truth fails is dropped; failing predictions are dropped, then datums
        left without one); ``labels``: the truths kept (other labels' scores go too);
        ``label_keys``: the keys kept. Expressions are pandas-query strings or pyarrow
        Expressions (see :mod:`assay.classification.filters`). The result equals an
        evaluator given only that input; if nothing is kept it is empty.

        Example:
            >>> ev = ClassificationEvaluator(metrics=["Accuracy"]).add_arrays(
            ...     ["a", "b", "b"], [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]], labels=["a", "b"],
            ...     metadata=[{"site": "x"}, {"site": "y"}, {"site": "y"}])
            >>> ev.filter(datums=[1, 2]).compute()[0].value
            0.5
            >>> ev.filter(datums='site == "y"').compute()[0].value
            0.5
        """
        if self.compact:
            raise InvalidInputError(
                "a compact evaluator keeps counts, not datums, so it cannot filter them; "
                "filter with compact=False",
                source=f"{type(self).__name__}.filter",
            )
        from assay.classification.filters import filter_block  # pandas: filters only

        view = type(self)(**self.config())
        keep_keys = None if label_keys is None else {str(k) for k in label_keys}
        for key in sorted(self._blocks):
            if keep_keys is not None and key not in keep_keys:
                continue
            b = filter_block(
                concat_blocks(self._blocks[key]),
                datums=datums,
                groundtruths=groundtruths,
                predictions=predictions,
                labels=labels,
            )
            if b.n:
                view._blocks[key] = [b]
        return view


def _compact_cat(mine: list[KeyBlock], theirs: list[KeyBlock]) -> list[KeyBlock]:
    """A label key's blocks joined and folded into one compact block."""
    return [compact_block(concat_blocks(mine + theirs))]


def evaluate_classification(groundtruths: Any, predictions: Any, **options: Any) -> MetricSet:
    """One-call evaluation of long-form ground truths and predictions.

    ``options`` are those of :class:`ClassificationEvaluator`.

    Example:
        >>> ms = evaluate_classification(
        ...     [{"uid": "a", "value": "cat"}, {"uid": "b", "value": "dog"}],
        ...     [{"uid": "a", "value": "cat", "score": 0.9},
        ...      {"uid": "b", "value": "dog", "score": 0.8},
        ...      {"uid": "b", "value": "cat", "score": 0.2}])
        >>> ms.get("ROCAUC", label_value="cat").value
        1.0
    """
    return ClassificationEvaluator(**options).add(groundtruths, predictions).compute()
