"""The suites' tallies: what the uncertainty engine resamples (:mod:`assay.uncertainty`).

A suite evaluator's state is a vector of counts that items add to (CAT: outcomes per scope;
the language exams: outcomes per language; LLM fairness: confusion cells, response and
counterfactual counts). Two tallies come of it, both :class:`~assay.uncertainty.tally.Tally`:

* :func:`item_tally`, over items: each item's contribution to the counts (``cells``, items
  x counts) and the point estimate's own formulas on a whole chunk of count vectors, keyed by
  the records' :func:`~assay.llm.slicing.record_key`. A chunk of resamples that takes the
  items ``w`` times (resamples x items) has the counts ``w @ cells`` and its records' values
  in one call: no evaluator runs per resample. :class:`~assay.llm.slicing.SlicedEvaluator`
  draws the cluster bootstrap and the slices' gaps from it.
* :func:`count_tally`, over one scope's items (a CAT scope, a language): resampling them and
  counting them per outcome is a multinomial draw over the outcomes with probabilities
  count / n, so the outcome counts are the rows and their multiplicities; Wilson's interval
  is the closed form of the rates that are proportions (``Accuracy``, ``AccuracyOnValid``,
  ``FormatErrorRate``). A counts evaluator's ``tally()`` gives one per scope with items.

Example:
    >>> import numpy as np
    >>> from assay.llm.suites.language import LanguageEvaluator
    >>> t = LanguageEvaluator().item_tally(["en", "en", "es"], ["correct", "invalid", "correct"])
    >>> j = t.keys.index(("Accuracy", None, "all", None, None, None, None, None, None))
    >>> t.values(np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 1.0]]))[:, j].tolist()
    [0.6666666666666666, 0.3333333333333333]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.llm.slicing import record_key
from assay.uncertainty.closed_form import wilson
from assay.uncertainty.tally import Key, Tally

__all__ = ["count_tally", "item_tally", "one_hot"]

F64 = NDArray[np.float64]
#: The suite's formulas: counts (b, outcomes) -> {metric: (b,) values}.
Formulas = Callable[[F64], Mapping[str, F64]]
#: Per metric: (numerator, denominator) outcome columns of a proportion, for Wilson.
Proportions = Mapping[str, tuple[list[int], list[int]]]


def one_hot(columns: Sequence[NDArray[np.int64]], width: int) -> F64:
    """Items x ``width`` cells: a 1 in each of the given columns of every item (an item's
    columns are distinct).

    Example:
        >>> one_hot([np.array([0, 2]), np.array([1, 1])], 3).tolist()
        [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]
    """
    n = columns[0].shape[0] if columns else 0
    out = np.zeros((n, width))
    for c in columns:
        out[np.arange(n), c] += 1
    return out


def item_tally(
    cells: F64, records: Sequence[tuple[str, Mapping[str, Any]]], formulas: Callable[[F64], F64]
) -> Tally:
    """The tally over items (each its own row, named by its position) of the ``records``
    (type and parameters; keys :func:`~assay.llm.slicing.record_key`): ``formulas`` maps
    counts (b, cells) to their values (b, len(records)), NaN where a record is ``None``."""
    from scipy import sparse

    rows = sparse.csr_matrix(cells.T)  # an item adds to a few counts

    def values(w: F64) -> F64:
        with np.errstate(invalid="ignore", divide="ignore"):
            return formulas(np.asarray(rows @ np.ascontiguousarray(w.T)).T)

    n = cells.shape[0]
    keys = tuple(record_key(kind, params) for kind, params in records)
    return Tally(keys, values, np.ones(n, np.int64), ids=np.arange(n))


def count_tally(
    row: NDArray[np.int64],
    key: Callable[[str], Key],
    formulas: Formulas,
    kinds: Sequence[str],
    proportions: Proportions | None = None,
) -> Tally:
    """The tally of one scope's records ``kinds`` (keyed ``key(kind)``): its outcome counts
    ``row`` are the rows' multiplicities, and the proportions have Wilson's interval as a
    closed form."""
    keys: tuple[Key, ...] = tuple(key(kind) for kind in kinds)

    def values(w: F64) -> F64:
        found = formulas(w)
        return np.stack([found[k] for k in kinds], axis=1)

    def by_wilson(level: float) -> dict[Key, tuple[float, float]]:
        out = {}
        for kind, (num, den) in (proportions or {}).items():
            lo, hi = wilson(float(row[num].sum()), float(row[den].sum()), level)
            out[key(kind)] = (float(lo), float(hi))
        return out

    return Tally(keys, values, np.asarray(row, np.int64), closed={"wilson": by_wilson})
