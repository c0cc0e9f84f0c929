"""The reduction behind every scale-out path: partitions -> states -> merged state.

Any :class:`~assay.evaluator.Evaluator` is reduced the same way, through its contract only:

1. **leaf**: a fresh evaluator configured like the template gets one partition through
   ``add`` and returns its :meth:`~assay.evaluator.Evaluator.state` (plain numpy arrays,
   cheap to pickle), or ``None`` when the partition added nothing;
2. **merge**: a group of up to ``split_every`` neighbouring states is rebuilt with
   ``from_state``, merged left to right with ``merge`` and returned as one state;
3. **root**: the last state is merged into the template on the caller's side, which then
   computes.

Groups are always *neighbours in partition order*, merged left to right, so an evaluator
whose state is the data itself (classification, detection, score statistics, text) ends
with its datums in exactly the order of a single ``add`` of all the data: the records are
the same, to the last bit. An evaluator whose state is sums (scoring, weighted fairness)
merges exact integers exactly; float sums are regrouped, which changes the last bits only
when the additions round (see ``docs/dist.md``).

Nothing here imports Dask: :mod:`assay.dist.dask` builds this tree as a task graph; the
out-of-core path (:mod:`assay.dist.stream`) needs no tree, it adds batch after batch to one
evaluator.

Example:
    >>> from assay.scoring import ScoringEvaluator
    >>> import pandas as pd
    >>> parts = [pd.DataFrame({"h": [1, 2], "m": [1.5, 2.0]}), pd.DataFrame({"h": [3], "m": [2.5]})]
    >>> t = Template.of(ScoringEvaluator(human="h", system="m"))
    >>> states = [leaf_state(t, p, None) for p in parts]
    >>> merged = t.cls.from_state(tree_reduce(states, lambda g: merge_states(t, g), 2))
    >>> one = ScoringEvaluator(human="h", system="m").add(pd.concat(parts))
    >>> merged.compute().to_json() == one.compute().to_json()
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.results import to_jsonable

__all__ = [
    "AddFn",
    "State",
    "Template",
    "finish",
    "leaf_state",
    "merge_states",
    "tree_reduce",
]

#: An evaluator's state: plain numpy arrays (see :meth:`assay.evaluator.Evaluator.state`).
State = dict[str, np.ndarray]
#: How one partition is added: ``add(evaluator, partition)``; ``None`` means ``ev.add(part)``.
AddFn = Callable[[Any, Any], Any]

T = TypeVar("T")
E = TypeVar("E", bound=Evaluator)


@dataclass(frozen=True)
class Template:
    """What the workers need to build evaluators: the class and its configuration as JSON
    text (plain data: the evaluator object itself never travels, only states do)."""

    cls: type[Evaluator]
    config: str

    @classmethod
    def of(cls, evaluator: Evaluator) -> Template:
        """The template of an evaluator (its class and configuration)."""
        return cls(type(evaluator), json.dumps(to_jsonable(dict(evaluator.config()))))

    def fresh(self) -> Evaluator:
        """A new, empty evaluator (as ``from_state`` builds one: ``cls(**config)``)."""
        return self.cls(**json.loads(self.config))


def leaf_state(template: Template, partition: Any, add: AddFn | None) -> State | None:
    """Add one partition to a fresh evaluator; its state, or ``None`` if the partition added
    nothing (an empty partition)."""
    if _is_empty(partition):  # a filtered frame often has empty partitions: nothing to add
        return None
    ev = template.fresh()
    if add is None:
        ev.add(partition)
    else:
        add(ev, partition)
    return None if ev.is_empty else ev.state()


def _is_empty(partition: Any) -> bool:
    try:
        return len(partition) == 0
    except TypeError:  # no length: let add() decide
        return False


def merge_states(template: Template, states: Sequence[State | None]) -> State | None:
    """The states merged left to right (``None`` entries skipped); ``None`` if all are."""
    present = [s for s in states if s is not None]
    if len(present) <= 1:
        return present[0] if present else None
    ev = template.cls.from_state(present[0])
    for s in present[1:]:
        ev.merge(template.cls.from_state(s))
    return ev.state()


def tree_reduce(items: Sequence[T], combine: Callable[[list[T]], T], split_every: int) -> T:
    """Combine neighbouring groups of ``split_every`` items, level by level, down to one.

    The order of the items is kept: each group is a run of neighbours, and the groups of a
    level are the items of the next in the same order.

    Example:
        >>> tree_reduce(list("abcde"), lambda g: "(" + "".join(g) + ")", 2)
        '(((ab)(cd))e)'
    """
    if split_every < 2:
        raise InvalidInputError(f"must be >= 2, got {split_every!r}", source="split_every")
    if not items:
        raise InvalidInputError("no partitions to reduce", source="data")
    level = list(items)
    while len(level) > 1:
        groups = [level[i : i + split_every] for i in range(0, len(level), split_every)]
        level = [g[0] if len(g) == 1 else combine(g) for g in groups]
    return level[0]


def finish(evaluator: E, state: State | None) -> E:
    """Merge the reduced state into ``evaluator`` (in place); refuse when nothing was added."""
    if state is None:
        raise InvalidInputError(
            "no data was added: every partition was empty", source=type(evaluator).__name__
        )
    if not isinstance(state, Mapping):  # pragma: no cover - a scheduler returned garbage
        raise TypeError(f"expected a state mapping, got {type(state).__name__}")
    return evaluator.merge(type(evaluator).from_state(state))
