"""What an LLM evaluation declares: :class:`LLMTask`, and the calls it is given back.

A task (a bias suite, a set of judge metrics, pairwise judging, and the next one) says:

1. **items**: :meth:`LLMTask.stage` gives the calls of stage ``n`` as :class:`Prepared`
   (a runner :class:`~assay.llm.items.Item` plus what scoring needs to know about it).
   Stage 0 comes from the data; a later stage may be built from the parsed results of the
   earlier ones (the judge's statements -> verdicts, the counterfactual prompts of LLM
   fairness); an empty list ends the run.
2. **run**: the driver (:func:`assay.llm.evaluate`) runs them on the shared runner.
3. **parse**: :meth:`LLMTask.parse` turns a raw reply into a result, or an
   :class:`Invalid` with the reason; a task with ``reasks > 0`` has an invalid reply
   re-asked with the reason (:meth:`LLMTask.reask_prompt`) up to that many times, after
   which it is kept invalid with the reason and the raw reply.
4. **score**: :meth:`LLMTask.score` computes the metric records from the calls (through
   the task's :class:`~assay.evaluator.Evaluator`), the same whether the answers came from
   a model or the cache.

Example:
    >>> from assay.llm.items import Item
    >>> class Echo(LLMTask):
    ...     kind, dataset = "echo", "toy"
    ...     def stage(self, n, calls):
    ...         return [Prepared(Item.from_prompt("q", "hi"))] if n == 0 else []
    ...     def score(self, calls):
    ...         from assay.results import Metric, MetricSet
    ...         return MetricSet([Metric("Answered", float(len(calls)))])
    >>> [p.item.id for p in Echo().stage(0, [])]
    ['q']
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.llm.items import Item, Record

if TYPE_CHECKING:
    from assay.llm.models.base import ChatModel
    from assay.llm.options import RunOptions
    from assay.results import MetricSet

__all__ = ["LLMTask", "Prepared", "Call", "Invalid", "final_calls"]


@dataclass(frozen=True)
class Prepared:
    """One call a task will make: the runner item and what scoring needs to know about it."""

    item: Item
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """A reply that does not parse, and why (the reason goes into the re-ask)."""

    reason: str


@dataclass(frozen=True)
class Call:
    """One call made: the item sent, the runner's record, the parse outcome.

    Attributes:
        item: the item sent (for a re-ask: the conversation so far, id ``KEY#reaskN``).
        record: the runner's record (ok text, or the error).
        parsed: the parsed result as plain JSON (``None`` on a call error or an invalid reply).
        info: the :class:`Prepared` item's facts for scoring.
        invalid: why the reply was refused, when it was.
        key: the prepared item's id (the same for its re-asks).
        final: True for the last call of its prepared item (no re-ask follows).
        value: the parsed result as the task's parser gave it (e.g. a pydantic model).
    """

    item: Item
    record: Record
    parsed: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    invalid: str | None = None
    key: str = ""
    final: bool = True
    value: Any = field(default=None, repr=False, compare=False)

    @property
    def task(self) -> str:
        """The prepared item's id (the judge's task key)."""
        return self.key or self.item.id


class LLMTask(ABC):
    """An LLM evaluation declared as stages (see the module docstring).

    Attributes:
        kind: the evaluation kind in the store (``llm_cat``, ``text``, ``pairwise``, ...).
        reasks: re-asks of an invalid reply (0: invalid replies are kept at once).
        can_structure: whether the task has a reply shape to send as a constraint.
        structured: the ``--structured`` mode (``auto``, ``on``, ``off``).
        constraint: the constraint kind the run's calls carry (``grammar``,
            ``json_schema``; see :mod:`assay.llm.constrain`), ``None`` when unconstrained.
    """

    kind: str = "llm"
    reasks: int = 0
    can_reask: bool = False
    structured: str = "off"
    can_structure: bool = False
    constraint: str | None = None
    #: the interval options of the run (``None``: none)
    #: (:class:`~assay.uncertainty.intervals.CIOptions`)
    ci: Any = None
    #: the item columns every headline metric is sliced by (:mod:`assay.llm.slicing`)
    by: tuple[str, ...] = ()

    @property
    @abstractmethod
    def dataset(self) -> str:
        """The dataset name the run is stored under."""

    @abstractmethod
    def stage(self, n: int, calls: Sequence[Call]) -> list[Prepared]:
        """The calls of stage ``n`` (``calls``: every call of the earlier stages); [] ends."""

    @abstractmethod
    def score(self, calls: Sequence[Call]) -> MetricSet:
        """The metric records of the calls made (through the task's evaluator)."""

    def start(self, model: ChatModel) -> None:
        """Called with the model once it is loaded, before the first call (default: nothing)."""
        return None

    def parse(self, prepared: Prepared, text: str) -> Any:
        """One raw reply -> a parsed result or :class:`Invalid` (default: the text)."""
        return text

    def item_info(self, call: Call) -> dict[str, Any] | None:
        """The facts of ``call``'s item to store with its row (plain JSON), so a stored run
        can be scored again without the data (default: none kept)."""
        return None

    def reask_prompt(self, reason: str) -> str:
        """The user message that re-asks after an invalid reply."""
        return f"Your reply was not valid: {reason}. Answer again in the required format."

    def configure(self, options: RunOptions) -> None:
        """Take the run options a task honours (``max_tokens``, ``structured``, ``reasks``).

        The default refuses ``--json-mode`` and ``--judge-retries`` for a task that has no
        reply schema or never re-asks; a task with a reply-length cap overrides this.
        """
        if options.structured == "on" and not self.can_structure:
            raise InvalidInputError(
                f"the {self.kind} evaluation has no reply schema", source="--structured"
            )
        if options.reasks is not None:
            if not self.can_reask:
                raise InvalidInputError(
                    f"the {self.kind} evaluation does not re-ask", source="--judge-retries"
                )
            self.reasks = options.reasks
        self.structured = str(options.structured) if self.can_structure else "off"
        self.constraint = "json_schema" if self.structured == "on" else None
        if options.max_tokens is not None:
            raise InvalidInputError(
                f"the {self.kind} evaluation takes no reply cap", source="--max-tokens"
            )
        self.configure_scoring(options)

    def configure_scoring(self, options: RunOptions) -> None:
        """Take the intervals (``ci``, ..., the seed defaulting to :meth:`ci_seed`; with
        ``cluster``, an item column as ``by``) and the slices (``by``: refused, before any
        call, unless every column is one of :meth:`item_columns`) the options give; a task
        keeps its own where they give none. Every item must have a ``cluster`` value
        (:meth:`item_values`; refused before any call, naming the first without one)."""
        from assay.llm.slicing import check_by, check_clusters

        ci = options.intervals(self.ci_seed())
        if ci is not None:
            self.ci = ci
        if options.by:
            check_by(options.by, self.item_columns(), f"{self.kind} items")
            self.by = tuple(options.by)
        if options.cluster is not None:
            check_by([options.cluster], self.item_columns(), f"{self.kind} items", "--cluster")
            check_clusters(options.cluster, self.item_values(options.cluster))

    def scored_columns(self) -> tuple[str, ...]:
        """The item columns scoring keeps: the ``by`` columns and the ``cluster`` one."""
        cluster = getattr(self.ci, "cluster", None)
        return tuple(dict.fromkeys([*self.by, *([cluster] if cluster else [])]))

    def ci_seed(self) -> int:
        """The bootstrap's seed when the options give none (default 0)."""
        return 0

    def item_columns(self) -> list[str]:
        """The item columns ``by`` may name (default: none)."""
        return []

    def item_values(self, column: str) -> list[tuple[str, Any]]:
        """Each item the run will score, named as the user finds it in the data (``line 7``,
        ``uid d3``), with its value of the item column ``column`` (default: none)."""
        return []

    def constrain(self, model: ChatModel) -> bool:
        """Choose the constraint for ``model`` (:func:`assay.llm.constrain.resolve`) once it
        is loaded; True if it changed (the driver then rebuilds stage 0)."""
        if not self.can_structure or self.structured == "off":
            return False
        from assay.llm.constrain import resolve

        before, self.constraint = self.constraint, resolve(model, self.structured)
        return self.constraint != before

    def parameters(self) -> dict[str, Any]:
        """How the task was configured."""
        return {}

    def stored_parameters(self) -> dict[str, Any]:
        """The parameters stored with the evaluation (:meth:`parameters`, plus
        ``constraint`` when the replies were constrained)."""
        params = self.parameters()
        return {**params, "constraint": self.constraint} if self.constraint else params


def final_calls(calls: Sequence[Call]) -> dict[str, Call]:
    """The last call of each prepared item, by its key.

    Example:
        >>> from assay.llm.items import Item, Record
        >>> it = Item.from_prompt("k", "x")
        >>> c1 = Call(it, Record("k", True, "a"), key="k", final=False)
        >>> c2 = Call(it, Record("k#reask1", True, "b"), key="k")
        >>> final_calls([c1, c2])["k"].record.text
        'b'
    """
    return {c.task: c for c in calls if c.final}
