"""Steps 1-3 of pairwise judging: comparisons -> judge items -> records -> judged rows.

(Run together by :class:`~assay.llm.pairwise.task.PairwiseTask`.)

Exact matches (identical answers after stripping) are never sent: their row gets status
``em``. Every other comparison is one runner item whose id is its ``cmp_index``, one user
message (the prompt of :mod:`assay.llm.pairwise.prompts`) with ``temperature=0`` and
``max_tokens``; the runner adds concurrency, retries, the cache (so a killed run resumes
without paying twice) and error records (status ``failed``, retried on the next run
because errors are not cached).

Example:
    >>> from assay.llm.pairwise.table import Comparison
    >>> c = Comparison("q", "a", "b", "Q?", "x", "y", "be right", "t-general")
    >>> [i.id for i in judge_items([c], nopt=2)]
    ['q;a;b']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from assay.llm.items import Item, Record
from assay.llm.pairwise.prompts import build_prompt
from assay.llm.pairwise.recordfile import finish_rows
from assay.llm.pairwise.table import Comparison

__all__ = ["judge_items", "judged_rows", "DEFAULT_PARAMS"]

DEFAULT_PARAMS: Mapping[str, Any] = {"temperature": 0.0, "max_tokens": 1024}


def judge_items(
    comparisons: Sequence[Comparison], *, nopt: int, params: Mapping[str, Any] | None = None
) -> list[Item]:
    """One item per comparison that is not an exact match."""
    p = dict(DEFAULT_PARAMS if params is None else params)
    return [
        Item.from_prompt(
            c.cmp_index,
            build_prompt(
                question=c.question,
                response_1=c.answer1,
                response_2=c.answer2,
                guidance=c.guidance,
                nopt=nopt,
                reference_answer=c.reference_answer,
            ),
            **p,
        )
        for c in comparisons
        if not c.exact_match
    ]


def judged_rows(
    comparisons: Sequence[Comparison],
    records: Sequence[Record],
    *,
    judge: str,
    nopt: int,
) -> pd.DataFrame:
    """The row table of every comparison with its reply (or em/failed) and extracted choice."""
    by_id = {r.id: r for r in records}
    out = []
    for c in comparisons:
        rec = by_id.get(c.cmp_index)
        if c.exact_match:
            status, reply, error = "em", None, ""
        elif rec is None or not rec.ok:
            status, reply = "failed", None
            error = "not run" if rec is None else f"{rec.error_kind}: {rec.error}"
        else:
            status, reply, error = "ok", rec.text, ""
        out.append(
            {
                "index": c.index,
                "model_a": c.model_a,
                "model_b": c.model_b,
                "task": c.task,
                "question": c.question,
                "answer1": c.answer1,
                "answer2": c.answer2,
                "reference_answer": c.reference_answer or "",
                "evaluating_guidance": c.guidance,
                "judge": judge,
                "status": status,
                "reply": reply,
                "error": error,
            }
        )
    return finish_rows(pd.DataFrame(out), nopt=nopt)
