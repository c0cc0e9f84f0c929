"""``assay plan --from RUN``: the units a comparison would need, from one pilot run.

For every scalar record of the pilot run that its kept units can resample (its tally),
the standard error of the record is the standard deviation of its bootstrap replicates
(:func:`assay.uncertainty.intervals.replicates_by_key`). A second model is assumed to
have the same per-unit variance and to err independently of the first given the unit,
so the difference of the two runs has standard error ``sqrt(2) se`` (a paired comparison
whose models agree on hard units does better: this is the cautious plan). From it
(:mod:`assay.compare.power`): ``mde`` on the pilot's ``n`` units, ``n_needed`` to detect
``--mde D``, ``n_for_width`` for an interval of the difference ``--target-width W`` wide.

Example:
    >>> import math
    >>> from assay.compare.power import n_needed
    >>> n_needed(math.sqrt(2) * 0.02, 400, 0.05)  # the pilot's se 0.02 on 400 units
    1005
"""

from __future__ import annotations

import math
from typing import Any

from assay.errors import InvalidInputError

__all__ = ["plan"]


def plan(
    store: Any,
    run: int,
    *,
    mde: float | None = None,
    target_width: float | None = None,
    level: float = 0.95,
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per record of ``run`` its units resample: ``type``, ``parameters``,
    ``value``, ``se`` (the pilot's), ``n`` (units), ``mde``, and ``n_needed`` (with
    ``mde``) and ``n_for_width`` (with ``target_width``) for the difference of two runs."""
    from assay.compare import power
    from assay.compare.runs import RunUnits
    from assay.store.comparison import _scalar, identity
    from assay.uncertainty.intervals import ci_options, replicates_by_key

    for value, flag in ((mde, "--mde"), (target_width, "--target-width")):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InvalidInputError(f"must be > 0, got {value:g}", source=flag)
    if mde is None and target_width is None:
        raise InvalidInputError("give --mde D or --target-width W (or both)", source="plan")
    ev = store.get(run)
    units = RunUnits(store.units(run))
    if units.evaluator is None:
        raise InvalidInputError(
            "has no units kept (saved with --no-units, by an older assay, or by an "
            "evaluator without a tally): nothing to plan from",
            source="--from",
            record=f"evaluation {run}",
        )
    opts = ci_options(level, "bootstrap", num_bootstrap, seed)
    assert opts is not None
    reps = replicates_by_key(units.tallies, opts)
    rows = []
    for m in ev.metrics or []:
        value = _scalar(m.value)
        found = units.find(m) if value is not None else None
        if found is None or found[1] not in reps:
            continue
        t, key = found
        r = reps[key]
        r = r[~(r != r)]  # defined replicates
        n = int(t.ready().unit_rows().size)
        if r.size < 2 or n < 1:
            continue
        se = math.sqrt(2.0) * float(r.std(ddof=1))
        row: dict[str, Any] = {"type": m.type, "parameters": identity(m)[1], "value": value}
        row |= {"se": float(r.std(ddof=1)), "n": n, "mde": power.mde(se, 1.0 - level)}
        if mde is not None:
            row["n_needed"] = power.n_needed(se, n, mde, 1.0 - level) if se > 0 else None
        if target_width is not None:
            row["n_for_width"] = power.n_for_width(se, n, target_width, level) if se > 0 else None
        rows.append(row)
    return rows
