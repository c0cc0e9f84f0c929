"""LLM runtime: chat models (any OpenAI-compatible endpoint or the embedded SmolLM2) and the runner.

Example:
    >>> from assay.llm import Item, Runner, load_model                     # doctest: +SKIP
    >>> runner = Runner(load_model("embedded"), max_concurrency=4)           # doctest: +SKIP
    >>> records = runner.run([Item.from_prompt("q1", "What is 2+2?")])       # doctest: +SKIP
    >>> records[0].ok, records[0].text                                       # doctest: +SKIP
    (True, '2 + 2 = 4')

See docs/llm.md for the model spec syntax, the runner's retry/cache/resume rules and
the error kinds.
"""

from assay.llm.cache import ResponseCache, cache_key
from assay.llm.models import (
    CallError,
    ChatModel,
    ChatResponse,
    ModelSpec,
    Usage,
    load_model,
    parse_model_spec,
)
from assay.llm.runner import Item, Record, RetryPolicy, Runner, RunStats, run_items, summarize

__all__ = [
    "CallError",
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
