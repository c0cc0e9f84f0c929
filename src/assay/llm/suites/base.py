"""The one shape of an LLM suite: items, run, parse, score.

A suite (context association tests, LLM fairness, language exams, and the next one) is an
:class:`~assay.llm.task.LLMTask` (run by the one driver, :func:`assay.llm.evaluate`) that
says four things:

1. :meth:`Suite.prepare` turns the data into :class:`Prepared` calls: a runner
   :class:`~assay.llm.items.Item` (prompt from a versioned template file) plus the facts
   scoring needs (``info``: the option order, the target, the group, ...);
2. the driver runs them through the shared runner (concurrency, retries, cache, resume,
   progress, ``max_errors``, interrupts), one record per call, errors kept;
3. :meth:`Suite.parse` turns each raw answer into a small JSON result (``{"outcome": ...}``)
   or an invalid one, never a guess;
4. :meth:`Suite.evaluator` and :meth:`Suite.feed` give an
   :class:`~assay.evaluator.Evaluator` that computes the metric records from the parsed
   results alone, so they come out the same from a model, the cache or a stored run.

A suite may ask for a second round of calls after the first (:meth:`Suite.follow_up`: the
counterfactual prompts of LLM fairness, made only for points whose first call did not fail).

Example:
    >>> Prepared(Item.from_prompt("q1", "2+2?"), {"answer": "4"}).item.id
    'q1'
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.llm.driver import STOP_MESSAGE, LLMRun, evaluate
from assay.llm.items import Item  # noqa: F401 (suites import it from here)
from assay.llm.options import RunOptions
from assay.llm.task import Call, LLMTask, Prepared
from assay.results import MetricSet

if TYPE_CHECKING:
    from assay.llm.models.base import ChatModel

__all__ = ["Prepared", "Call", "Suite", "SuiteResult", "run_suite", "template", "STOP_MESSAGE"]

#: What a suite run returns (the driver's :class:`~assay.llm.driver.LLMRun`).
SuiteResult = LLMRun


class Suite(LLMTask):
    """Data + prompt builder + answer parser + metrics (see the module docstring)."""

    #: evaluation kind in the store
    kind: str = "llm_suite"
    max_queries: int = 0
    seed: int = 1
    max_tokens: int = 16
    max_errors: int = 0

    def setup(self, *, max_queries: int, seed: int, max_tokens: int) -> None:
        """Check and keep the options every suite has."""
        if max_queries < 0:
            raise InvalidInputError(f"must be >= 0, got {max_queries}", source="--max-queries")
        if max_tokens < 1:
            raise InvalidInputError(f"must be >= 1, got {max_tokens}", source="--max-tokens")
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
        """One raw answer -> a JSON-able parsed result (a suite never re-asks)."""

    def stage(self, n: int, calls: Sequence[Call]) -> list[Prepared]:
        """Stage 0: :meth:`prepare`; stage 1: :meth:`follow_up` of the calls made."""
        return self.prepare() if n == 0 else self.follow_up(calls) if n == 1 else []

    def configure(self, options: RunOptions) -> None:
        """``--max-tokens`` replaces the suite's reply cap; ``max_errors`` is stored."""
        super().configure(options.replace(max_tokens=None))
        if options.max_tokens is not None:
            self.max_tokens = options.max_tokens
        self.max_errors = int(options.max_errors or 0)

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

    def stored_parameters(self) -> dict[str, Any]:
        """:meth:`parameters` and ``max_errors``."""
        return {**self.parameters(), "max_errors": self.max_errors}

    def score(self, calls: Sequence[Call]) -> MetricSet:
        """The metric records of ``calls`` (through the evaluator); none without calls."""
        if not calls:
            return MetricSet()
        ev = self.evaluator()
        self.feed(ev, calls)
        return ev.compute()


def run_suite(
    suite: Suite,
    model: ChatModel | str | None = None,
    options: RunOptions | None = None,
    **run: Any,
) -> LLMRun:
    """Run a suite through the one driver (:func:`assay.llm.evaluate`).

    ``run`` are :class:`~assay.llm.options.RunOptions` fields (``max_errors``,
    ``concurrency``, ``cache``, ``timeout``, ``retries``, ``quiet``, ...) when no
    ``options`` are given.
    """
    return evaluate(suite, model, options or RunOptions(**run))


def template(name: str) -> Template:
    """A prompt template shipped in ``assay/llm/suites/templates/`` (``$name`` placeholders)."""
    text = resources.files("assay.llm.suites").joinpath("templates", name).read_text("utf-8")
    return Template(text)


def read_template_file(path: str | Path) -> Template:
    """A user's prompt template file."""
    return Template(Path(path).read_text(encoding="utf-8"))
