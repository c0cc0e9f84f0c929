"""The old home of :class:`~assay.stats.Score`, :class:`~assay.stats.SampleScore` (now
:mod:`assay.stats.score`) and :class:`~assay.stats.ScoreFrame` (:mod:`assay.stats.frame`): their
old import path still works."""

from assay.stats.frame import ScoreFrame
from assay.stats.score import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    PARTIAL,
    SampleScore,
    Score,
    Value,
    value_to_float,
)

__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "SampleScore",
    "Score",
    "ScoreFrame",
    "Value",
    "value_to_float",
]
