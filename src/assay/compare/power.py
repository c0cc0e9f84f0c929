"""How many units would settle a comparison, two-sided at level ``alpha``.

With ``se`` the standard error of the difference on ``n`` paired units (``sd(d_i) /
sqrt(n)`` for per-unit means and proportions, the bootstrap's otherwise) and ``sd = se
sqrt(n)`` the per-unit spread it implies:

``mde``
    the minimum detectable difference at the given power: ``(z_{1-alpha/2} + z_power) se``;
``n_needed``
    the units needed to detect a difference ``D`` with that power: ``ceil(((z_{1-alpha/2}
    + z_power) sd / D)^2)``;
``n_for_width``
    the units needed for a normal interval of the difference ``W`` wide:
    ``ceil((2 z_{1-alpha/2} sd / W)^2)``.

Example:
    >>> round(mde(0.01), 5), n_needed(0.01, 400, 0.02), n_for_width(0.01, 400, 0.04)
    (0.02802, 785, 385)
"""

from __future__ import annotations

import math
from statistics import NormalDist

from assay.errors import InvalidInputError

__all__ = ["mde", "n_for_width", "n_needed"]


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _check(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise InvalidInputError(f"alpha must be in (0, 1), got {alpha}", source="alpha")
    if not 0.0 < power < 1.0:
        raise InvalidInputError(f"power must be in (0, 1), got {power}", source="power")


def mde(se: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The minimum detectable difference for a difference with standard error ``se``."""
    _check(alpha, power)
    return (_z(1.0 - alpha / 2.0) + _z(power)) * se


def _sd(se: float, n: int) -> float:
    if n < 1:
        raise InvalidInputError(f"no paired units (n = {n})", source="n")
    return se * math.sqrt(n)


def n_needed(se: float, n: int, difference: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Units needed to detect ``difference`` (> 0) with ``power``, from ``se`` on ``n``."""
    _check(alpha, power)
    if not difference > 0:
        raise InvalidInputError(f"must be > 0, got {difference}", source="--mde")
    k = (_z(1.0 - alpha / 2.0) + _z(power)) * _sd(se, n) / difference
    return max(1, math.ceil(k * k))


def n_for_width(se: float, n: int, width: float, level: float = 0.95) -> int:
    """Units needed for an interval of the difference ``width`` (> 0) wide at ``level``."""
    if not width > 0:
        raise InvalidInputError(f"must be > 0, got {width}", source="--target-width")
    _check(1.0 - level, 0.5)
    k = 2.0 * _z(1.0 - (1.0 - level) / 2.0) * _sd(se, n) / width
    return max(1, math.ceil(k * k))
