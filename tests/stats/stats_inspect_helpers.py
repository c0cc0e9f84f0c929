"""Shared by the differential tests against Inspect AI: the same scores for both tools."""

import logging
import math

from inspect_ai.scorer import SampleScore as ISampleScore
from inspect_ai.scorer import Score as IScore

import assay.stats as st

TOL = 1e-12
logging.getLogger("inspect_ai").setLevel(logging.ERROR)


def close(a, b):
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def pair(values, meta=None):
    meta = [None] * len(values) if meta is None else meta
    ours = [st.SampleScore(st.Score(v), i, 1, m) for i, (v, m) in enumerate(zip(values, meta))]
    theirs = [
        ISampleScore(score=IScore(value=v), sample_id=i, sample_metadata=m)
        for i, (v, m) in enumerate(zip(values, meta))
    ]
    return ours, theirs
