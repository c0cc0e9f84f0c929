"""The pairwise evaluator: judged comparisons in, every pairwise metric record out.

A batch is a table (a pandas DataFrame or a mapping of equal-length columns) of judged
comparisons, one row per (question, first model, second model):

============  ===================================================================
column        meaning
============  ===================================================================
``index``     the question's id (``{project}_{task}`` in DevBench)
``model_a``   the model whose answer was shown first (Response 1)
``model_b``   the model shown second
``task``      ``{file}-{metric}``
``status``    ``ok`` (a choice was extracted), ``em`` (identical answers, not sent),
              ``failed`` (the call failed), ``unparsed`` (no valid choice in the reply)
``choice``    ``A``-``D`` when ``status == "ok"``, else empty
``length_a``  characters of the first answer (optional, default 0); likewise ``length_b``,
              ``words_a``, ``words_b``
============  ===================================================================

The state is the rows themselves (plain string and float arrays), so batches, merges and
``state()`` round trips give exactly the numbers of one batch: every metric is computed at
:meth:`compute` time from all rows, in a canonical order.

Example:
    >>> ev = PairwiseEvaluator(reference_model="r", nopt=2, num_bootstrap=20)
    >>> _ = ev.add({"index": ["q1-g", "q1-g"], "model_a": ["r", "m"], "model_b": ["m", "r"],
    ...             "task": ["t-g", "t-g"], "status": ["ok", "ok"], "choice": ["B", "A"]})
    >>> ev.compute().get("ConsistencyRate").value
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from assay._compat import removed_keywords
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.llm.pairwise.analysis import analyze, question_tally
from assay.llm.pairwise.declared import METRICS, OPTIONS
from assay.llm.pairwise.prompts import OPTION_LETTERS
from assay.results import MetricSet
from assay.uncertainty.tally import Tally

__all__ = ["PairwiseEvaluator", "ROW_COLUMNS", "STATUSES", "as_rows"]

TEXT_COLUMNS = ("index", "model_a", "model_b", "task", "status", "choice")
NUMBER_COLUMNS = ("length_a", "length_b", "words_a", "words_b")
ROW_COLUMNS = TEXT_COLUMNS + NUMBER_COLUMNS
STATUSES = ("ok", "em", "failed", "unparsed")


def as_rows(
    batch: Any, *, nopt: int, source: str = "batch", by: Sequence[str] = ()
) -> pd.DataFrame:
    """Validate a batch of judged comparisons into the canonical row table (with the slice
    columns ``by`` as text)."""
    df = batch if isinstance(batch, pd.DataFrame) else pd.DataFrame(dict(batch))
    texts = [*TEXT_COLUMNS, *(c for c in by if c not in ROW_COLUMNS)]
    for col in texts:
        if col not in df.columns:
            why = "missing column" if col in TEXT_COLUMNS else "missing column (named in by)"
            raise InvalidInputError(why, source=source, field=col)
    out = pd.DataFrame({c: ["" if _na(v) else str(v) for v in df[c]] for c in texts})
    for col in NUMBER_COLUMNS:
        out[col] = pd.to_numeric(df[col], errors="coerce") if col in df.columns else 0.0
        out[col] = out[col].fillna(0.0).astype(float)
    _refuse(
        ~out["status"].isin(STATUSES), f"must be one of {', '.join(STATUSES)}", source, "status"
    )
    letters = OPTION_LETTERS[nopt]
    _refuse(
        (out["status"] == "ok") & ~out["choice"].isin(list(letters)),
        f"must be one of {', '.join(letters)} with {nopt} options",
        source,
        "choice",
    )
    for col in ("index", "model_a", "model_b"):
        _refuse(out[col] == "", "empty", source, col)
    return out


def _refuse(bad: pd.Series, reason: str, source: str, field: str) -> None:
    """Raise naming the first row where ``bad`` holds (1-based)."""
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise InvalidInputError(reason, source=source, record=row, field=field)


def _na(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


@removed_keywords(n_boot="num_bootstrap", confidence="ci")
class PairwiseEvaluator(Evaluator):
    """Accumulates judged comparisons; computes consistency, win rates, ratings.

    Args:
        reference_model: the model every other model is compared with.
        nopt: the number of options the judge was offered (2, 3 or 4).
        l2: the weak prior of the Bradley-Terry and length-controlled fits.
        ci, ci_method, num_bootstrap, seed: intervals (docs/records.md#intervals): ``ci``
            puts one of that level on every rate record, by the bootstrap over questions
            (or ``wilson`` for the extraction and consistency rates); ratings and
            length-controlled win rates always carry a bootstrap interval (0.95 without
            ``ci``), all from the same ``num_bootstrap`` resamples seeded by ``seed``.
        by: question-level columns of the batches (``task``, a topic column) whose every
            value gets the rate records again (docs/pairwise.md#slices).
        cluster: a question-level column whose values are clusters (with ``ci``): every
            interval draws whole clusters of questions (docs/records.md#clusters).
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        reference_model: str,
        nopt: int = 2,
        l2: float = 0.01,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        by: Sequence[str] | str | None = None,
        cluster: str | None = None,
    ) -> None:
        self.reference_model = reference_model
        self.nopt = nopt
        self.l2 = l2
        self.ci = ci
        self.ci_method, self.num_bootstrap, self.seed = ci_method, num_bootstrap, seed
        self.by = list(by or ())  # a tuple of names, once checked
        self.cluster = cluster
        self._rows: list[pd.DataFrame]  # the batches' rows
        self.add_state("_rows", [], "cat", encode=_rows_arrays, decode=_rows_from_arrays)

    @property
    def _columns(self) -> tuple[str, ...]:
        extra = [*self.by, *([self.cluster] if self.cluster else [])]
        return (*ROW_COLUMNS, *(c for c in dict.fromkeys(extra) if c not in ROW_COLUMNS))

    def add(self, batch: Any) -> PairwiseEvaluator:
        """Add judged comparisons (see the module docstring for the columns)."""
        rows = as_rows(batch, nopt=self.nopt, by=list(self._columns[len(ROW_COLUMNS) :]))
        self._rows.append(rows)
        return self

    @property
    def rows(self) -> pd.DataFrame:
        """All rows, in canonical order (question, first model, second model)."""
        if not self._rows:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in self._columns})
        return _sorted(self._rows)

    def _compute(self) -> MetricSet:
        return analyze(
            self.rows,
            reference_model=self.reference_model,
            l2=self.l2,
            ci=self.ci,
            ci_method=self.ci_method,
            num_bootstrap=self.num_bootstrap,
            seed=self.seed,
            by=self.by,
            cluster=self.cluster,
        ).metrics

    def tally(self) -> list[Tally]:
        """The tally over questions every interval of the whole set is drawn from (one
        stream; slices read from the same draws: :mod:`assay.llm.pairwise.tally`)."""
        if not self._rows:
            return []
        rows = self.rows
        tally = question_tally(
            rows, reference_model=self.reference_model, l2=self.l2, ci=self.ci,
            cluster=self.cluster,
        )  # fmt: skip
        return [tally]


def _sorted(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The batches' rows as one table, in canonical order."""
    rows = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return rows.sort_values(["index", "model_a", "model_b", "status"]).reset_index(drop=True)


def _rows_arrays(parts: list[pd.DataFrame]) -> dict[str, np.ndarray]:
    """The rows as one array per column (text, or numbers for :data:`NUMBER_COLUMNS`)."""
    if not parts:
        return {}
    rows = _sorted(parts)
    return {c: rows[c].to_numpy(dtype=float if c in NUMBER_COLUMNS else str) for c in rows.columns}


def _rows_from_arrays(state: Mapping[str, np.ndarray]) -> list[pd.DataFrame]:
    rows = pd.DataFrame({c: np.asarray(v).tolist() for c, v in state.items()})
    return [rows] if len(rows) else []
