"""The one shape of an LLM suite: items, run, parse, score.

A suite (context association tests, LLM fairness, language exams, and the next one) is a
subclass of :class:`Suite` that says four things:

1. :meth:`Suite.prepare` turns the data into :class:`Prepared` calls: a runner
   :class:`~assay.llm.runner.Item` (prompt from a versioned template file) plus the facts
   scoring needs (``info``: the option order, the target, the group, ...);
2. the shared :func:`run_suite` runs them through the :class:`~assay.llm.runner.Runner`
   (concurrency, retries, cache, resume, progress), one record per call, errors kept;
3. :meth:`Suite.parse` turns each raw answer into a small JSON result (``{"outcome": ...}``)
   or an invalid one, never a guess;
4. :meth:`Suite.evaluator` and :meth:`Suite.feed` give an
   :class:`~assay.evaluator.Evaluator` that computes the metric records from the parsed
   results alone, so they come out the same from a model, the cache or a stored run.

A suite may ask for a second round of calls after the first (:meth:`Suite.follow_up`: the
counterfactual prompts of LLM fairness, made only for points whose first call did not fail).

``max_errors`` (0 = no limit) stops a run once more calls than that have failed: calls
already in flight finish, nothing new starts, and the result is ``status="failed"`` with the
reason and every call made so far.

Example:
    >>> from assay.llm.suites.shuffle import clean_answer
    >>> Prepared(Item.from_prompt("q1", "2+2?"), {"answer": "4"}).item.id
    'q1'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.llm.models.base import CallError, ChatModel, ChatResponse, Message
from assay.llm.runner import Item, Record, RetryPolicy, Runner
from assay.results import MetricSet

__all__ = ["Prepared", "Call", "Suite", "SuiteResult", "run_suite", "template", "STOP_MESSAGE"]

#: The error text of calls refused after ``max_errors`` was exceeded (they are not kept).
STOP_MESSAGE = "assay: not started, the run was stopped after too many call errors"


@dataclass(frozen=True)
class Prepared:
    """One call a suite will make: the runner item and what scoring needs to know about it."""

    item: Item
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """One call made: the item, the runner's record, the parsed answer (None on a call error)."""

    item: Item
    record: Record
    parsed: dict[str, Any] | None
    info: dict[str, Any]


@dataclass
class SuiteResult:
    """What a suite run returns: the metric records and every call behind them.

    Attributes:
        metrics: the metric records (of the calls made so far, when the run failed).
        calls: one :class:`Call` per model call, in order.
        status: ``"finished"``, or ``"failed"`` when ``max_errors`` stopped the run.
        error: why the run failed.
        kind: the evaluation kind to store it as (``llm_cat``, ``llm_fairness``, ...).
        dataset: the dataset name to store it under.
        parameters: how it was run (seed, max_queries, template version, ...).
    """

    metrics: MetricSet
    calls: list[Call]
    status: str
    error: str | None
    kind: str
    dataset: str
    parameters: dict[str, Any]


class Suite(ABC):
    """Data + prompt builder + answer parser + metrics (see the module docstring)."""

    #: evaluation kind in the store
    kind: str = "llm_suite"
    max_queries: int = 0
    seed: int = 1
    max_tokens: int = 16

    def configure(self, *, max_queries: int, seed: int, max_tokens: int) -> None:
        """Check and keep the options every suite has."""
        if max_queries < 0:
            raise InvalidInputError("must be >= 0", source=self.kind, field="max_queries")
        if max_tokens < 1:
            raise InvalidInputError("must be >= 1", source=self.kind, field="max_tokens")
        self.max_queries, self.seed, self.max_tokens = int(max_queries), int(seed), int(max_tokens)

    @property
    @abstractmethod
    def dataset(self) -> str:
        """The dataset name the run is stored under."""

    @abstractmethod
    def prepare(self) -> list[Prepared]:
        """The first round of calls (validating the data before any call is paid)."""

    @abstractmethod
    def parse(self, prepared: Prepared, text: str) -> dict[str, Any]:
        """One raw answer -> a JSON-able parsed result."""

    @abstractmethod
    def evaluator(self) -> Evaluator:
        """A fresh evaluator for this suite's parsed results."""

    @abstractmethod
    def feed(self, evaluator: Evaluator, calls: Sequence[Call]) -> None:
        """Add the parsed results of ``calls`` to ``evaluator``."""

    def follow_up(self, calls: Sequence[Call]) -> list[Prepared]:
        """Calls to make after the first round (default: none)."""
        return []

    def parameters(self) -> dict[str, Any]:
        """How the run was configured, stored with the evaluation."""
        return {"seed": self.seed, "max_queries": self.max_queries, "max_tokens": self.max_tokens}

    def score(self, calls: Sequence[Call]) -> MetricSet:
        """The metric records of ``calls`` (through the evaluator)."""
        ev = self.evaluator()
        self.feed(ev, calls)
        return ev.compute()


class _Guard:
    """Wraps a model; after more than ``max_errors`` failed calls, refuses new ones."""

    def __init__(self, model: ChatModel, max_errors: int) -> None:
        self.model = model
        self.name = model.name
        self.identity = model.identity
        self.max_errors = max_errors
        self.errors = 0
        self.stopped = False

    async def chat(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        if self.stopped:
            raise CallError("model", STOP_MESSAGE)
        return await self.model.chat(messages, **params)

    async def aclose(self) -> None:
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()

    def observe(self, record: Record) -> None:
        if record.ok or record.error == STOP_MESSAGE:
            return
        self.errors += 1
        if self.max_errors > 0 and self.errors > self.max_errors:
            self.stopped = True


def run_suite(
    suite: Suite,
    model: ChatModel | str | None = None,
    *,
    max_errors: int = 0,
    concurrency: int = 8,
    cache: Any = True,
    timeout: float = 60.0,
    retries: int = 5,
    rpm: float | None = None,
    quiet: bool = True,
) -> SuiteResult:
    """Run a suite's calls through the shared runner and score the parsed answers.

    ``model`` is a model spec (``None``: ``$ASSAY_MODEL`` or the embedded model) or a
    :class:`~assay.llm.models.base.ChatModel`. ``cache`` is the runner's response cache
    (``True``: the default file), so a re-run repeats no answered call. The embedded model
    answers one call at a time; calls beyond it wait their turn without spending their
    ``timeout``.
    """
    first = suite.prepare()  # validates the data before the model is even loaded
    chat_model = _model(model)
    guard = _Guard(chat_model, int(max_errors))
    runner = Runner(
        guard,
        max_concurrency=concurrency,
        rpm=rpm,
        timeout=timeout,
        retry=RetryPolicy(max_retries=retries),
        cache=cache,
        quiet=quiet,
        on_record=guard.observe,
    )
    calls: list[Call] = []
    phase = first
    while phase:
        records = runner.run([p.item for p in phase])
        made = [
            Call(p.item, r, suite.parse(p, r.text or "") if r.ok else None, p.info)
            for p, r in zip(phase, records)
            if r.error != STOP_MESSAGE
        ]
        calls.extend(made)
        phase = [] if guard.stopped else suite.follow_up(made)
    status, error = "finished", None
    if guard.stopped:
        status = "failed"
        error = (
            f"stopped: {guard.errors} call errors exceed max_errors={max_errors}; "
            f"{len(calls)} calls were made"
        )
    metrics = suite.score(calls) if calls else MetricSet()
    params = {**suite.parameters(), "max_errors": int(max_errors)}
    return SuiteResult(metrics, calls, status, error, suite.kind, suite.dataset, params)


def _model(model: ChatModel | str | None) -> ChatModel:
    if model is not None and not isinstance(model, str):
        return model
    from assay.llm.models.spec import load_model, parse_model_spec

    if parse_model_spec(model).kind == "embedded":  # the suites' prompts need a wider window
        return load_model(model, n_ctx=4096)
    return load_model(model)


def template(name: str) -> Template:
    """A prompt template shipped in ``assay/llm/suites/templates/`` (``$name`` placeholders)."""
    text = resources.files("assay.llm.suites").joinpath("templates", name).read_text("utf-8")
    return Template(text)


def read_template_file(path: str | Path) -> Template:
    """A user's prompt template file."""
    return Template(Path(path).read_text(encoding="utf-8"))
