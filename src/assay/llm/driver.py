"""The one driver of every LLM evaluation: :func:`evaluate` runs any :class:`LLMTask`.

It owns what every evaluation needs, so a task only declares items, parsing and scoring
(:mod:`assay.llm.task`):

* **pre-flight**: the options are checked (:class:`~assay.llm.options.RunOptions`), the
  task checks its data, the model spec is parsed and the response cache opened, all
  before the first call;
* **run**: stage after stage on the shared :class:`~assay.llm.runner.Runner` (built here
  and nowhere else: concurrency, retries, cache, resume, progress); an invalid reply is
  re-asked with the reason where the task allows it;
* **error budget**: with ``max_errors=N`` the run stops once more than N calls have
  failed (calls in flight finish, nothing new starts; status ``failed``); without it the
  run goes on, and any failed call makes its status ``failed``; for a task that re-asks
  invalid replies, a reply still invalid after the re-asks counts as a failed call;
* **interrupts**: SIGINT/SIGTERM stop the run cleanly: :class:`EvaluationInterrupted`
  carries every call made (unfinished ones marked ``interrupted``); answered calls are in
  the cache, so running the same evaluation again resumes without paying twice;
* **calls**: :attr:`LLMRun.calls`, every call made with its parse outcome, from which
  the store's item rows are made (:mod:`assay.cli.llm_run`).

Example:
    >>> from assay.llm.items import Item
    >>> from assay.llm.models.base import ChatResponse, Usage
    >>> from assay.llm.task import LLMTask, Prepared
    >>> from assay.results import Metric, MetricSet
    >>> class Upper:
    ...     name = spec = identity = "upper"
    ...     async def chat(self, messages, **params):
    ...         return ChatResponse(messages[-1]["content"].upper(), Usage(1, 1), 0.0)
    >>> class Shout(LLMTask):
    ...     kind, dataset = "shout", "toy"
    ...     def stage(self, n, calls):
    ...         return [Prepared(Item.from_prompt("a", "hi"))] if n == 0 else []
    ...     def score(self, calls):
    ...         return MetricSet([Metric("Loud", float(calls[0].parsed == "HI"))])
    >>> run = evaluate(Shout(), Upper(), RunOptions(cache=False))
    >>> run.status, run.metrics.get("Loud").value
    ('finished', 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from assay.llm.items import Item, Record
from assay.llm.models.base import (
    INTERRUPTED,
    CallError,
    ChatModel,
    ChatResponse,
    LoglikResponse,
    Message,
    loglik_support,
)
from assay.llm.options import RunOptions
from assay.llm.task import Call, Invalid, LLMTask, Prepared
from assay.results import MetricSet

__all__ = [
    "evaluate",
    "LLMRun",
    "EvaluationInterrupted",
    "make_runner",
    "run_items",
    "dry_run_items",
    "STOP_MESSAGE",
]

#: The error text of calls refused after ``max_errors`` was exceeded (they are not kept).
STOP_MESSAGE = "assay: not started, the run was stopped after too many call errors"


@dataclass
class LLMRun:
    """What :func:`evaluate` returns: the metric records and every call behind them.

    Attributes:
        metrics: the metric records (of the calls made so far, when the run stopped).
        calls: one :class:`~assay.llm.task.Call` per model call, in order.
        status: ``"finished"``, or ``"failed"`` (calls failed beyond ``max_errors``,
            or the run was interrupted).
        error: why the run failed.
        kind, dataset, parameters: how to store it.
        model: the model's display name (credentials masked).
        started: when the run began.
        served_model: the model that answered, as its answers name it (the server's
            ``model`` field; cached answers keep theirs), or ``None`` when nothing says
            (:func:`~assay.llm.models.spec.served_model`).
    """

    metrics: MetricSet
    calls: list[Call]
    status: str
    error: str | None
    kind: str
    dataset: str
    parameters: dict[str, Any]
    model: str
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    served_model: str | None = None

    @property
    def n_errors(self) -> int:
        """Calls whose final attempt failed (not counting invalid replies)."""
        return sum(not c.record.ok and c.record.error_kind != INTERRUPTED for c in self.calls)

    @property
    def paid_calls(self) -> int:
        """Calls sent to the model in this run (cache hits and shared answers excluded)."""
        return sum(c.record.attempts for c in self.calls)


class EvaluationInterrupted(Exception):
    """SIGINT/SIGTERM stopped the run; ``run`` holds every call (unfinished ones marked)."""

    def __init__(self, run: LLMRun, signum: int, finished: int, total: int) -> None:
        import signal

        self.run = run
        self.signum = signum
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}: {finished} of {total} items finished")


def make_runner(
    model: ChatModel, options: RunOptions, on_record: Callable[[Record], None] | None = None
) -> Any:
    """The :class:`~assay.llm.runner.Runner` of a run: the one place one is built."""
    from assay.llm.policy import RetryPolicy
    from assay.llm.runner import Runner

    return Runner(
        model,
        max_concurrency=options.concurrency,
        rpm=options.rpm,
        timeout=options.timeout,
        retry=RetryPolicy(max_retries=options.retries, backoff_base=options.backoff),
        cache=options.runner_cache(),
        quiet=options.quiet,
        on_record=on_record,
    )


def resolve_model(model: ChatModel | str | None, options: RunOptions) -> ChatModel:
    """A model from a spec (``None``: ``$ASSAY_MODEL`` or embedded), or the model given."""
    if model is not None and not isinstance(model, str):
        return model
    from assay.llm.models.spec import load_model

    return load_model(model, timeout=options.timeout, loglik=options.loglik)


def run_items(
    model: ChatModel | str | None, items: Any, options: RunOptions | None = None
) -> list[Record]:
    """Run bare items (no parsing, no scoring): one record per item, in order.

    Example:
        >>> run_items("http://127.0.0.1:9/v1#m", [], RunOptions(cache=False))
        []
    """
    opts = options or RunOptions()
    return make_runner(resolve_model(model, opts), opts).run(items)


def dry_run_items(task: LLMTask, options: RunOptions | None = None) -> list[Item]:
    """The items of the first stage (what ``--dry-run`` prints); no model is loaded."""
    task.configure(options or RunOptions())
    return [p.item for p in task.stage(0, [])]


class _Guard:
    """Wraps a model; after more than ``max_errors`` failed calls, refuses new ones."""

    def __init__(self, model: ChatModel, max_errors: int | None) -> None:
        self.model = model
        self.name = model.name
        self.spec = getattr(model, "spec", model.name)
        self.identity = model.identity
        self.loglik_support = loglik_support(model)
        self.max_errors = max_errors
        self.errors = 0
        self.stopped = False

    async def chat(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        if self.stopped:
            raise CallError("model", STOP_MESSAGE)
        return await self.model.chat(messages, **params)

    async def loglik(
        self, messages: Sequence[Message], continuations: Sequence[str], *, prefix: str = ""
    ) -> LoglikResponse:
        if self.stopped:
            raise CallError("model", STOP_MESSAGE)
        return await self.model.loglik(messages, continuations, prefix=prefix)  # type: ignore[attr-defined, no-any-return]

    async def aclose(self) -> None:
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()

    def observe(self, record: Record) -> None:
        if record.ok or record.error == STOP_MESSAGE:
            return
        self.errors += 1
        if self.max_errors is not None and self.errors > self.max_errors:
            self.stopped = True


def evaluate(
    task: LLMTask,
    model: ChatModel | str | None = None,
    options: RunOptions | None = None,
    *,
    preflight: Callable[[], None] | None = None,
) -> LLMRun:
    """Run an LLM evaluation: stages -> runner -> parse (re-ask) -> score.

    ``model`` is a :class:`~assay.llm.models.base.ChatModel` or a spec (``None``:
    ``$ASSAY_MODEL`` or the embedded model). ``preflight`` checks the caller's outputs
    (``--out``, the store) once the options, the data and the model are known good, before
    the first call. Raises :class:`~assay.errors.InvalidInputError` before any call on a
    bad option or bad data, and :class:`EvaluationInterrupted` on SIGINT/SIGTERM.
    """
    from assay.llm.interrupt import RunInterrupted, run_interruptible
    from assay.llm.runner import check_cache

    options = options or RunOptions()
    started = datetime.now(UTC)
    task.configure(options)
    first = task.stage(0, [])  # checks the data before the model is even loaded
    check_cache(options.runner_cache())  # a file that is no cache, before anything is written
    chat_model = resolve_model(model, options)
    task.start(chat_model)
    task.constrain(chat_model)  # the reply shape as a constraint the model enforces
    first = task.stage(0, [])  # again: the items may depend on the model (answer modes)
    if preflight is not None:
        preflight()
    guard = _Guard(chat_model, options.max_errors)
    runner = make_runner(guard, options, on_record=guard.observe)
    calls: list[Call] = []
    shared = _in_process(chat_model)  # one KV cache: consecutive prompts share a prefix

    def run(items: list[Item]) -> list[Record]:
        return _run_ordered(runner, items) if shared else run_interruptible(runner, items)

    n, phase = 0, first
    try:
        while phase:
            _run_stage(task, phase, run, guard, calls)
            n += 1
            phase = [] if guard.stopped else task.stage(n, calls)
    except RunInterrupted as stop:
        result = _result(task, calls, guard, options, started, chat_model, score=False)
        result.status, result.error = "failed", f"{stop}; run again to resume"
        finished = sum(c.record.error_kind != INTERRUPTED for c in calls)
        raise EvaluationInterrupted(result, stop.signum, finished, len(calls)) from None
    return _result(task, calls, guard, options, started, chat_model)


def _run_stage(
    task: LLMTask,
    phase: Sequence[Prepared],
    run: Callable[[list[Item]], list[Record]],
    guard: _Guard,
    made: list[Call],
) -> None:
    """One stage: every prepared item, re-asked while invalid and allowed; calls go to
    ``made`` as they are final (on an interrupt too, the unfinished ones marked)."""
    from assay.llm.interrupt import RunInterrupted

    pending = [(p, list(p.item.messages)) for p in phase]
    for attempt in range(task.reasks + 1):
        if not pending or (attempt and guard.stopped):
            break
        items = [
            Item(
                p.item.id if attempt == 0 else f"{p.item.id}#reask{attempt}",
                tuple(msgs),
                p.item.params,
            )
            for p, msgs in pending
        ]
        try:
            records = run(items)
        except RunInterrupted as stop:
            for (p, _), item, rec in zip(pending, items, stop.records, strict=True):
                made.append(_parsed_call(task, p, item, rec))
            raise
        nxt: list[tuple[Prepared, list[Any]]] = []
        for (p, msgs), item, rec in zip(pending, items, records, strict=True):
            if rec.error == STOP_MESSAGE:
                continue
            call = _parsed_call(task, p, item, rec)
            reason = call.invalid
            if reason is not None and attempt < task.reasks:
                call = replace(call, final=False)
                more = [
                    {"role": "assistant", "content": rec.text or ""},
                    {"role": "user", "content": task.reask_prompt(reason)},
                ]
                nxt.append((p, msgs + more))
            made.append(call)
        pending = nxt


def prefix_order(items: Sequence[Item]) -> list[int]:
    """Positions of ``items`` in the order that runs them fastest on an in-process model:
    sorted by their conversation text, so prompts that share a prefix (instructions,
    few-shot rows, the options of one question) follow one another and llama.cpp decodes
    only what differs from the previous prompt.

    Example:
        >>> its = [Item.from_prompt(i, p) for i, p in [("a", "xb"), ("b", "y"), ("c", "xa")]]
        >>> prefix_order(its)
        [2, 0, 1]
    """

    def text(it: Item) -> str:
        return "\x00".join(str(m.get("content", "")) for m in it.messages)

    return sorted(range(len(items)), key=lambda i: text(items[i]))


def _run_ordered(runner: Any, items: list[Item]) -> list[Record]:
    """Run ``items`` in :func:`prefix_order`; the records come back in the items' order,
    so nothing downstream (records, item rows) depends on the order of the calls."""
    from assay.llm.interrupt import RunInterrupted, run_interruptible

    order = prefix_order(items)
    try:
        done = run_interruptible(runner, [items[i] for i in order])
    except RunInterrupted as stop:
        by_id = {r.id: r for r in stop.records}
        stop.records = [by_id[it.id] for it in items]
        raise
    back: list[Record] = [done[0]] * len(items) if done else []
    for pos, i in enumerate(order):
        back[i] = done[pos]
    return back


def _parsed_call(task: LLMTask, p: Prepared, item: Item, rec: Record) -> Call:
    if not rec.ok:
        return Call(item, rec, None, p.info, key=p.item.id)
    value = task.parse(p, rec.text or "")
    if isinstance(value, Invalid):
        return Call(item, rec, None, p.info, invalid=value.reason, key=p.item.id)
    return Call(item, rec, _jsonable(value), p.info, key=p.item.id, value=value)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def _result(
    task: LLMTask,
    calls: list[Call],
    guard: _Guard,
    options: RunOptions,
    started: datetime,
    model: ChatModel,
    *,
    score: bool = True,
) -> LLMRun:
    from assay.llm.models.spec import served_model

    status, error = "finished", None
    failed = sum(not c.record.ok and c.record.error_kind != INTERRUPTED for c in calls)
    # a reply still invalid after the task's re-asks is a failed call too
    invalid = sum(c.final and c.invalid is not None for c in calls) if task.reasks else 0
    failed += invalid
    if guard.stopped:
        status = "failed"
        error = (
            f"stopped: {guard.errors} call errors exceed max_errors={options.max_errors}; "
            f"{len(calls)} calls were made"
        )
    elif failed > options.allowed_errors():
        status = "failed"
        replies = f", {invalid} of them replies still invalid after {task.reasks} re-asks"
        error = (
            f"{failed} of {len(calls)} calls failed (allowed: {options.allowed_errors()}, "
            f"--max-errors){replies if invalid else ''}; run again to retry them, answered "
            "calls are cached"
        )
    metrics = task.score(calls) if score else MetricSet()
    params = task.stored_parameters()
    shown = getattr(model, "spec", None) or model.identity
    served = served_model(model, (c.record.raw for c in calls if c.record.ok))
    return LLMRun(
        metrics, calls, status, error, task.kind, task.dataset, params, shown,
        started=started, served_model=served,
    )  # fmt: skip


def _in_process(model: ChatModel) -> bool:
    """A model in this process with one KV cache (the embedded model): its items run in
    prefix order so consecutive prompts reuse the shared prefix's state."""
    from assay.llm.models.embedded import EmbeddedChatModel

    return isinstance(model, EmbeddedChatModel)
