"""Repeated pairwise judgements (``assay pairwise judge --repeats K``): how often the judge
changes its verdict on the same comparison.

With ``K > 1`` every judge call is made ``K`` times: repeat 0 is the call of a single run
(its cached answer reused), repeat ``r > 0`` adds ``seed = r`` to the call's parameters (a
distinct call, cached on its own; item id ``CMP#rR``). Every record of the run (win rates,
ratings, the run folder) is computed from repeat 0, as a single run; the repeats add one
``JudgeRepeatability`` record (:func:`assay.llm.judge.repeats.repeatability`) whose units
are the (question, pair) outcomes (both orders' verdicts debiased, as the
``counting="debiased"`` win rate counts them): ``flakiness``, the share of them that change
across repeats, ``judge_noise_variance`` and ``between_item_variance``; and
``choice_flakiness`` with ``n_calls``: the share of the ordered comparisons whose extracted
choice letter changes across the repeats that extracted one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from assay.llm.items import Item, Record
from assay.llm.judge.repeats import REPEAT, repeatability
from assay.llm.task import Prepared
from assay.results import Metric

__all__ = ["repeat_record", "repeated_items"]


def repeated_items(prepared: Sequence[Prepared], repeats: int) -> list[Prepared]:
    """Every judge item ``repeats`` times, the later ones with ``seed`` = the repeat."""
    out = list(prepared)
    for r in range(1, repeats):
        out += [
            Prepared(Item(f"{p.item.id}{REPEAT}{r}", p.item.messages,
                          {**p.item.params, "seed": r}), {**p.info, "repeat": r})
            for p in prepared
        ]  # fmt: skip
    return out


def repeat_record(
    records: Sequence[Record],
    repeats: int,
    rows_of: Callable[[list[Record]], Any],
    ci: Any = None,
) -> Metric:
    """The ``JudgeRepeatability`` record of a repeated run's ``records`` (``rows_of``: a
    repeat's records, their ids as in a single run -> its judged row table)."""
    from dataclasses import replace

    from assay.llm.pairwise.ratings import debiased_outcomes

    outcomes: dict[tuple[str, str, str], list[float]] = {}
    choices: dict[tuple[str, str, str], list[str]] = {}
    for r in range(repeats):
        tail = f"{REPEAT}{r}"
        mine = [
            rec if r == 0 else replace(rec, id=rec.id[: -len(tail)])
            for rec in records
            if (REPEAT not in rec.id if r == 0 else rec.id.endswith(tail))
        ]
        rows = rows_of(mine)
        for q, a, b, status, c in zip(
            rows["index"], rows["model_a"], rows["model_b"], rows["status"], rows["choice"]
        ):
            if status == "ok" and c:
                choices.setdefault((str(q), str(a), str(b)), []).append(str(c))
        d = debiased_outcomes(rows)
        for q, m, o, v in zip(d["index"], d["model"], d["opponent"], d["outcome"]):
            outcomes.setdefault((str(q), str(m), str(o)), []).append(float(v))
    rec = repeatability(list(outcomes.values()), repeats, ci, {"counting": "debiased"})
    calls = [c for c in choices.values() if len(c) >= 2]
    if rec.value is not None:
        rec.value["choice_flakiness"] = (
            sum(len(set(c)) > 1 for c in calls) / len(calls) if calls else None
        )
        rec.parameters["n_calls"] = len(calls)
    return rec
