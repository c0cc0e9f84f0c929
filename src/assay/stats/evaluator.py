"""From sample scores to metric records: :func:`evaluate` and :class:`ScoreEvaluator`.

The pipeline, for each reducer (default ``"mean"``):

1. split dict-valued scores into one score column per key (scalar scores: one column);
2. reduce each sample's epochs to one value (failed samples are dropped and counted);
3. apply every metric, giving :class:`~assay.results.Metric` records whose parameters say
   ``reducer``, ``score_key`` (dict-valued scores only), ``n`` (samples used),
   ``n_failed`` (samples with no usable score) and the metric's own parameters
   (``cluster``, ``seed``, ``group`` ...). Undefined values are records with
   ``value=None`` and the reason in ``parameters["undefined"]``.

Example:
    >>> from assay.stats import Score, SampleScore, accuracy, stderr
    >>> scores = [SampleScore(Score(v), sample_id=i // 2, epoch=i % 2 + 1) for i, v in enumerate("CCICII")]
    >>> ms = evaluate(scores, [accuracy(), stderr()], reducers=["mean", "pass_at_1", "at_least_2"])
    >>> [(m.type, m.parameters["reducer"], round(m.value, 4)) for m in ms.filter("accuracy")]
    [('accuracy', 'mean', 0.5), ('accuracy', 'pass_at_1', 0.5), ('accuracy', 'at_least_2', 0.3333)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidInputError
from assay.results import Metric, MetricSet
from assay.stats.metrics import MetricFn, get_metric, mean, stderr
from assay.stats.reducers import Reducer, _value_keys, get_reducer, reduce_scores
from assay.stats.types import SampleScore, ScoreFrame

__all__ = ["ScoreEvaluator", "evaluate"]


def _metrics(metrics: Any) -> list[MetricFn]:
    if metrics is None:
        return [mean(), stderr()]
    if isinstance(metrics, (MetricFn, str)):
        metrics = [metrics]
    out = []
    for m in metrics:
        if isinstance(m, str):
            out.append(get_metric(m))
        elif isinstance(m, MetricFn):
            out.append(m)
        elif hasattr(m, "metric_name"):
            raise InvalidInputError(
                f"{m.metric_name!r} is a metric factory: call it, e.g. {m.metric_name}()",
                source="metrics",
            )
        else:
            raise InvalidInputError(
                f"expected a metric (e.g. accuracy()) or a metric name, got {m!r}", source="metrics"
            )
    return out


def _reducers(reducers: Any) -> list[Reducer]:
    if reducers is None:
        return [get_reducer("mean")]
    if isinstance(reducers, (Reducer, str)):
        reducers = [reducers]
    out = [get_reducer(r) for r in reducers]
    if not out:
        raise InvalidInputError("give at least one reducer", source="reducers")
    return out


def _columns(scores: Sequence[SampleScore] | ScoreFrame) -> dict[str | None, ScoreFrame]:
    if isinstance(scores, ScoreFrame):
        return {None: scores}
    keys = _value_keys(scores)
    if keys is None:
        return {None: ScoreFrame.from_scores(scores)}
    return {k: ScoreFrame.from_scores(scores, key=k) for k in keys}


def evaluate(
    scores: Sequence[SampleScore] | ScoreFrame,
    metrics: Any = None,
    reducers: Any = None,
) -> MetricSet:
    """Metric records for ``scores``: one set of metrics per reducer (and per dict key).

    Args:
        scores: :class:`SampleScore` objects (epochs of a sample share its ``sample_id``)
            or a :class:`ScoreFrame`.
        metrics: metrics (``accuracy()``, ``grouped(...)``) or registered names; default
            ``[mean(), stderr()]``.
        reducers: reducer names (``"mean"``, ``"pass_at_2"``) or :class:`Reducer` objects;
            default ``"mean"``. Several reducers give one set of records each.

    Returns:
        A :class:`MetricSet`; see the module docstring for the parameters.

    Example:
        >>> from assay.stats import Score, SampleScore
        >>> s = [SampleScore(Score({"em": "C", "f1": 0.5}), 1), SampleScore(Score(None), 2)]
        >>> [(m.parameters["score_key"], m.value, m.parameters["n_failed"]) for m in evaluate(s, "mean")]
        [('em', 1.0, 1), ('f1', 0.5, 1)]
    """
    metric_fns = _metrics(metrics)
    reducer_objs = _reducers(reducers)
    columns = _columns(scores)
    records: list[Metric] = []
    for r in reducer_objs:
        if r.group_fn is not None:
            reduced = {k: r.reduce_frame(f) for k, f in columns.items()}
        else:
            objs = scores.to_scores() if isinstance(scores, ScoreFrame) else list(scores)
            reduced = _columns(reduce_scores(objs, r))
        for key, frame in reduced.items():
            context: dict[str, Any] = {"reducer": r.name}
            if key is not None:
                context["score_key"] = key
            context["n_failed"] = frame.n_none
            for m in metric_fns:
                records.extend(m.records(frame, context))
    return MetricSet(records)


class ScoreEvaluator:
    """Accumulates sample scores in batches; :meth:`compute` gives the metric records.

    Batches may split a sample's epochs; ``merge`` combines evaluators (e.g. from
    workers), and the result equals one ``evaluate`` over all scores.

    Example:
        >>> from assay.stats import Score, SampleScore, accuracy
        >>> ev = ScoreEvaluator([accuracy()])
        >>> ev.add([SampleScore(Score("C"), 1)]).add([SampleScore(Score("I"), 2)])
        ScoreEvaluator(2 scores)
        >>> ev.compute().get("accuracy").value
        0.5
    """

    def __init__(self, metrics: Any = None, reducers: Any = None) -> None:
        self.metrics = _metrics(metrics)
        self.reducers = _reducers(reducers)
        self._objects: list[SampleScore] = []
        self._frames: list[ScoreFrame] = []

    def __repr__(self) -> str:
        return f"ScoreEvaluator({len(self)} scores)"

    def __len__(self) -> int:
        return len(self._objects) + sum(len(f) + f.n_none for f in self._frames)

    def add(self, scores: Sequence[SampleScore] | ScoreFrame) -> ScoreEvaluator:
        """Add a batch of :class:`SampleScore` objects or a :class:`ScoreFrame`."""
        if isinstance(scores, ScoreFrame):
            self._frames.append(scores)
        else:
            batch = list(scores)
            bad = next((s for s in batch if not isinstance(s, SampleScore)), None)
            if bad is not None:
                raise InvalidInputError(
                    f"expected SampleScore objects, got {bad!r}", source="scores"
                )
            self._objects.extend(batch)
        return self

    def merge(self, other: ScoreEvaluator) -> ScoreEvaluator:
        """Add everything ``other`` has accumulated."""
        self._objects.extend(other._objects)
        self._frames.extend(other._frames)
        return self

    def scores(self) -> Sequence[SampleScore] | ScoreFrame:
        """All accumulated scores (a frame when only frames were added)."""
        if not self._objects:
            return ScoreFrame.concat(self._frames)
        objs = list(self._objects)
        for f in self._frames:
            objs.extend(f.to_scores())
        return objs

    def compute(self) -> MetricSet:
        """The metric records over everything added (see :func:`evaluate`)."""
        return evaluate(self.scores(), self.metrics, self.reducers)
