"""A :class:`~assay.fairness.evaluator.FairnessEvaluator`'s state as arrays, and back.

The arrays: ``counts`` (definition x TP/FP/FN/TN x unprivileged/privileged),
``overall``, ``privileged_matched``, the group tables, the weight sums when weighted, the
label and prediction values seen, the classes of datums with ``ci`` (``unit_*``,
:mod:`assay.fairness.units`), then the slices' and clusters' own states under their prefixes
(:func:`assay.fairness.slices.slices_state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import astuple
from typing import TYPE_CHECKING

import numpy as np

from assay.fairness.compute import GroupCounts
from assay.fairness.group_table import tables_from_state, tables_state
from assay.fairness.slices import slices_from, slices_state
from assay.fairness.units import units_from_state, units_state

if TYPE_CHECKING:
    from assay.fairness.evaluator import FairnessEvaluator

__all__ = ["load_state", "state_of"]


def state_of(ev: FairnessEvaluator) -> dict[str, np.ndarray]:
    """The evaluator's counts, tables, weights, values seen, slices and clusters as arrays."""
    counts = np.zeros((0, 4, 2), dtype=np.int64)
    if ev._counts:
        counts = np.stack([np.stack([c.tp, c.fp, c.fn, c.tn]) for c in ev._counts])
    state = {
        "counts": counts.astype(np.int64),
        "overall": ev._overall.astype(np.int64),
        "privileged_matched": np.concatenate([np.zeros(0, np.int64), *ev._matched]),
    }
    state |= tables_state(ev._tables)
    if ev._overall_weights is not None:
        state["overall_weights"] = ev._overall_weights.astype(np.float64)
    if ev._weighted_counts:
        sums = [np.stack(astuple(c)) for c in ev._weighted_counts]
        state["definition_weights"] = np.stack(sums).astype(np.float64)
    if ev._labels is not None and ev._predictions is not None:
        state["label_values"] = ev._labels
        state["prediction_values"] = ev._predictions
    clusters = slices_state({"": ev._clusters}, "clusters") if ev._clusters else {}
    return state | units_state(ev._units) | slices_state(ev._slices) | clusters


def load_state(ev: FairnessEvaluator, state: Mapping[str, np.ndarray]) -> None:
    """Fill ``ev`` (configured, empty) from :func:`state_of`'s arrays (older states too)."""
    counts = np.asarray(state["counts"], dtype=np.int64)
    ev._counts = [GroupCounts(tp=c[0], fp=c[1], fn=c[2], tn=c[3]) for c in counts]
    if "overall" in state:
        ev._overall = np.asarray(state["overall"], dtype=np.int64)
    elif len(counts):  # a state from before group columns: one definition's sums
        ev._overall = counts[0].sum(axis=1)
    if "privileged_matched" in state:
        flat = np.asarray(state["privileged_matched"], dtype=np.int64)
        cuts = np.cumsum([len(m) for m in ev._matched])[:-1]
        ev._matched = list(np.split(flat, cuts)) if ev._matched else []
    ev._tables = tables_from_state(state, len(ev.group_columns))
    ev._units = units_from_state(state, len(ev.group_columns))
    if "overall_weights" in state:
        ev._overall_weights = np.asarray(state["overall_weights"], dtype=np.float64)
        sums = np.asarray(state.get("definition_weights", np.zeros((0, 4, 2))), np.float64)
        # a state from before weighted definitions had none: its rows weigh 1
        ev._weighted_counts = [GroupCounts(*c) for c in sums] or ev._definition_weights()
    if "label_values" in state:
        ev._labels = np.asarray(state["label_values"])
        ev._predictions = np.asarray(state["prediction_values"])
    ev._slices = slices_from(state, ev.by, ev._load_sub)
    if "clusters.0.values" in state:
        load = ev._load_cluster
        ev._clusters = slices_from(state, [""], load, "clusters")[""]
