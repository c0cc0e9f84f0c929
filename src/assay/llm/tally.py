"""Every resample's records at once: the LLM suites' evaluators as counts times formulas.

A suite evaluator's state is a vector of counts that items add to (CAT: outcomes per
scope; the language exams: outcomes per language; LLM fairness: confusion cells, response
and counterfactual counts). Its :meth:`TalliedEvaluator.tally` of some items gives each
item's contribution to that vector (``cells``, items x counts) and the point estimate's own
formulas on a whole array of count vectors (``values``: one array per record, NaN exactly
where the record would be ``None``). A chunk of resamples that takes the items ``w`` times
(resamples x items, the collapsed rows' draws or their clusters' weighted draws) then has
the counts ``w @ cells`` and its records' values in one call: no evaluator runs per
resample. :class:`~assay.llm.slicing.SlicedEvaluator` serves the whole set's cluster
interval, every slice's and the gaps' from it.

Example:
    >>> from assay.llm.suites.language import LanguageEvaluator
    >>> t = LanguageEvaluator().tally(["en", "en", "es"], ["correct", "invalid", "correct"])
    >>> key = ("Accuracy", None, "all", None, None, None, None, None, None)
    >>> t.replicates(np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 1.0]]), [key]).ravel().tolist()
    [0.6666666666666666, 0.3333333333333333]
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.evaluator import Evaluator

__all__ = ["WHERE", "Tally", "TalliedEvaluator", "record_key", "one_hot"]

F64 = NDArray[np.float64]

#: What identifies an LLM record within a slice (beside its type): its gap is to the whole
#: set's record with the same values of these parameters.
WHERE = (
    "scope",
    "language",
    "group_column",
    "group",
    "privileged",
    "counterfactual",
    "aggregate",
    "prompt_version",
)

#: A record's type, its identifying parameters and its values over a chunk of resamples.
Values = list[tuple[str, Mapping[str, Any], F64]]


def record_key(kind: str, parameters: Mapping[str, Any]) -> tuple[Any, ...]:
    """The record's type and its :data:`WHERE` parameters (None where absent).

    Example:
        >>> record_key("LMS", {"scope": "gender", "n": 3})[:2]
        ('LMS', 'gender')
    """
    return (kind, *(parameters.get(k) for k in WHERE))


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


@dataclass(frozen=True)
class Tally:
    """``cells`` (items x counts: each item's contribution to the evaluator's counts) and
    ``values`` (counts (b, counts) -> the headline records' values, each (b,))."""

    cells: F64
    values: Callable[[F64], Values]

    @cached_property
    def _rows(self) -> Any:
        """``cells`` transposed and sparse (an item adds to a few counts)."""
        from scipy import sparse

        return sparse.csr_matrix(self.cells.T)

    def replicates(self, w: F64, keys: Sequence[tuple[Any, ...]]) -> F64:
        """The values (b, len(keys)) of the records ``keys`` (:func:`record_key`) when the
        items are taken ``w`` (b, items) times; NaN where undefined or absent."""
        out = np.full((w.shape[0], len(keys)), np.nan)
        index = {k: j for j, k in enumerate(keys)}
        with np.errstate(invalid="ignore", divide="ignore"):
            counts = np.asarray(self._rows @ np.ascontiguousarray(w.T)).T
            for kind, params, v in self.values(counts):
                j = index.get(record_key(kind, params))
                if j is not None:
                    out[:, j] = v
        return out


class TalliedEvaluator(Evaluator):
    """An evaluator whose state is counts that items add to (see the module docstring)."""

    @abstractmethod
    def tally(self, *args: Any, **kwargs: Any) -> Tally:
        """The :class:`Tally` of the items ``add`` would take (checked as ``add`` checks)."""
