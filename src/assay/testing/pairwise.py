"""A scripted pairwise judge and small input tables, for tests of ``assay pairwise``.

:func:`scripted_judge` returns a ``responder`` for :class:`assay.testing.llm.FakeChatServer`:
it reads the two responses out of assay's judge prompt and answers by a rule named in the
question text (``[judge:RULE]``):

==============  ===================================================================
rule            reply
==============  ===================================================================
``quality``     the response with the higher ``quality=N`` tag wins (A or B)
``first``       always A (a judge with position bias: inconsistent in dual mode)
``second``      always B (likewise)
``both``        C (both good)
``neither``     D (neither good)
``garbage``     a reply without ``Choice: X`` (an extraction failure)
``letter:X``    ``Choice: X`` whatever the options (X may be one not offered)
==============  ===================================================================

Example:
    >>> judge = scripted_judge()
    >>> prompt = ("[judge:quality]\\n<response_1>\\nquality=1\\n</response_1>\\n"
    ...           "<response_2>\\nquality=3\\n</response_2>")
    >>> judge([{"role": "user", "content": prompt}]).splitlines()[0]
    'Choice: B'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

__all__ = ["scripted_judge", "make_table"]

_RULE = re.compile(r"\[judge:([\w:]+)\]")
_QUALITY = re.compile(r"quality=(\d+)")


def _between(text: str, tag: str) -> str:
    start, end = text.find(f"<{tag}>"), text.find(f"</{tag}>")
    return text[start + len(tag) + 2 : end] if start >= 0 and end > start else ""


def _quality(text: str) -> int:
    m = _QUALITY.search(text)
    return int(m.group(1)) if m else 0


def scripted_judge() -> Callable[[list[dict[str, Any]]], str]:
    """A responder: ``messages -> reply`` (see the module docstring)."""

    def respond(messages: list[dict[str, Any]]) -> str:
        prompt = str(messages[-1]["content"])
        m = _RULE.search(prompt)
        rule = m.group(1) if m else "quality"
        r1, r2 = _between(prompt, "response_1"), _between(prompt, "response_2")
        if rule == "garbage":
            return "Both have merits; I cannot decide."
        if rule.startswith("letter:"):
            letter = rule.split(":", 1)[1]
        else:
            fixed = {"first": "A", "second": "B", "both": "C", "neither": "D"}
            letter = fixed.get(rule) or ("A" if _quality(r1) >= _quality(r2) else "B")
        return f"Choice: {letter}\nReason:\n1. scripted ({rule})"

    return respond


def make_table(
    rules: Sequence[str],
    qualities: dict[str, Sequence[int]],
    *,
    task: str = "uml_class-general",
) -> pd.DataFrame:
    """An input table: one question per rule; each model answers ``quality=N`` (from ``qualities``).

    A quality below 0 leaves that model's answer empty (the question is skipped for it).
    """
    n = len(rules)
    df = pd.DataFrame(
        {
            "question": [f"Question {i} [judge:{r}]" for i, r in enumerate(rules)],
            "index": [f"proj{i}_{task}" for i in range(n)],
            "evaluating_guidance": ["Prefer the better design."] * n,
            "task": [task] * n,
            "reference_answer": [""] * n,
        }
    )
    for model, qs in qualities.items():
        df[f"answer-{model}"] = [
            None if q < 0 else f"Answer by {model} to question {i}: quality={q}"
            for i, q in enumerate(qs)
        ]
    return df
