"""Two long-form tables joined by uid on a Dask cluster, each partition a batch of whole datums.

Long-form input keeps a datum in two files (its ground truths in one, its scored predictions in
another), so a batch must hold every row of a datum from both. :func:`evaluate_joined` makes
those batches on the cluster: each side gets its row number (``_row``, file order), the sides
are renamed apart (``g:``/``p:``) and merged by uid (a Dask DataFrame outer merge, hash-
partitioned by uid, so all rows of a uid land in one partition); each partition is split back
into its two frames, rows in file order with each row once, and handed to
``add(ev, groundtruths, predictions)`` on a worker. The evaluators' states merge exactly, so
the records equal one ``add`` of the two whole files (``tests/dist/test_dist_long_form.py``,
on a real scheduler). A uid on one side only still reaches ``add`` (a datum without
predictions; a prediction without a ground truth, which ``add`` refuses as in process).

Example:
    >>> import pandas as pd, pathlib, tempfile
    >>> from assay.classification import ClassificationEvaluator
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"uid": [1, 2], "value": ["a", "b"]}).to_csv(d / "g.csv", index=False)
    >>> pd.DataFrame({"uid": [1, 1, 2, 2], "value": ["a", "b"] * 2,
    ...               "score": [0.9, 0.1, 0.4, 0.6]}).to_csv(d / "p.csv", index=False)
    >>> ev = evaluate_joined(ClassificationEvaluator(), d / "g.csv", d / "p.csv",
    ...                      add=lambda ev, g, p: ev.add(g, p), scheduler="sync")
    >>> ev.compute().get("Accuracy").value
    1.0
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from assay.dist.dask import evaluate_dask
from assay.dist.table import dask_frame
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator

__all__ = ["evaluate_joined"]

E = TypeVar("E", bound=Evaluator)
JoinedAdd = Callable[[Any, pd.DataFrame, pd.DataFrame], Any]


def _side(path: str | Path, prefix: str, on: str, batch_rows: int | None) -> Any:
    """One table as a Dask DataFrame of object columns, ``{prefix}name`` but ``on``, with
    its row number (file order) as ``{prefix}_row``."""
    frame = dask_frame(path, batch_rows=batch_rows)
    if on not in frame.columns:  # as the reader in process says it
        present = ", ".join(map(str, frame.columns))
        raise InvalidInputError(
            f"missing column (columns present: {present})", source=str(path), field=on
        )
    frame = frame.astype(object)  # a NaN from the outer merge keeps 1 as 1, not 1.0
    frame["_row"] = 1
    frame["_row"] = frame["_row"].cumsum()
    return frame.rename(columns={c: f"{prefix}{c}" for c in frame.columns if c != on})


def _split(frame: pd.DataFrame, prefix: str, on: str) -> pd.DataFrame:
    """One side of a joined partition: its rows once each, in file order, names restored."""
    row = f"{prefix}_row"
    cols = [c for c in frame.columns if c.startswith(prefix)]
    part = frame.loc[frame[row].notna(), [on, *cols]].drop_duplicates(subset=row)
    part = part.sort_values(row, kind="stable").drop(columns=row)
    part = part.rename(columns={c: c[len(prefix) :] for c in cols}).reset_index(drop=True)
    return part.infer_objects()


def _add_joined(ev: Any, frame: pd.DataFrame, add: JoinedAdd, on: str) -> None:
    if len(frame):
        add(ev, _split(frame, "g:", on), _split(frame, "p:", on))


def evaluate_joined(
    evaluator: E,
    groundtruths: str | Path,
    predictions: str | Path,
    *,
    add: JoinedAdd,
    on: str = "uid",
    scheduler: Any = None,
    batch_rows: int | None = None,
    split_every: int = 8,
) -> E:
    """Fold two long-form tables joined by ``on`` into ``evaluator`` (in place) on the Dask
    cluster at ``scheduler`` (see the module docstring); ``add(ev, groundtruths,
    predictions)`` adds one batch of whole datums and must pickle."""
    import dask

    with dask.config.set({"dataframe.convert-string": False}):
        g = _side(groundtruths, "g:", on, batch_rows)
        p = _side(predictions, "p:", on, batch_rows)
        joined = g.merge(p, on=on, how="outer", shuffle_method="tasks")
    return evaluate_dask(
        evaluator,
        joined,
        add=partial(_add_joined, add=add, on=on),
        split_every=split_every,
        scheduler=scheduler,
    )
