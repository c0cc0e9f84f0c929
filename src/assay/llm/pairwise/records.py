"""Typed builders of the pairwise metric records (each parameter name is spelled here once).

=========================  ==============================================================
type                       what
=========================  ==============================================================
``ExtractionRate``         replies with a ``Choice: X`` / comparisons that are not exact matches
``ConsistencyRate``        consistent rows / extracted rows (both orders judged alike)
``WinRate``                ``counting="win+bothgood"`` or ``"win+halfdraw"``: the original's old
                           rates on consistent rows, per ``task`` column (``Overall-lang``,
                           ``EN``, each design file, each task); ``counting="debiased"``: the
                           win rate of every model against every other, ties half
``WinRateWithTie``         the original's new rate, inconsistent = tie, per ``metric``
``WinRateWithoutTie``      the same without the ties
``LengthControlledWinRate``  win rate predicted at equal answer length, with the length
                           coefficient and intervals
``BradleyTerryRating``     Elo-scale rating with a bootstrap interval and rank
=========================  ==============================================================

A rate whose denominator is 0 is ``None`` with the reason in ``parameters["undefined"]``
(the original writes 0 in its files; assay's copies of those files do too).

Example:
    >>> m = win_rate(0.75, model="m", opponent="r", counting="debiased")
    >>> m.type, m.value, m.parameters
    ('WinRate', 0.75, {'model': 'm', 'opponent': 'r', 'counting': 'debiased'})
    >>> win_rate_without_tie(None, model="m", opponent="r", metric="general",
    ...     undefined="every comparison was a tie").parameters["undefined"]
    'every comparison was a tie'
"""

from __future__ import annotations

from typing import Any

from assay.results import Metric, record

__all__ = [
    "extraction_rate",
    "consistency_rate",
    "win_rate",
    "win_rate_with_tie",
    "win_rate_without_tie",
    "length_controlled_win_rate",
    "bradley_terry_rating",
]


def extraction_rate(
    value: float | None, *, extracted: int, compared: int, undefined: str | None = None
) -> Metric:
    """``ExtractionRate``: ``extracted`` of ``compared`` non-exact-match comparisons."""
    return record(
        "ExtractionRate", value, undefined=undefined, extracted=extracted, compared=compared
    )


def consistency_rate(
    value: float | None, *, consistent: int, extracted: int, undefined: str | None = None
) -> Metric:
    """``ConsistencyRate``: ``consistent`` of ``extracted`` rows."""
    return record(
        "ConsistencyRate", value, undefined=undefined, consistent=consistent, extracted=extracted
    )


def win_rate(
    value: float | None,
    *,
    model: str,
    opponent: str,
    counting: str,
    task: str | None = None,
    n: int | None = None,
    undefined: str | None = None,
) -> Metric:
    """``WinRate`` of ``model`` against ``opponent`` (see the module table for ``counting``)."""
    params: dict[str, Any] = {"model": model, "opponent": opponent, "counting": counting}
    if task is not None:
        params["task"] = task
    if n is not None:
        params["n"] = n
    return record("WinRate", value, undefined=undefined, **params)


def win_rate_with_tie(
    value: float | None, *, model: str, opponent: str, metric: str, undefined: str | None = None
) -> Metric:
    """``WinRateWithTie``: ``(wins + ties/2) / total`` of ``model`` against ``opponent``."""
    return record(
        "WinRateWithTie", value, undefined=undefined, model=model, opponent=opponent, metric=metric
    )


def win_rate_without_tie(
    value: float | None, *, model: str, opponent: str, metric: str, undefined: str | None = None
) -> Metric:
    """``WinRateWithoutTie``: ``wins / (total - ties)``."""
    return record(
        "WinRateWithoutTie",
        value,
        undefined=undefined,
        model=model,
        opponent=opponent,
        metric=metric,
    )


def length_controlled_win_rate(
    value: float,
    *,
    model: str,
    opponent: str,
    n: int,
    raw_win_rate: float,
    ci: tuple[float, float],
    length_coefficient: float | None,
    length_coefficient_ci: tuple[float, float] | None,
    confidence_level: float,
    length_unit: str,
    num_bootstrap: int | None = None,
    seed: int | None = None,
) -> Metric:
    """``LengthControlledWinRate`` with its (bootstrap) interval and the length
    coefficient's; ``num_bootstrap`` and ``seed`` are written when given."""
    boot = {} if num_bootstrap is None else {"num_bootstrap": num_bootstrap, "seed": seed}
    coef_lo, coef_hi = length_coefficient_ci if length_coefficient_ci else (None, None)
    return Metric(
        "LengthControlledWinRate",
        float(value),
        {
            "model": model,
            "opponent": opponent,
            "n": n,
            "raw_win_rate": raw_win_rate,
            "ci_low": ci[0],
            "ci_high": ci[1],
            "length_coefficient": length_coefficient,
            "length_coefficient_ci_low": coef_lo,
            "length_coefficient_ci_high": coef_hi,
            "confidence_level": confidence_level,
            "ci_method": "bootstrap",
            **boot,
            "length_unit": length_unit,
        },
    )


def bradley_terry_rating(
    value: float,
    *,
    model: str,
    rank: int,
    ci: tuple[float, float],
    games: float,
    confidence_level: float,
    num_bootstrap: int,
    seed: int,
) -> Metric:
    """``BradleyTerryRating`` (Elo scale, mean 1000 over the models)."""
    return Metric(
        "BradleyTerryRating",
        float(value),
        {
            "model": model,
            "rank": rank,
            "ci_low": ci[0],
            "ci_high": ci[1],
            "games": games,
            "confidence_level": confidence_level,
            "ci_method": "bootstrap",
            "num_bootstrap": num_bootstrap,
            "seed": seed,
        },
    )
