"""LLM evaluations: chat models (OpenAI-compatible endpoints or the embedded SmolLM2), the
runner, and the one driver that runs every LLM evaluation.

* :func:`evaluate` runs any :class:`LLMTask` (a suite, judge metrics, pairwise judging)
  with :class:`RunOptions`; :func:`run_items` runs bare items.
* Names are imported on first use, so ``assay llm --help`` stays fast.

Example:
    >>> from assay.llm import Item, RunOptions, run_items                  # doctest: +SKIP
    >>> records = run_items("embedded", [Item.from_prompt("q1", "What is 2+2?")],
    ...                     RunOptions(concurrency=4))                       # doctest: +SKIP
    >>> records[0].ok, records[0].text                                       # doctest: +SKIP
    (True, '2 + 2 = 4')

See docs/llm.md for the model spec syntax, the runner's retry/cache/resume rules and
the error kinds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports

if TYPE_CHECKING:
    from assay.llm.cache import ResponseCache, cache_key
    from assay.llm.driver import EvaluationInterrupted, LLMRun, evaluate, run_items
    from assay.llm.items import Item, Record
    from assay.llm.models import (
        CallError,
        ChatModel,
        ChatResponse,
        ModelSpec,
        Usage,
        load_model,
        parse_model_spec,
    )
    from assay.llm.options import RunOptions
    from assay.llm.policy import RetryPolicy, RunStats, summarize
    from assay.llm.runner import Runner
    from assay.llm.task import Call, Invalid, LLMTask, Prepared

#: public name -> the module that defines it
_LAZY = {
    "CallError": "assay.llm.models",
    "ChatModel": "assay.llm.models",
    "ChatResponse": "assay.llm.models",
    "Item": "assay.llm.items",
    "ModelSpec": "assay.llm.models",
    "Record": "assay.llm.items",
    "ResponseCache": "assay.llm.cache",
    "RetryPolicy": "assay.llm.policy",
    "RunStats": "assay.llm.policy",
    "Runner": "assay.llm.runner",
    "Usage": "assay.llm.models",
    "cache_key": "assay.llm.cache",
    "load_model": "assay.llm.models",
    "parse_model_spec": "assay.llm.models",
    "run_items": "assay.llm.driver",
    "evaluate": "assay.llm.driver",
    "EvaluationInterrupted": "assay.llm.driver",
    "LLMRun": "assay.llm.driver",
    "RunOptions": "assay.llm.options",
    "LLMTask": "assay.llm.task",
    "Prepared": "assay.llm.task",
    "Call": "assay.llm.task",
    "Invalid": "assay.llm.task",
    "summarize": "assay.llm.policy",
}

__all__ = [
    "Call",
    "CallError",
    "EvaluationInterrupted",
    "Invalid",
    "LLMRun",
    "LLMTask",
    "Prepared",
    "RunOptions",
    "evaluate",
    "ChatModel",
    "ChatResponse",
    "Item",
    "ModelSpec",
    "Record",
    "ResponseCache",
    "RetryPolicy",
    "RunStats",
    "Runner",
    "Usage",
    "cache_key",
    "load_model",
    "parse_model_spec",
    "run_items",
    "summarize",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
