"""Synthetic multiclass data for the classification tests (a named module, not conftest)."""

import numpy as np


def make_multiclass(n: int, k: int, seed: int, *, decimals: int = 2, never_predicted: bool = True):
    """Scores (n, k) in sorted-label column order, with ties (rounded) and optionally one label
    that is never the top prediction, plus one label that never occurs in the ground truth."""
    rng = np.random.default_rng(seed)
    labels = [f"L{j}" for j in range(k)]
    y = rng.integers(0, k - 1, size=n)  # the last label never occurs as ground truth
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.0
    if never_predicted:
        logits[:, 0] -= 4.0  # label L0 (rarely/never) the top prediction
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    p = np.clip(np.round(p, decimals), 0.01, 1.0)
    return labels, np.asarray(labels)[y], p
