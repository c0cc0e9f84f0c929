"""Repeated judgements (``--repeats K`` on the judge metrics): how much of a judged mean is
the judge's own noise.

With ``K > 1`` every judgement call (not the shared extractions of statements, opinions or
claims, which are asked once) is made ``K`` times: repeat 0 is the call of a single run (so
its cached answer is reused), repeat ``r > 0`` adds ``seed = r`` to the call's parameters,
which makes it a distinct call with its own cache entry (a rerun pays nothing) and asks a
sampling judge for an independent draw. Its item id is ``KEY#rR``.

Scoring (:func:`repeated_records`):

* each datum's record has the **mean of its defined repeat values** (``None``, with repeat
  0's reason, when none is defined) and ``details["repeats"]``, the value of each repeat;
* the aggregates are those of a single run over these per-datum means: the bootstrap draws
  datums with their repeats together (clustered by item), so the interval carries both the
  between-item spread and the judge's noise;
* one ``JudgeRepeatability`` record per metric, over the datums with at least two defined
  repeats (``n``), with ``repeats`` = K and the value ``{flakiness, judge_noise_variance,
  between_item_variance}``: the share of datums whose value changes across repeats; the mean
  within-datum variance of the repeats (ddof 1: the judge's noise ``s_w^2``); and the
  variance of the datums' true means, ``var(datum means) - s_w^2 / K`` (ddof 1; the one-way
  random-effects split, floored at 0). The variance of the judged mean is then
  ``(between + noise / K) / n``. With ``--ci`` the flakiness has its bootstrap interval
  over datums (``measure_ci``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.llm.items import Item
from assay.llm.judge.types import EXTRACTIONS
from assay.llm.task import Prepared
from assay.results import Metric
from assay.stats.means import datum_record

JudgeTask = Any  # assay.llm.judge.run.JudgeTask (which imports this module)
TaskResult = Any

__all__ = ["REPEAT", "repeatability", "repeated", "repeated_records"]

#: The item id of repeat r > 0 is ``KEY + REPEAT + r``.
REPEAT = "#r"


def _extraction(key: str) -> bool:
    return key.split(":", 1)[0] in EXTRACTIONS


def repeated(prepared: Sequence[Prepared], repeats: int) -> list[Prepared]:
    """Every judgement item ``repeats`` times (distinct seeds), extractions once."""
    out: list[Prepared] = []
    for p in prepared:
        out.append(p)
        if _extraction(p.item.id):
            continue
        for r in range(1, repeats):
            item = Item(f"{p.item.id}{REPEAT}{r}", p.item.messages, {**p.item.params, "seed": r})
            out.append(Prepared(item, {**p.info, "repeat": r}))
    return out


def _view(results: Mapping[str, TaskResult], r: int) -> Any:
    """The results as repeat ``r`` sees them: its own judgements, the shared extractions."""
    make: Any = type(results)  # the results' own kind: a missing key reads as not run
    out = make({k: v for k, v in results.items() if REPEAT not in k})
    if r > 0:
        tail = f"{REPEAT}{r}"
        out.update({k[: -len(tail)]: v for k, v in results.items() if k.endswith(tail)})
        for k in [k for k in out if not _extraction(k) and f"{k}{tail}" not in results]:
            del out[k]  # a repeat never made reads as not run
    return out


def _combined(reps: list[Metric]) -> Metric:
    first = reps[0]
    values = [m.value for m in reps]
    defined = [float(v) for v in values if v is not None]
    value = float(np.mean(defined)) if defined else None
    params = dict(first.parameters)
    uid = params.pop("datum_uid")
    details = dict(params.pop("details", {}) or {})
    reason = params.pop("undefined", None) if value is None else None
    params.pop("undefined", None)
    if value is not None:
        params.pop("raw_reply", None)
    details["repeats"] = values
    return datum_record(first.type, uid, value, reason=reason, **params, details=details)


def repeatability(
    reps: Sequence[Sequence[float]], k: int, ci: Any = None, params: dict[str, Any] | None = None
) -> Metric:
    """The ``JudgeRepeatability`` record (module docstring) of each unit's repeat values
    (units with fewer than two are left out); ``ci``: the run's ``CIOptions`` (an interval
    on the flakiness, over units); ``params``: the record's identifying parameters."""
    rows = [list(r) for r in reps if len(r) >= 2]
    params = dict(params or {}) | {"repeats": k, "n": len(rows)}
    if not rows:
        why = "no unit has two defined repeats"
        return Metric("JudgeRepeatability", None, params | {"undefined": why})
    flaky = np.array([float(len(set(r)) > 1) for r in rows])
    noise = float(np.mean([np.var(r, ddof=1) for r in rows]))
    means = np.array([np.mean(r) for r in rows])
    between = float(max(0.0, np.var(means, ddof=1) - noise / k)) if len(rows) > 1 else None
    value = {
        "flakiness": float(flaky.mean()),
        "judge_noise_variance": noise,
        "between_item_variance": between,
    }
    if ci is not None:
        from dataclasses import replace

        from assay.uncertainty.intervals import tally_intervals
        from assay.uncertainty.tally import Tally

        def values(w: np.ndarray) -> np.ndarray:
            return ((w @ flaky) / w.sum(axis=1))[:, None]

        tally = Tally(
            (("JudgeRepeatability", "flakiness"),),
            values,
            multiplicity=np.ones(flaky.size, dtype=np.int64),
        )
        opts = replace(ci, method="bootstrap", cluster=None)
        (p,) = tally_intervals(tally, opts).values()
        params["measure_ci"] = {"flakiness": [p["ci_low"], p["ci_high"]]}
        params |= {k: p[k] for k in ("confidence_level", "ci_method", "num_bootstrap", "seed")}
    return Metric("JudgeRepeatability", value, params)


def repeated_records(
    task: JudgeTask,
    results: Mapping[str, TaskResult],
    per_datum: Callable[[Any, Mapping[str, Any]], list[Metric]],
    aggregate: Callable[[Any, list[Metric]], list[Metric]],
) -> list[Metric]:
    """The records of a repeated run (module docstring): ``per_datum(task, results)`` gives
    one run's per-datum records, ``aggregate(task, per)`` adds their aggregates."""
    k = task.repeats
    runs = [per_datum(task, _view(results, r)) for r in range(k)]
    combined = [_combined([run[i] for run in runs]) for i in range(len(runs[0]))]
    out = aggregate(task, combined)
    for s in task.specs:
        reps = [
            [float(run[i].value) for run in runs if run[i].value is not None]
            for i in range(len(runs[0]))
            if runs[0][i].type == s.type
        ]
        out.append(repeatability(reps, k, task.ci, {"metric": s.name}))
    return out
