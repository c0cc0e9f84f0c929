"""How ``eval`` and ``consistency`` standardise the mean difference: RSMTool's options.

RSMTool's ``Analyzer.compute_metrics`` (and ``metrics_helper``) take ``smd_method``
(``unpooled``, the default, ``pooled``, ``johnson``, ``williamson``; any case),
``use_diff_std_means`` (a ``DSM`` column in place of ``SMD``) and population means and sds
per score column (``population_mn_dict``, ``population_sd_dict``). The evaluator takes the
same, keyed by its column names: the human score, the system score, ``<system>_round`` (the
rounded row) and the first second-human-score column.

Rules (RSMTool's): ``johnson`` needs the human score's population sd, ``williamson`` also
the system rows'; with ``use_diff_std_means`` a score needs both its mean and its sd, or
neither (it is then standardised with its own mean and sd). ``consistency`` always uses the
pooled SMD (or DSM), ``degradation`` always RSMTool's default SMDs, and the by-group tables
always DSM against the whole set.

Example:
    >>> o = SmdOptions.checked("Williamson", False, {}, {"h": 1.0, "m": 0.9, "m_round": 1.0},
    ...                        human="h", system="m", human2=None)
    >>> o.smd_method
    'williamson'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from assay.errors import InvalidInputError
from assay.scoring.compute import smd_method as checked_method

__all__ = ["SmdOptions"]


def _values(given: Mapping[str, float] | None, name: str, allowed: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in dict(given or {}).items():
        if key not in allowed:
            raise InvalidInputError(
                f"unknown score column {key!r}; the keys are {allowed}", source=name, field=key
            )
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        if not math.isfinite(x) or (name == "population_sds" and x < 0):
            what = "a finite number >= 0" if name == "population_sds" else "a finite number"
            raise InvalidInputError(f"must be {what}, got {value!r}", source=name, field=key)
        out[str(key)] = x
    return out


@dataclass(frozen=True)
class SmdOptions:
    """RSMTool's SMD options, checked (see the module docstring)."""

    smd_method: str = "unpooled"
    use_diff_std_means: bool = False
    population_means: dict[str, float] = field(default_factory=dict)
    population_sds: dict[str, float] = field(default_factory=dict)

    @classmethod
    def checked(
        cls,
        smd_method: str,
        use_diff_std_means: bool,
        population_means: Mapping[str, float] | None,
        population_sds: Mapping[str, float] | None,
        *,
        human: str,
        system: str,
        human2: str | None,
    ) -> SmdOptions:
        """The options, or InvalidInputError naming the option and the score column."""
        try:
            method = checked_method(smd_method)
        except InvalidInputError as e:
            raise InvalidInputError(e.reason, source="smd_method") from None
        allowed = [human, system, f"{system}_round", *([human2] if human2 else [])]
        means = _values(population_means, "population_means", allowed)
        sds = _values(population_sds, "population_sds", allowed)
        dsm = bool(use_diff_std_means)
        if dsm:
            for key in sorted(set(means) ^ set(sds)):
                raise InvalidInputError(
                    f"give both population_means[{key!r}] and population_sds[{key!r}], or "
                    "neither (use_diff_std_means)",
                    source="population_sds",
                    field=key,
                )
        else:
            need = {"johnson": [human], "williamson": allowed[:3]}.get(method, [])
            missing = [k for k in need if k not in sds]
            if missing:
                raise InvalidInputError(
                    f"smd_method={method!r} requires population_sds for {missing}",
                    source="population_sds",
                )
        return cls(method, dsm, means, sds)
