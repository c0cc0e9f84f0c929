"""Run any evaluator over a Dask DataFrame or bag: the same records, a bigger engine.

The graph is the reduction of :mod:`assay.dist.reduce`: one task per partition adds it to a
fresh evaluator on a worker and returns the evaluator's ``state()``; neighbouring states
are merged ``split_every`` at a time on the workers; only the last state travels to the
caller, which merges it into the evaluator it was given and can then ``compute()``.

What travels between processes is each evaluator's state (plain numpy arrays), so its
size is the evaluator's state size (``docs/dist.md`` lists it per evaluator), never the
partitions themselves.

Example:
    >>> import dask.dataframe as dd, pandas as pd
    >>> from assay.scoring import ScoringEvaluator
    >>> df = pd.DataFrame({"h": [1, 2, 3, 4] * 5, "m": [1.0, 2.5, 3.0, 3.5] * 5})
    >>> ddf = dd.from_pandas(df, npartitions=4)
    >>> ev = evaluate_dask(ScoringEvaluator(human="h", system="m"), ddf, scheduler="sync")
    >>> one = ScoringEvaluator(human="h", system="m").add(df)
    >>> ev.compute().to_json() == one.compute().to_json()
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from assay.dist.reduce import (
    AddFn,
    State,
    Template,
    finish,
    leaf_state,
    merge_states,
    tree_reduce,
)
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator

__all__ = ["evaluate_dask", "connect"]

E = TypeVar("E", bound=Evaluator)


def _partitions(data: Any) -> list[Any]:
    """The delayed partitions of a Dask DataFrame, Series, bag or array, in order."""
    to_delayed = getattr(data, "to_delayed", None)
    if to_delayed is None:
        raise InvalidInputError(
            f"expected a Dask DataFrame or bag, got {type(data).__name__}", source="data"
        )
    parts = to_delayed()
    if hasattr(parts, "ravel"):  # a Dask array gives an array of blocks
        parts = list(parts.ravel())
    return list(parts)


def evaluate_dask(
    evaluator: E,
    data: Any,
    *,
    add: AddFn | None = None,
    split_every: int = 8,
    scheduler: Any = None,
) -> E:
    """Fold every partition of ``data`` into ``evaluator`` (in place) and return it.

    Args:
        evaluator: any :class:`~assay.evaluator.Evaluator`; it serves as the template
            (class and configuration) of the workers' evaluators and receives the result.
        data: a Dask DataFrame (or Series, or bag); each partition is one batch.
        add: ``add(ev, partition)`` adds one partition (default ``ev.add(partition)``),
            e.g. ``lambda ev, df: ev.add_arrays(df.y, df.score, labels=[0, 1])``. It runs on
            the workers, so it must pickle (module-level functions and lambdas do).
        split_every: how many states one merge task combines (the tree's fan-in).
        scheduler: as ``dask.compute``'s: ``None`` (the active ``Client``, else Dask's
            default), ``"sync"``, ``"threads"``, ``"processes"``, a ``Client``, or a
            scheduler address ``"tcp://host:port"`` (connected for this call).

    Returns:
        ``evaluator``, holding the data of every partition, in partition order.
    """
    import dask

    template = Template.of(evaluator)
    leaves = [dask.delayed(leaf_state)(template, p, add) for p in _partitions(data)]
    root = tree_reduce(
        leaves, lambda group: dask.delayed(merge_states)(template, group), split_every
    )
    with connect(scheduler) as sched:
        (state,) = dask.compute(root, scheduler=sched)
    return finish(evaluator, _as_state(state))


def _as_state(state: Any) -> State | None:
    return None if state is None else dict(state)


@contextmanager
def connect(scheduler: Any) -> Iterator[Any]:
    """A scheduler for ``dask.compute``: an address string connects a ``Client`` for the
    duration of the block; anything else passes through."""
    if isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        try:
            client = Client(scheduler, timeout="10s", set_as_default=False)
        except OSError as e:
            raise InvalidInputError(
                f"cannot connect to the Dask scheduler: {e}", source=scheduler
            ) from None
        with client:
            yield client
        return
    yield scheduler
