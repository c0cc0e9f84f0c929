"""Pairwise LLM judging with position-bias checks (SubEval), plus ratings.

A judge model sees two models' answers to one question in both orders (or one seeded
random order) and picks one of 2, 3 or 4 options; assay extracts the choice, checks that
the verdict survives the swap, and reports the original's win rates (old: consistent
pairs only; new: inconsistent pairs as ties), a win rate of every model against every
other, Bradley-Terry ratings with bootstrap intervals and a length-controlled win rate.

The four steps of every LLM evaluation:

1. items: :func:`read_table` + :func:`build_comparisons` + :func:`judge_items`
2. run: :class:`assay.llm.Runner` (concurrency, retries, cache, resume)
3. parse: :func:`extract_choice` (strict; a failure is counted, never guessed)
4. score: :class:`PairwiseEvaluator` / :func:`analyze`

See docs/pairwise.md.
"""

from assay.llm.pairwise.analysis import Analysis, analyze
from assay.llm.pairwise.evaluator import PairwiseEvaluator
from assay.llm.pairwise.prompts import PROMPT_VERSION, Choice, build_prompt, extract_choice
from assay.llm.pairwise.table import Comparison, build_comparisons, read_table

__all__ = [
    "PROMPT_VERSION",
    "Analysis",
    "Choice",
    "Comparison",
    "PairwiseEvaluator",
    "analyze",
    "build_comparisons",
    "build_prompt",
    "extract_choice",
    "read_table",
]
