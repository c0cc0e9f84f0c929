"""The records of an evaluation of scores: every metric under every reducer, per score key,
each score column converted once per value mapping (:func:`metric_records`, used by
:func:`~assay.stats.evaluator.evaluate_scores` and
:class:`~assay.stats.evaluator.ScoreEvaluator`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.results import Metric, MetricSet
from assay.stats.frame import ScoreFrame
from assay.stats.metric_registry import MetricFn
from assay.stats.records import run_context
from assay.stats.reducer_registry import Reducer, reduce_scores, value_keys
from assay.stats.score import SampleScore
from assay.stats.tally import SampleCI
from assay.stats.value_mapping import ValueMapping

__all__ = ["Scores", "metric_records"]

Scores = Sequence[SampleScore] | ScoreFrame


def _columns(scores: Scores, to_float: Any = None) -> dict[Any, ScoreFrame]:
    if isinstance(scores, ScoreFrame):
        return {None: scores}
    keys = value_keys(scores)
    if keys is None:
        return {None: ScoreFrame.from_scores(scores, to_float=to_float)}
    return {k: ScoreFrame.from_scores(scores, key=k, to_float=to_float) for k in keys}


def _objects(scores: Scores) -> list[SampleScore]:
    return scores.to_scores() if isinstance(scores, ScoreFrame) else list(scores)


def _raw_records(
    scores: Scores, metric_fns: list[MetricFn], reducers: list[Reducer], to_float: Any
) -> MetricSet:
    """Records of the metrics over raw values (``takes`` "scores" or "unreduced")."""
    records: list[Metric] = []
    objs = _objects(scores)
    unreduced = [m for m in metric_fns if m.takes == "unreduced"]
    for m in unreduced:
        records.extend(m.records(objs, run_context(n_failed=_n_none(objs))))
    per_sample = [m for m in metric_fns if m.takes == "scores"]
    if not per_sample:
        return MetricSet(records)
    single_epoch = len({s.sample_id for s in objs if s.sample_id is not None}) == sum(
        1 for s in objs if s.sample_id is not None
    )
    for r in reducers:
        # one score per sample already: the reducer is the identity, so raw values
        # (strings, lists of ratings) reach the metric unchanged; else the epochs are
        # converted with the metric's own mapping (aggregate's), or the evaluation's
        by_mapping: dict[Any, list[SampleScore]] = {}
        for m in per_sample:
            mapping = m.epoch_to_float if m.epoch_to_float is not None else to_float
            if mapping not in by_mapping:
                by_mapping[mapping] = (
                    objs if single_epoch and not r.collects else reduce_scores(objs, r, mapping)
                )
            reduced = by_mapping[mapping]
            context = run_context(
                reducer=r.name, reducer_to_float=_dict(r.to_float), n_failed=_n_none(reduced)
            )
            records.extend(m.records(reduced, context))
    return MetricSet(records)


def _n_none(objs: list[SampleScore]) -> int:
    return sum(1 for s in objs if s.score.value is None)


def metric_records(
    scores: Scores,
    metric_fns: list[MetricFn],
    reducers: list[Reducer],
    to_float: Any = None,
    ci: SampleCI | None = None,
) -> MetricSet:
    """The records of ``metric_fns`` over ``scores``, per reducer (and per score key when
    the values are dicts), each frame converted once per value mapping; metrics over raw
    values get the raw (or reduced) score objects."""
    raw = [m for m in metric_fns if m.takes != "frame"]
    if raw:
        frame_fns = [m for m in metric_fns if m.takes == "frame"]
        done = (
            metric_records(scores, frame_fns, reducers, to_float, ci)
            if frame_fns
            else MetricSet([])
        )
        return MetricSet([*done, *_raw_records(scores, raw, reducers, to_float)])
    views = _Views(scores)
    records: list[Metric] = []
    for r in reducers:
        if r.collects:  # lists of the epochs' values are for metrics over raw values
            continue
        by_mapping: dict[Any, dict[Any, ScoreFrame]] = {}
        for m in metric_fns:
            mapping = m.to_float if m.to_float is not None else to_float
            if mapping not in by_mapping:
                by_mapping[mapping] = views.reduced(r, mapping)
        keys = list(dict.fromkeys(k for frames in by_mapping.values() for k in frames))
        for key in keys:
            for m in metric_fns:
                frame = by_mapping[m.to_float if m.to_float is not None else to_float].get(key)
                if frame is None:
                    continue
                context = run_context(
                    reducer=r.name,
                    reducer_to_float=_dict(r.to_float),
                    score_key=key,
                    n_failed=frame.n_none,
                )
                records.extend(m.records(frame, context, ci))
    return MetricSet(records)


def _dict(mapping: ValueMapping | None) -> dict[str, Any] | None:
    return None if mapping is None else mapping.to_dict()


class _Views:
    """The score columns converted with each mapping (each built once) and their
    reductions.

    The reduction converts the epochs with the reducer's own mapping when it has one,
    else with the metric's (``mapping``); a reducer that returns a raw representative
    (``mode``, ``max``) has that value converted with the metric's mapping afterwards,
    as Inspect AI's metrics convert the reduced value with their own ``to_float``.
    """

    def __init__(self, scores: Scores) -> None:
        self.scores = scores
        self._columns: dict[Any, dict[Any, ScoreFrame]] = {}

    def columns(self, mapping: ValueMapping | None) -> dict[Any, ScoreFrame]:
        if mapping not in self._columns:
            self._columns[mapping] = _columns(self.scores, mapping)
        return self._columns[mapping]

    def reduced(self, r: Reducer, mapping: ValueMapping | None) -> dict[Any, ScoreFrame]:
        if r.group_fn is None:
            objs = reduce_scores(_objects(self.scores), r, mapping)
            return _columns(objs, mapping)
        conversion = r.to_float if r.to_float is not None else mapping
        frames = {k: r.reduce_frame(f) for k, f in self.columns(conversion).items()}
        if conversion == mapping:
            return frames
        again = mapping if mapping is not None else ValueMapping()  # None: the default
        return {k: f.remap(again) for k, f in frames.items()}
