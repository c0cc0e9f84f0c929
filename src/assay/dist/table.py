"""One door from a table on disk to an evaluator: in process (streamed) or on a Dask cluster.

:func:`evaluate_table` is what every CLI command that reads a table calls:

* ``scheduler=None`` (the CLI's default, "in-process"): the table is read in batches by
  :func:`assay.io.tables.iter_table`: a Parquet file, directory or glob one row group at a
  time (memory bounded by the row group plus the evaluator's state), any other file whole;
* ``scheduler="tcp://host:port"`` (an :class:`~assay.dist.dask.Address` carries its time
  limit; or a ``Client``, or ``"threads"``/``"sync"``): a Parquet
  dataset becomes a Dask DataFrame (``dask.dataframe.read_parquet`` on the dataset's
  files in path order), another file a Dask DataFrame of ``batch_rows``-row partitions, and
  :func:`assay.dist.dask.evaluate_dask` runs the reduction on the cluster.

Both give the records of one ``add`` of the whole table (``docs/dist.md``).

Example:
    >>> import pandas as pd, pathlib, tempfile
    >>> from assay.scoring import ScoringEvaluator
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"h": [1, 2, 3, 4] * 5, "m": [1.0, 2.5, 3.0, 3.5] * 5}).to_parquet(
    ...     d / "a.parquet", row_group_size=8)
    >>> a = evaluate_table(ScoringEvaluator(human="h", system="m"), d).compute()
    >>> b = evaluate_table(ScoringEvaluator(human="h", system="m"), d, scheduler="sync").compute()
    >>> a.to_json() == b.to_json()
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from assay.dist.reduce import AddFn
from assay.dist.stream import evaluate_stream
from assay.evaluator import Evaluator
from assay.io.parquet import is_parquet_dataset, read_row_group, row_groups, schema_frame
from assay.io.tables import iter_table, read_table

__all__ = ["evaluate_table", "dask_frame"]

E = TypeVar("E", bound=Evaluator)

#: Rows per partition (or batch) when a non-Parquet file is split.
DEFAULT_BATCH_ROWS = 1_000_000


def dask_frame(
    path: str | Path, *, columns: list[str] | None = None, batch_rows: int | None = None
) -> Any:
    """A Dask DataFrame of a table: a Parquet dataset lazily, partitions in file order; any
    other file read here and cut into ``batch_rows``-row partitions."""
    import dask
    import dask.dataframe as dd

    # Text columns stay object columns, as pandas reads them, so a partition is the same
    # frame the in-process path sees.
    with dask.config.set({"dataframe.convert-string": False}):
        if is_parquet_dataset(path):
            # one partition per row group, read by assay's own reader on the workers: the
            # same frames, and the same errors naming the file, as in process
            groups = row_groups(path, columns)
            meta = schema_frame(path)
            meta = meta if columns is None else meta[list(columns)]
            parts = [dask.delayed(read_row_group)(f, i, columns) for f, i in groups]
            return dd.from_delayed(parts, meta=meta, verify_meta=False)
        df = read_table(path)
        if columns is not None:
            df = df[list(columns)]
        return dd.from_pandas(df, chunksize=batch_rows or DEFAULT_BATCH_ROWS, sort=False)


def evaluate_table(
    evaluator: E,
    path: str | Path,
    *,
    add: AddFn | None = None,
    columns: list[str] | None = None,
    scheduler: Any = None,
    batch_rows: int | None = None,
    split_every: int = 8,
) -> E:
    """Fold the table at ``path`` into ``evaluator`` (in place) and return it.

    Args:
        evaluator: any evaluator; with a scheduler, the template of the workers' evaluators.
        path: a JSONL, CSV or Parquet file, or a Parquet directory or glob.
        add: ``add(ev, frame)`` adds one batch (default ``ev.add(frame)``).
        columns: read only these columns.
        scheduler: ``None`` streams in this process; otherwise a Dask scheduler (see
            :func:`assay.dist.dask.evaluate_dask`), e.g. ``"tcp://10.0.0.5:8786"``.
        batch_rows: cut batches (row groups, or a non-Parquet file) to this many rows.
        split_every: fan-in of the Dask merge tree.
    """
    if scheduler is None:
        return evaluate_stream(
            evaluator, iter_table(path, columns=columns, batch_rows=batch_rows), add=add
        )
    from assay.dist.dask import evaluate_dask

    from assay.dist.dask import check_address

    if isinstance(scheduler, str) and "://" in scheduler:
        check_address(scheduler)  # before any file is read
    frame = dask_frame(path, columns=columns, batch_rows=batch_rows)
    return evaluate_dask(evaluator, frame, add=add, split_every=split_every, scheduler=scheduler)
