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
4. :meth:`Suite.evaluator` and :meth:`Suite.items` (the evaluator's ``add`` arguments,
   one entry per item, and each item's columns) give an
   :class:`~assay.evaluator.Evaluator` that computes the metric records from the parsed
   results alone, so they come out the same from a model, the cache or a stored run; the
   run's intervals (``ci``) and slices (``by``) come from the same items
   (:class:`~assay.llm.slicing.SlicedEvaluator`).

A suite may ask for a second round of calls after the first (:meth:`Suite.follow_up`: the
counterfactual prompts of LLM fairness, made only for points whose first call did not fail).

**Answer modes** (``answer_mode``, ``--answer-mode``;
:data:`~assay.llm.suites.declared.ANSWER_MODES`): ``generate`` (the model writes its
answer, a strict parser reads it, unreadable answers are invalid, as the spec says),
``loglik`` (each option's continuation is scored by the model's log-probability after the
prompt and the most likely one is the answer: lm-evaluation-harness's ``acc``) and
``loglik_norm`` (the same with each log-probability divided by the continuation's length
in characters: lm-eval's ``acc_norm``). Both loglik modes make the same calls (a switch
between them is answered from the cache), and no answer is invalid by construction.
``None`` picks ``loglik`` for a model that gives log-probabilities (the embedded model),
``generate`` otherwise (:func:`resolve_answer_mode`).

Example:
    >>> Prepared(Item.from_prompt("q1", "2+2?"), {"answer": "4"}).item.id
    'q1'
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.evaluator import Evaluator
from assay.llm.driver import LLMRun, evaluate
from assay.llm.items import Item  # noqa: F401 (suites import it from here)
from assay.llm.models.base import LOGLIK_PARAM, LoglikResponse, loglik_support, require_loglik
from assay.llm.options import RunOptions
from assay.llm.slicing import SlicedEvaluator, TalliedEvaluator, record_key
from assay.llm.suites.declared import COUNTS_OPTIONS, SUITE_OPTIONS
from assay.llm.suites.tally import count_tally
from assay.llm.task import Call, LLMTask, Prepared
from assay.options import flags_named
from assay.results import Metric, MetricSet
from assay.uncertainty.intervals import attach, interval_from
from assay.uncertainty.tally import Key, Tally

if TYPE_CHECKING:
    from assay.llm.models.base import ChatModel

__all__ = [
    "Suite",
    "SuiteResult",
    "run_suite",
    "template",
    "resolve_answer_mode",
    "loglik_pick",
]


def resolve_answer_mode(requested: str | None, support: str | None, *, labels_only: bool) -> str:
    """The answer mode a run uses: the one asked for, else ``loglik`` when the model can
    score the suite's options (``support``: :func:`~assay.llm.models.base.loglik_support`)
    and ``generate`` when it cannot.

    Example:
        >>> resolve_answer_mode(None, "full", labels_only=False)
        'loglik'
        >>> resolve_answer_mode(None, "labels", labels_only=False)
        'generate'
        >>> resolve_answer_mode("generate", "full", labels_only=True)
        'generate'
    """
    if requested is not None:
        return requested
    ok = support == "full" or (support == "labels" and labels_only)
    return "loglik" if ok else "generate"


def loglik_pick(prepared: Prepared, text: str, mode: str) -> tuple[int, dict[str, Any]]:
    """The option a loglik reply picks, and what the parsed result keeps of it.

    ``loglik``: the highest log-probability (lm-eval's ``acc``); ``loglik_norm``: the
    highest log-probability per character of the continuation (``acc_norm``). Ties go to
    the first option. The kept facts: ``logprobs`` (per continuation, in the item's
    order) and ``bound: true`` when a chat endpoint's ``top_logprobs`` left an option
    out (its value is an upper bound).

    Example:
        >>> from assay.llm.models.base import OptionScore
        >>> p = Prepared(Item("q", ({"role": "user", "content": "?"},),
        ...                   {"loglik": {"continuations": ["ab", "abcdef"]}}))
        >>> t = LoglikResponse((OptionScore(-2.0, 1, 2, True), OptionScore(-3.0, 2, 6, False)))
        >>> loglik_pick(p, t.to_chat().text, "loglik")[0], loglik_pick(p, t.to_chat().text,
        ...     "loglik_norm")[0]
        (0, 1)
    """
    options = LoglikResponse.from_text(text).options
    conts = prepared.item.params[LOGLIK_PARAM]["continuations"]
    lp = np.array([o.logprob for o in options], dtype=np.float64)
    if mode == "loglik_norm":
        lp = lp / np.maximum(1, np.array([len(c) for c in conts], dtype=np.float64))
    kept: dict[str, Any] = {"logprobs": [o.logprob for o in options]}
    if any(o.bound for o in options):
        kept["bound"] = True
    return int(np.argmax(lp)), kept


#: What a suite run returns (the driver's :class:`~assay.llm.driver.LLMRun`).
SuiteResult = LLMRun


class CountsEvaluator(TalliedEvaluator):
    """A suite's evaluator of answer counts per scope (a CAT scope, a language): ``dataset``
    only names what is evaluated (evaluators of different datasets refuse to merge); ``ci``
    (with ``ci_method``, ``num_bootstrap``, ``seed``) puts an interval over each scope's
    items on its rates (:func:`assay.llm.suites.tally.count_tally`). A subclass starts its
    empty counts in :meth:`_start` and says which records a scope's counts give."""

    #: the records' parameter that names the scope, and the outcomes counted
    where: str
    width: int
    #: the rates that carry an interval, and Wilson's (numerator, denominator) outcome
    #: columns of those that are proportions
    kinds: tuple[str, ...]
    proportions: Mapping[str, tuple[list[int], list[int]]] = {}

    OPTIONS = COUNTS_OPTIONS

    def __init__(
        self,
        *,
        dataset: str | None = None,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
    ) -> None:
        self.dataset = dataset
        self.ci = interval_from(self.options)
        self._start()

    @abstractmethod
    def _start(self) -> None:
        """Set the empty counts."""

    @abstractmethod
    def scope_counts(self) -> tuple[np.ndarray, list[str]]:
        """The outcome counts (scopes, outcomes) of every scope, and the scopes' names."""

    @abstractmethod
    def scopes(self, *args: Any, **kwargs: Any) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The outcome code of each item ``add`` would take, its scopes (rows of scope
        indices, one per scope an item is in) and the scopes' names."""

    @staticmethod
    @abstractmethod
    def formulas(c: np.ndarray) -> Mapping[str, np.ndarray]:
        """The rates of outcome counts shaped (..., outcomes), NaN where undefined."""

    def _count_tally(self, row: np.ndarray, name: str) -> Tally:
        def key(kind: str) -> Key:
            return record_key(kind, {self.where: name})

        return count_tally(row, key, self.formulas, self.kinds, self.proportions)

    def tally(self) -> list[Tally]:
        """One tally per scope with answers: its items, by outcome."""
        c, names = self.scope_counts()
        return [self._count_tally(row, n) for row, n in zip(c, names) if int(row.sum()) > 0]

    def unit_tallies(self, *args: Any, **kwargs: Any) -> list[Tally]:
        """:meth:`tally` of the items ``args``, each item a unit in its scopes' tallies."""
        codes, rows, names = self.scopes(*args, **kwargs)
        out = []
        for j, name in enumerate(names):
            inside = (rows == j).any(axis=0)
            if inside.any():
                row = np.bincount(codes[inside], minlength=self.width)
                t = self._count_tally(row, name)
                out.append(replace(t, unit=codes[inside], ids=np.flatnonzero(inside)))
        return out

    def attach_intervals(self, records: Sequence[Metric]) -> None:
        """The intervals of ``ci`` on the defined rate records, in place."""
        if self.ci is not None:
            attach(records, self.tally(), self.ci, lambda m: record_key(m.type, m.parameters))


class Suite(LLMTask):
    """Data + prompt builder + answer parser + metrics (see the module docstring)."""

    #: evaluation kind in the store
    kind: str = "llm_suite"
    max_queries: int = 0
    seed: int = 1
    max_tokens: int = 16
    max_errors: int = 0
    #: the answer mode asked for (None: decided by the model, :func:`resolve_answer_mode`)
    answer_mode: str | None = None
    #: the answer mode of the run (known once the model is: :meth:`start`)
    mode: str = "generate"
    #: whether the loglik modes score single-token labels only (a chat endpoint can)
    labels_only: bool = False

    def setup(
        self, *, max_queries: int, seed: int, max_tokens: int, answer_mode: str | None = None
    ) -> None:
        """Check (:data:`~assay.llm.suites.declared.SUITE_OPTIONS`, errors naming the flags)
        and keep the options every suite has."""
        given = {"max_queries": max_queries, "seed": seed, "max_tokens": max_tokens}
        with flags_named(SUITE_OPTIONS):
            v = SUITE_OPTIONS.validate(given | {"answer_mode": answer_mode})
        self.answer_mode = v["answer_mode"]
        self.mode = self.answer_mode or "generate"
        self.max_queries, self.seed, self.max_tokens = v["max_queries"], v["seed"], v["max_tokens"]

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

    def start(self, model: ChatModel) -> None:
        """The answer mode of the run, from the model (refused if it cannot score options)."""
        support = loglik_support(model)
        self.mode = resolve_answer_mode(self.answer_mode, support, labels_only=self.labels_only)
        if self.mode != "generate":
            require_loglik(model, labels_only=self.labels_only, who=f"the {self.kind} suite")

    @property
    def loglik(self) -> bool:
        """Whether the run scores options (``loglik``, ``loglik_norm``)."""
        return self.mode != "generate"

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
    def items(self, calls: Sequence[Call]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """The evaluator's ``add`` arguments of ``calls``, one entry per item, and each
        item's columns (what ``by`` may name: :meth:`item_columns`)."""

    def feed(self, evaluator: Evaluator, calls: Sequence[Call]) -> None:
        """Add the parsed results of ``calls`` to ``evaluator``."""
        evaluator.add(**self.items(calls)[0])

    def follow_up(self, calls: Sequence[Call]) -> list[Prepared]:
        """Calls to make after the first round (default: none)."""
        return []

    def parameters(self) -> dict[str, Any]:
        """How the run was configured, stored with the evaluation."""
        return {
            "seed": self.seed,
            "max_queries": self.max_queries,
            "max_tokens": self.max_tokens,
            "answer_mode": self.mode,
        }

    def stored_parameters(self) -> dict[str, Any]:
        """:meth:`parameters` and ``max_errors``."""
        return {**self.parameters(), "max_errors": self.max_errors}

    def ci_seed(self) -> int:
        """The bootstrap's seed defaults to the suite's ``seed``."""
        return self.seed

    def score(self, calls: Sequence[Call]) -> MetricSet:
        """The metric records of ``calls`` through the evaluator, with the run's intervals
        and slices (:class:`~assay.llm.slicing.SlicedEvaluator`); none without calls."""
        if not calls:
            return MetricSet()
        base = self.evaluator()
        ci = self.ci.config() if self.ci is not None else {}
        ev = SlicedEvaluator(evaluator=type(base), config=base.config(), by=self.by, **ci)
        args, columns = self.items(calls)
        metrics = ev.add(columns, **args).compute()
        return MetricSet(
            Metric(m.type, m.value, {**m.parameters, "answer_mode": self.mode}) for m in metrics
        )


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
