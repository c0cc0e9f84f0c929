"""Shared score-threshold grids.

:data:`PR_CURVE_SCORE_THRESHOLDS` is the grid of the precision-recall curves reported by
classification and detection: 0.05, 0.10, ..., 0.95, nineteen exact two-decimal values
(``round(0.05 * k, 2)``), so a threshold printed in a record reads back as the same float.

Example:
    >>> PR_CURVE_SCORE_THRESHOLDS[:3], PR_CURVE_SCORE_THRESHOLDS[-1], len(PR_CURVE_SCORE_THRESHOLDS)
    ((0.05, 0.1, 0.15), 0.95, 19)
"""

from __future__ import annotations

__all__ = ["PR_CURVE_SCORE_THRESHOLDS"]

#: Score thresholds of the precision-recall curves: 0.05, 0.10, ..., 0.95.
PR_CURVE_SCORE_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * k, 2) for k in range(1, 20))
