"""Scale-out: any evaluator over Dask partitions, or a Parquet dataset streamed on one machine.

Every evaluator has ``add``, in-place ``merge``, ``compute`` and ``state()`` /
``from_state()`` as plain numpy arrays (:mod:`assay.evaluator`); that is all a distributed
reduction needs, so one function serves every domain:

* :func:`evaluate_dask`: partitions -> ``add`` on the workers -> a tree of ``merge`` over
  their states -> the evaluator on the caller, which computes. Needs ``assay[dist]``.
* :func:`evaluate_stream` + :func:`iter_parquet`: a Parquet file, directory or glob read one
  row group at a time, so memory is bounded by the row group plus the evaluator's state.
* :func:`evaluate_table`: the one door the CLI uses: a file, a Parquet dataset, or a Dask
  scheduler address.

The records equal those of one ``add`` of all the data (``docs/dist.md`` says what each
evaluator merges and how large its state is).

Example:
    >>> import dask.bag as db
    >>> from assay.dist import evaluate_dask
    >>> from assay.text import TextEvaluator
    >>> pairs = db.from_sequence([("the cat sat", "the cat sat down"), ("a dog", "a dog ran")],
    ...                          npartitions=2)
    >>> add = lambda ev, part: ev.add([p for p, _ in part], [r for _, r in part])
    >>> ev = evaluate_dask(TextEvaluator(), pairs, add=add, scheduler="sync")
    >>> one = TextEvaluator().add(["the cat sat", "a dog"], ["the cat sat down", "a dog ran"])
    >>> ev.compute().to_json() == one.compute().to_json()
    True
"""

from __future__ import annotations

from assay._lazy import lazy_exports

_EXPORTS = {
    "evaluate_dask": "assay.dist.dask",
    "evaluate_stream": "assay.dist.stream",
    "evaluate_table": "assay.dist.table",
    "evaluate_joined": "assay.dist.join",
    "dask_frame": "assay.dist.table",
    "tree_reduce": "assay.dist.reduce",
    "iter_parquet": "assay.io.parquet",
    "iter_table": "assay.io.tables",
    "is_parquet_dataset": "assay.io.parquet",
    "parquet_files": "assay.io.parquet",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
