"""Slices of pairwise analysis: every win rate again per subgroup of the questions.

``by=["category"]`` names question-level columns of the judged comparisons (``task``, or a
column of the input table carried along, such as a topic). A question's comparisons all have
the same value (a question with two values is refused); the questions without one (an empty
cell) are the slice ``None`` (``null``), listed last. Each slice's records are the rate
records and length-controlled win rates of the comparisons of its questions analysed alone
(:func:`slice_records`), in the order of the whole set's, with ``slice_column``, ``slice``
(the value as text), ``n`` (the slice's questions) and ``gap``
(:func:`assay.uncertainty.slices.annotate`). A record of the whole set that the slice cannot
define (a task or model absent from it) is ``null`` with the reason. No model is called:
slices are computed from the stored comparisons.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"index": ["q1", "q1", "q2"], "topic": ["x", "x", ""]})
    >>> [(v, m.tolist()) for v, m in question_masks(rows, "topic", ["q1", "q2"])]
    [('x', [True, False]), (None, [False, True])]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.results import Metric, record
from assay.uncertainty.slices import annotate, slice_text, text_slices

__all__ = ["cell_text", "check_by", "question_clusters", "question_masks", "slice_records"]


def check_by(rows: pd.DataFrame, by: Sequence[str] | str | None) -> list[str]:
    """The ``by`` columns as a list, each a column of ``rows`` with one value per question."""
    cols = [by] if isinstance(by, str) else list(by or [])
    for col in cols:
        if col not in rows.columns:
            raise InvalidInputError(
                "is not a column of the comparisons (a question-level column of the input "
                "table, such as task)",
                source="by",
                field=col,
            )
        text = rows[col].map(cell_text)
        values = text[text != ""].groupby(rows["index"][text != ""]).nunique()
        if (values > 1).any():
            q = str(values.index[np.flatnonzero(values.to_numpy() > 1)[0]])
            raise InvalidInputError(
                f"question {q!r} has more than one value: slices need a question-level column",
                source="by",
                field=col,
            )
    return cols


def cell_text(v: Any) -> str:
    """A cell as a value of a question-level column (``""``: none; blanks are none).

    Example:
        >>> [cell_text(v) for v in (3.0, " a ", None, float("nan"), "  ")]
        ['3', 'a', '', '', '']
    """
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    return slice_text(v).strip()


def question_masks(
    rows: pd.DataFrame, column: str, questions: Sequence[str]
) -> Iterator[tuple[str | None, np.ndarray]]:
    """``(value, mask over questions)`` for every value of ``column``, in sorted order."""
    text = rows[column].map(cell_text)
    value = dict(zip(rows["index"][text != ""], text[text != ""]))
    of_q = np.array([value.get(q, "") for q in questions], dtype=object)
    for v in text_slices(of_q):  # "" last: the questions without a value (slice null)
        yield v or None, of_q == v


def question_clusters(rows: pd.DataFrame, column: str, questions: Sequence[str]) -> np.ndarray:
    """Each question's cluster (``0 .. G-1`` by the sorted values) of the question-level
    ``column``; every question must have one.

    Example:
        >>> rows = pd.DataFrame({"index": ["q1", "q2", "q3"], "site": ["b", "a", "b"]})
        >>> question_clusters(rows, "site", ["q1", "q2", "q3"]).tolist()
        [1, 0, 1]
    """
    try:
        check_by(rows, [column])
    except InvalidInputError as e:
        raise InvalidInputError(e.reason, source="cluster", field=column) from None
    text = rows[column].map(cell_text)
    value = dict(zip(rows["index"][text != ""], text[text != ""]))
    of_q = np.array([value.get(q, "") for q in questions], dtype=object)
    if (of_q == "").any():
        missing = int((of_q == "").sum())
        raise InvalidInputError(
            f"{missing} question(s) have no value", source="cluster", field=column
        )
    return np.unique(of_q.astype(str), return_inverse=True)[1].reshape(-1).astype(np.intp)


def slice_records(
    whole: Sequence[Metric],
    part: Sequence[Metric],
    *,
    column: str,
    value: str,
    n: int,
    where: Sequence[str],
    key: Callable[[Metric], tuple[Any, ...]],
    gap_ci: dict[tuple[Any, ...], tuple[float, float]] | None = None,
) -> list[Metric]:
    """The slice's records in the order of ``whole`` (``part``: the slice analysed alone;
    a whole-set record it lacks is ``null`` with the reason), annotated as a slice."""
    found = {key(m): m for m in part}
    out = []
    for m in whole:
        got = found.get(key(m))
        if got is None:
            params = {k: m.parameters[k] for k in where if m.parameters.get(k) is not None}
            params |= {"n": 0} if "n" in m.parameters else {}  # the record's own count
            got = record(m.type, None, undefined="no such comparison in this slice", **params)
        out.append(got)
    return annotate(out, whole, column=column, value=value, n=n, where=where, gap_ci=gap_ci)
