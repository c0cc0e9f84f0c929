"""Cost before paying (``--dry-run`` on every LLM command): the calls a run would make, their
prompt tokens, how many are already cached, and with prices the expected cost.

:func:`estimate_task` prepares a task as :func:`assay.llm.driver.evaluate` does (options, the
model resolved without loading its weights, its answer mode and reply constraint, stage 0),
then for each distinct call (the runner asks identical prompts once) looks its cache key up
in the response cache. No model call is made; an endpoint may be asked for its ``/models``
list, as a run does to choose its reply constraint.

Prompt tokens are

* **counted** for the embedded model: the conversation rendered by the GGUF's chat template
  and tokenized by its own tokenizer (the count its calls report as ``prompt_tokens``;
  loading the weights, not calling them);
* **estimated** for endpoints, whose tokenizer assay does not know: 4 characters a token
  (rounded up) per message plus 4 tokens of message framing, plus 3 for the reply's start
  (OpenAI's rule of thumb for English; the line says "estimated").

Only the calls known before any reply are counted: the judge metrics' later stage (the
judgements that need the extracted statements) and re-asks of invalid replies depend on the
replies and are left out (the line says so). The cost is ``tokens_in * IN / 10^6`` for the
calls to pay, plus ``max_tokens * OUT / 10^6`` per call when every call has a ``max_tokens``
cap (an upper bound on the output); without a cap the output cost is unknown and left out.

Example:
    >>> e = CallEstimate(calls=10, cached=4, prompt_tokens=1200, counted=False,
    ...                  max_output_tokens=600, later_stages=False)
    >>> round(e.cost(0.15, 0.60), 6)
    0.00054
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.items import Item

__all__ = ["CallEstimate", "estimate_items", "estimate_task", "existing_cache", "parse_prices"]


@dataclass(frozen=True)
class CallEstimate:
    """What a run would pay: distinct ``calls``, of which ``cached`` are answered by the
    cache; the ``prompt_tokens`` of the calls to pay (``counted`` by the model's tokenizer,
    else estimated); the sum of their ``max_tokens`` caps (``None`` when a call has none);
    ``later_stages``: more calls would follow that depend on the replies."""

    calls: int
    cached: int
    prompt_tokens: int
    counted: bool
    max_output_tokens: int | None
    later_stages: bool

    @property
    def to_pay(self) -> int:
        return self.calls - self.cached

    def cost(self, price_in: float, price_out: float) -> float:
        """The expected cost at prices per million input and output tokens (output: the
        ``max_tokens`` caps, an upper bound; 0 when unknown)."""
        out = self.max_output_tokens or 0
        return (self.prompt_tokens * price_in + out * price_out) / 1e6

    def line(self, prices: tuple[float, float] | None = None) -> str:
        """The one line ``--dry-run`` prints on stderr."""
        how = "counted by the model's tokenizer" if self.counted else "estimated, ~4 chars a token"
        text = (
            f"dry run: {self.calls} calls ({self.cached} cached, {self.to_pay} to pay), "
            f"{self.prompt_tokens} prompt tokens to pay ({how})"
        )
        if prices is not None:
            text += f"; expected cost {self.cost(*prices):.6g}"
            if self.max_output_tokens is None:
                text += " (input only: no --max-tokens cap bounds the output)"
            else:
                text += f" (output at most {self.max_output_tokens} tokens)"
        if self.later_stages:
            text += "; later calls depend on the replies and are not counted"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "to_pay": self.to_pay,
            "prompt_tokens": self.prompt_tokens,
            "tokens": "counted" if self.counted else "estimated",
            "max_output_tokens": self.max_output_tokens,
            "later_stages": self.later_stages,
        }


def parse_prices(text: str | None) -> tuple[float, float] | None:
    """``--price-per-mtok IN,OUT``: two finite prices >= 0 per million tokens, or ``None``.

    Example:
        >>> parse_prices("0.15,0.6")
        (0.15, 0.6)
    """
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 2 or not all(math.isfinite(v) and v >= 0 for v in values):
        raise InvalidInputError(
            f"expected IN,OUT: two prices >= 0 per million tokens (e.g. 0.15,0.60), got {text!r}",
            source="--price-per-mtok",
        )
    return values[0], values[1]


def _estimated_tokens(item: Item) -> int:
    texts = [str(m.get("content") or "") for m in item.messages]
    loglik = item.params.get("loglik") if isinstance(item.params, dict) else None
    if isinstance(loglik, dict):  # a scored item: its prefix and every continuation too
        texts += [str(loglik.get("prefix") or ""), *map(str, loglik.get("continuations") or ())]
    return sum(math.ceil(len(t) / 4) + 4 for t in texts) + 3


def _counter(model: Any) -> Any:
    """A function item -> prompt tokens by the model's own tokenizer, or ``None``."""
    from assay.llm.models.embedded import EmbeddedChatModel

    if not isinstance(model, EmbeddedChatModel):
        return None
    llama = model.load()._model()

    def count(item: Item) -> int:
        prompt = model.render(item.messages)
        loglik = item.params.get("loglik")
        if isinstance(loglik, dict):
            prompt += str(loglik.get("prefix") or "")
            extra = sum(
                len(llama.tokenize(str(c).encode("utf-8"), add_bos=False, special=False))
                for c in loglik.get("continuations") or ()
            )
        else:
            extra = 0
        return len(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)) + extra

    return count


def estimate_items(
    model: Any, items: Sequence[Item], cache: Any = None, later_stages: bool = False
) -> CallEstimate:
    """The :class:`CallEstimate` of ``items`` on ``model`` (a loaded-or-lazy chat model) with
    the response ``cache`` (``None``: none)."""
    from assay.llm.cache import cache_key

    identity = model.identity
    distinct: dict[str, Item] = {}
    for it in items:
        distinct.setdefault(cache_key(identity, it.messages, it.params), it)
    hits = set(cache.get_many(list(distinct))) if cache is not None else set()
    paid = [it for k, it in distinct.items() if k not in hits]
    count = _counter(model) if paid else None
    tokens = sum((count or _estimated_tokens)(it) for it in paid)
    caps = [it.params.get("max_tokens") for it in paid]
    out = None if any(c is None for c in caps) else int(sum(caps))  # type: ignore[arg-type]
    return CallEstimate(
        calls=len(distinct),
        cached=len(distinct) - len(paid),
        prompt_tokens=int(tokens),
        counted=_is_embedded(model),
        max_output_tokens=out,
        later_stages=later_stages,
    )


def _is_embedded(model: Any) -> bool:
    from assay.llm.models.embedded import EmbeddedChatModel

    return isinstance(model, EmbeddedChatModel)


def existing_cache(option: Any) -> Any:
    """The response cache a run would read, or ``None`` (no cache, or no file yet: a dry
    run writes nothing)."""
    from assay.llm.runner import cache_file, open_cache

    if option is None or option is False or not cache_file(option)[0].is_file():
        return None
    return open_cache(option)


def estimate_task(task: Any, model: Any, options: Any, *, start: bool = True) -> CallEstimate:
    """The :class:`CallEstimate` of a task's first stage, prepared as a run prepares it
    (``start=False``: the task's answer mode is already chosen, as a suite's dry run
    chooses it from the spec alone, and the model is not asked)."""
    from assay.llm.driver import resolve_model
    from assay.llm.runner import check_cache

    task.configure(options)
    task.stage(0, [])  # the data checked before the model is resolved
    check_cache(options.runner_cache())
    chat_model = resolve_model(model, options)
    if start:
        task.start(chat_model)
    task.constrain(chat_model)
    items = [p.item for p in task.stage(0, [])]
    later = bool(getattr(task, "has_later_stages", lambda: False)())
    cache = existing_cache(options.runner_cache())
    try:
        return estimate_items(chat_model, items, cache, later_stages=later)
    finally:
        if cache is not None:
            cache.close()
