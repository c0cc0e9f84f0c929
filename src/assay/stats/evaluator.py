"""From sample scores to metric records: :func:`evaluate_scores` and :class:`ScoreEvaluator`.

The pipeline, for each reducer (default ``"mean"``):

1. split dict-valued scores into one score column per key (scalar scores: one column);
2. reduce each sample's epochs to one value (failed samples are dropped and counted);
3. apply every metric, giving :class:`~assay.results.Metric` records whose parameters say
   ``reducer``, ``score_key`` (dict-valued scores only), ``n`` (samples used),
   ``n_failed`` (samples with no usable score) and the metric's own parameters
   (``cluster``, ``seed``, ``group_column``, ``group`` ...). Undefined values are records
   with ``value=None`` and the reason in ``parameters["undefined"]``.

Example:
    >>> from assay.stats import Score, SampleScore, accuracy, stderr
    >>> scores = [
    ...     SampleScore(Score(v), sample_id=i // 2, epoch=i % 2 + 1) for i, v in enumerate("CCICII")
    ... ]
    >>> ms = evaluate_scores(
    ...     scores, [accuracy(), stderr()], reducers=["mean", "pass_at_1", "at_least_2"]
    ... )
    >>> [(m.parameters["reducer"], round(m.value, 4)) for m in ms.filter("Accuracy")]
    [('mean', 0.5), ('pass_at_1', 0.5), ('at_least_2', 0.3333)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.results import MetricSet
from assay.stats.declared import OPTIONS
from assay.stats.frame import ScoreFrame
from assay.stats.metric_registry import MetricFn
from assay.stats.metric_types import METRICS
from assay.stats.reducer_registry import Reducer
from assay.stats.run_records import Scores, metric_records
from assay.stats.score import SampleScore
from assay.stats.score_input import as_native
from assay.stats.state import decode_scores, encode_scores
from assay.stats.tally import SampleCI
from assay.uncertainty.intervals import interval_from
from assay.uncertainty.tally import Tally

__all__ = ["ScoreEvaluator", "evaluate_scores"]


def _clean(
    values: Mapping[str, Any],
) -> tuple[list[MetricFn], list[Reducer], Any, SampleCI | None]:
    """Metrics, reducers, value mapping and intervals from the clean option values
    (:data:`assay.stats.declared.OPTIONS`)."""
    opts = interval_from({**values, "cluster": None})  # the cluster is the SampleCI's
    interval = None if opts is None else SampleCI(opts, values["cluster"])
    return values["metrics"], values["reducers"], values["to_float"], interval


def evaluate_scores(
    scores: Scores,
    metrics: Any = None,
    reducers: Any = None,
    to_float: Any = None,
    *,
    ci: float | None = None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
    cluster: str | None = None,
) -> MetricSet:
    """Metric records for ``scores``: one set of metrics per reducer (and per dict key).

    Parameters
    ----------
    scores
        :class:`SampleScore` objects (epochs of a sample share its ``sample_id``) or a
        :class:`ScoreFrame`.
    metrics
        Metrics (``accuracy()``, ``grouped(...)``), registered names (``"Accuracy"`` or
        Inspect's ``"accuracy"``) or specs (``MetricFn.spec``); default
        ``[mean(), stderr()]``.
    reducers
        Reducer names (``"mean"``, ``"pass_at_2"``) or :class:`Reducer` objects; default
        ``"mean"``. Several reducers give one set of records each.
    to_float
        Custom sentinels for correct/incorrect/partial/no answer: a
        :class:`~assay.stats.ValueMapping` or the dict of its fields. It applies to the
        conversion of SampleScore values for the metrics and built-in reducers.
    ci, ci_method, num_bootstrap, seed
        A confidence interval of level ``ci`` (off by default) on every record that is a
        mean of per-sample values (``Accuracy``, ``Mean``, per group too): ``t``,
        ``wilson`` (values in [0, 1]) or ``bootstrap`` over samples
        (:mod:`assay.stats.tally`; docs/records.md#intervals).
    cluster
        A sample-metadata key: the intervals treat its clusters as the independent units
        (clustered standard error, or whole clusters resampled).

    Returns
    -------
    MetricSet
        See the module docstring for the parameters of each record.

    Examples
    --------
    >>> from assay.stats import Score, SampleScore
    >>> s = [SampleScore(Score({"em": "C", "f1": 0.5}), 1), SampleScore(Score(None), 2)]
    >>> [(m.parameters["score_key"], m.value, m.parameters["n_failed"])
    ...  for m in evaluate_scores(s, "mean")]
    [('em', 1.0, 1), ('f1', 0.5, 1)]
    """
    given = {"metrics": metrics, "reducers": reducers, "to_float": to_float, "ci": ci}
    given |= {"ci_method": ci_method, "num_bootstrap": num_bootstrap, "seed": seed}
    mfns, rs, mapping, interval = _clean(OPTIONS.validate(given | {"cluster": cluster}))
    scores = as_native(scores)  # Inspect AI's objects: read once, attribute by attribute
    return metric_records(scores, mfns, rs, mapping, interval)


class ScoreEvaluator(Evaluator):
    """Accumulates sample scores in batches; :meth:`compute` gives the metric records.

    The evaluator keeps the scores themselves (epochs of a sample may arrive in different
    batches, and clustered and bootstrap errors need every value), in the order they were
    added. ``compute()`` equals one :func:`evaluate_scores` over all of them; ``merge``
    appends another evaluator's scores, so merging the evaluators of disjoint batches in
    batch order gives the same records as one evaluator fed every batch.

    Parameters
    ----------
    metrics
        As in :func:`evaluate_scores`. ``config()`` describes each metric by its registry
        name and parameters (``MetricFn.spec``), so the configuration is JSON; a metric not
        built by a registered factory can be used but not rebuilt by :meth:`from_state`.
    reducers
        As in :func:`evaluate_scores`, described by name.
    to_float, ci, ci_method, num_bootstrap, seed, cluster
        As in :func:`evaluate_scores`.

    Examples
    --------
    >>> from assay.stats import Score, SampleScore, accuracy
    >>> ev = ScoreEvaluator([accuracy()])
    >>> ev.add([SampleScore(Score("C"), 1)]).add([SampleScore(Score("I"), 2)])
    ScoreEvaluator(2 scores)
    >>> ev.compute().get("Accuracy").value
    0.5
    >>> ScoreEvaluator.from_state(ev.state()).compute().get("Accuracy").value
    0.5
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        metrics: Any = None,
        reducers: Any = None,
        to_float: Any = None,
        *,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
    ) -> None:
        # the values are clean here (OPTIONS, checked before the body runs)
        self.metrics, self.reducers, self.to_float, self.ci = _clean(self.options)
        self._batches: list[list[SampleScore] | ScoreFrame]
        self.add_state("_batches", [], "cat", encode=_encode_batches, decode=_decode_batches)

    def __repr__(self) -> str:
        return f"ScoreEvaluator({len(self)} scores)"

    def __len__(self) -> int:
        return sum(
            len(b) + b.n_none if isinstance(b, ScoreFrame) else len(b) for b in self._batches
        )

    @property
    def is_empty(self) -> bool:
        # not derived: a frame's scores of None count (n_none) but are not among its rows
        return len(self) == 0

    def add(self, scores: Scores) -> ScoreEvaluator:
        """Add a batch of :class:`SampleScore` objects or a :class:`ScoreFrame`.

        Raises
        ------
        InvalidInputError
            An item of the batch is not a :class:`SampleScore` (the state is unchanged).
        """
        scores = as_native(scores)  # Inspect AI's objects: read once, attribute by attribute
        if isinstance(scores, ScoreFrame):
            self._batches.append(scores)
            return self
        batch = list(scores)
        bad = next((i for i, s in enumerate(batch) if not isinstance(s, SampleScore)), None)
        if bad is not None:
            raise InvalidInputError(
                f"expected a SampleScore, got {batch[bad]!r}", source="scores", record=f"item {bad}"
            )
        self._batches.append(batch)
        return self

    def scores(self) -> Scores:
        """All accumulated scores, in the order added (a frame when only frames were added)."""
        return _joined(self._batches)

    def tally(self) -> list[Tally]:
        """The tally of every record that gets an interval (with ``ci``; :mod:`assay.stats.tally`):
        units the samples (their ids), or with ``cluster`` the clusters."""
        if self.ci is None or self.is_empty:
            return []
        sink: list[Tally] = []
        ci = replace(self.ci, sink=sink)
        metric_records(self.scores(), self.metrics, self.reducers, self.to_float, ci)
        return sink

    def _compute(self) -> MetricSet:
        return metric_records(self.scores(), self.metrics, self.reducers, self.to_float, self.ci)


def _joined(batches: list[list[SampleScore] | ScoreFrame]) -> Scores:
    """The batches as one (a frame when they are all frames)."""
    if all(isinstance(b, ScoreFrame) for b in batches):
        return ScoreFrame.concat(batches)  # type: ignore[arg-type]
    objs: list[SampleScore] = []
    for b in batches:
        objs.extend(b.to_scores() if isinstance(b, ScoreFrame) else b)
    return objs


def _encode_batches(batches: list[list[SampleScore] | ScoreFrame]) -> dict[str, np.ndarray]:
    return encode_scores(_joined(batches))


def _decode_batches(state: Mapping[str, np.ndarray]) -> list[list[SampleScore] | ScoreFrame]:
    scores = decode_scores(state)
    return [scores] if len(scores) else []
