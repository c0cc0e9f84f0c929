"""Pairwise LLM judging with position-bias checks (SubEval), plus ratings.

A judge model sees two models' answers to one question in both orders (or one seeded
random order) and picks one of 2, 3 or 4 options; assay extracts the choice, checks that
the verdict survives the swap, and reports the original's win rates (old: consistent
pairs only; new: inconsistent pairs as ties), a win rate of every model against every
other, Bradley-Terry ratings with bootstrap intervals and a length-controlled win rate.

The four steps of every LLM evaluation:

1. items: :func:`read_table` + :func:`build_comparisons` + :func:`judge_items`
2. run: the one LLM driver (:func:`assay.llm.evaluate`: concurrency, retries, cache,
   resume, error budget, interrupts)
3. parse: :func:`extract_choice` (strict; a failure is counted, never guessed)
4. score: :class:`PairwiseEvaluator` / :func:`analyze`

:func:`judge` runs the four as one library call (a :class:`PairwiseTask`).

See docs/pairwise.md.
"""

from __future__ import annotations

from assay._lazy import lazy_exports

# Names are imported on first use, so ``assay.cli.pairwise`` (and ``assay --help``) does
# not pay for pandas and the fits.
_EXPORTS = {
    "Analysis": "analysis",
    "analyze": "analysis",
    "PairwiseEvaluator": "evaluator",
    "PROMPT_VERSION": "prompts",
    "Choice": "prompts",
    "build_prompt": "prompts",
    "extract_choice": "prompts",
    "Comparison": "table",
    "build_comparisons": "table",
    "read_table": "table",
    "judge_items": "calls",
    "judged_rows": "calls",
    "PairwiseTask": "task",
    "judge": "task",
    "read_records": "recordfile",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(
    __name__, {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()}
)
