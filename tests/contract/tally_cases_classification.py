"""Tally contract cases of the classification evaluator (``tests/contract/tallies.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.classification import ClassificationEvaluator
from assay.uncertainty.slices import record_key
from contract.tallies import TallyCase

WHERE = ("label_key", "label_value", "score_threshold")
_rng = np.random.default_rng(11)
N = 60
_truth = _rng.integers(0, 3, N)
_scores = _rng.dirichlet(np.ones(3), N)
_scores[np.arange(N), _truth] += 0.4
_scores = np.round(_scores / _scores.sum(axis=1, keepdims=True), 2)  # ties
_labels = np.array(["a", "b", "c"])[_truth]
_binary = np.round(np.clip(_rng.normal(0.4 + 0.3 * (_truth == 1), 0.2), 0, 1), 2)
_site = np.array(["x", "y", "z"])[_rng.integers(0, 3, N)]
_patient = np.array([f"p{i}" for i in _rng.integers(0, 12, N)])
COLUMNS = {"site": _site.tolist(), "patient": _patient.tolist()}
METRICS = ["Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC"]


def _key(m: Any) -> Any:
    return record_key(m, WHERE) if m.type in METRICS else None


def _metadata(idx: np.ndarray) -> list[dict[str, str]]:
    return [{"site": _site[i], "patient": _patient[i]} for i in idx]


def _case(name: str, binary: bool, hardmax: bool) -> TallyCase:
    def build(idx: np.ndarray, opts: Mapping[str, Any]) -> ClassificationEvaluator:
        ev = ClassificationEvaluator(
            metrics=METRICS, hardmax=hardmax, score_thresholds=[0.3, 0.5], **opts
        )
        if binary:
            y = np.where(_truth[idx] == 1, "pos", "neg")
            return ev.add_arrays(y, _binary[idx], labels=["neg", "pos"], metadata=_metadata(idx))
        return ev.add_arrays(
            _labels[idx], _scores[idx], labels=["a", "b", "c"], metadata=_metadata(idx)
        )

    def take(ids: Sequence[Any], opts: Mapping[str, Any]) -> ClassificationEvaluator:
        return build(np.asarray(ids, dtype=np.intp), opts)

    return TallyCase(
        name=name,
        make=lambda opts: build(np.arange(N), opts),
        take=take,
        key=_key,
        ids=list(range(N)),
        columns=COLUMNS,
        cluster="patient",
        by="site",
    )


TALLY_CASES = [
    _case("classification_multiclass", binary=False, hardmax=True),
    _case("classification_multilabel", binary=False, hardmax=False),
    _case("classification_binary", binary=True, hardmax=True),
]
