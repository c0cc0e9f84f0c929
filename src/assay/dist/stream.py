"""Out of core on one machine: batches (a Parquet dataset's row groups) added one by one.

:func:`evaluate_stream` adds batches to an evaluator in turn, so peak memory is one batch
plus the evaluator's state (``docs/dist.md`` lists the state size per evaluator); with
:func:`assay.io.parquet.iter_parquet` a Parquet file, directory or glob is read one row
group at a time, without Dask.

Example:
    >>> import pandas as pd, pathlib, tempfile
    >>> from assay.io.parquet import iter_parquet
    >>> from assay.scoring import ScoringEvaluator
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> df = pd.DataFrame({"h": [1, 2, 3, 4] * 5, "m": [1.0, 2.5, 3.0, 3.5] * 5})
    >>> df.to_parquet(d / "part-0.parquet", row_group_size=6)
    >>> ev = evaluate_stream(ScoringEvaluator(human="h", system="m"), iter_parquet(d))
    >>> one = ScoringEvaluator(human="h", system="m").add(df)
    >>> ev.compute().to_json() == one.compute().to_json()
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from assay.dist.reduce import AddFn
from assay.evaluator import Evaluator

__all__ = ["evaluate_stream"]

E = TypeVar("E", bound=Evaluator)


def evaluate_stream(evaluator: E, batches: Iterable[Any], *, add: AddFn | None = None) -> E:
    """Add each batch to ``evaluator`` in turn (in place) and return it.

    ``add(ev, batch)`` adds one batch (default ``ev.add(batch)``). Memory holds one batch at a
    time besides the evaluator's state.
    """
    for batch in batches:
        if add is None:
            evaluator.add(batch)
        else:
            add(evaluator, batch)
    return evaluator
