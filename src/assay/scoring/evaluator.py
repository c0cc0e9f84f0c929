"""The scoring evaluator: accumulate batches, merge, state, and the one-call forms.

:class:`ScoringEvaluator` follows the evaluator contract (:class:`assay.evaluator.Evaluator`):
``add(batch)`` returns the evaluator, ``merge(other)`` folds another one in place (refusing
one configured differently), ``compute()`` returns the Metric records, ``state()`` /
``from_state()`` carry it between processes as plain numpy arrays. It keeps only mergeable
sufficient statistics (:mod:`assay.scoring.sufficient_stats`), so batches, workers and
rebuilt evaluators compute exactly what one batch would.

The system score is evaluated twice, as RSMTool's ``raw_trim`` / ``raw_trim_round``: as given
(score ``<system>``) and rounded half to even (score ``<system>_round``). Cohen's kappa
rounds both scores in either row (SKLL semantics); exact agreement compares the scores as
given. :meth:`ScoringEvaluator.tables` lays the records out as RSMTool's tables
(:class:`~assay.scoring.tables.ScoringTables`).

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"h": [1, 2, 3, 4, 2, 3], "m": [1.2, 2.4, 2.9, 3.6, 2.2, 3.4],
    ...                    "g": list("aabbab")})
    >>> ms = evaluate_scoring(df, human="h", system="m", group_columns=["g"])
    >>> round(ms.get("QWK", table="eval", score="m").value, 4)
    0.9398
    >>> sorted(scoring_tables(df, human="h", system="m", group_columns=["g"]).tables)
    ['eval', 'eval_by_g', 'eval_short', 'fairness_metrics_by_g']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Self

import numpy as np

from assay._compat import removed_keywords
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.results import MetricSet
from assay.scoring.batch import (
    BatchStats,
    batch_state,
    batch_stats,
    load_batch_state,
    merge_batches,
)
from assay.scoring.build import Built, build, slice_records
from assay.scoring.declared import METRICS, OPTIONS
from assay.scoring.smd_options import SmdOptions
from assay.scoring.tables import ScoringTables
from assay.scoring.tally import ResponseUnits, attach_slices, record_key, tallies
from assay.scoring.types import ScoringData, check_clusters
from assay.uncertainty.intervals import attach, interval_from
from assay.uncertainty.tally import Tally

__all__ = ["ScoringEvaluator", "evaluate_scoring", "scoring_tables"]


@removed_keywords(subgroups="group_columns")
class ScoringEvaluator(Evaluator):
    """Accumulate scoring data in batches; ``compute()`` gives the records, ``tables()`` the
    RSMTool tables.

    Args:
        human, system: column names of the human and system scores.
        human2: column name (or names, for more raters) of additional human scores.
        group_columns: columns whose values split the responses into groups, for
            ``eval_by_<col>`` and ``fairness_metrics_by_<col>``.
        exclude_zero_scores: drop responses with human score 0 (RSMTool default: True).
        rater_error_variance: a rater error variance estimated elsewhere, used for PRMSE
            instead of the one from the double-scored responses.
        base_groups: reference group per group column for the fairness fits (default: the
            largest group, ties alphabetical).
        smd_method: the denominator of ``eval``'s SMD, as RSMTool's ``smd_method``:
            ``"unpooled"`` (default), ``"pooled"``, ``"johnson"``, ``"williamson"`` (any case).
        use_diff_std_means: a ``DSM`` column in ``eval`` and ``consistency`` in place of
            ``SMD`` (RSMTool's ``use_diff_std_means``).
        population_means, population_sds: population mean / sd per score column (the human
            and system columns, ``<system>_round``, the second human column), RSMTool's
            ``population_mn_dict`` / ``population_sd_dict``; see
            :mod:`assay.scoring.smd_options`.
        by: columns whose values slice the responses: the ``eval`` table's headline metrics
            again per value (records with ``slice_column``, ``slice``, ``n``, ``gap``; see
            :func:`assay.scoring.build.slice_records`), from the same per-group state as
            ``group_columns``.
        ci, ci_method, num_bootstrap, seed: a bootstrap interval over responses on the
            ``eval`` table's R, QWK, R2, kappa, agreements, SMD and RMSE, the by-group
            tables' columns and DSM, the fairness regressions' R2 (OSA, OSD, CSD),
            ``true_score_eval``'s PRMSE and its parts and, with ``human2``, ``consistency``,
            ``degradation`` and ``consistency_by_<col>`` (default
            ``ci=None``: none); the evaluator then also keeps each response's score pair
            and rating summary; :meth:`tally` gives what the one engine resamples
            (:mod:`assay.scoring.tally`).
        cluster: a column whose values are clusters (a candidate, a prompt): the bootstrap
            draws whole clusters of responses instead of responses, for every interval
            (BCa's jackknife then leaves one cluster out); ``parameters.cluster``; needs
            ``ci``, and every response needs a value.

    Example:
        >>> import pandas as pd
        >>> ev = ScoringEvaluator(human="h", system="m")
        >>> ev = ev.add(pd.DataFrame({"h": [1, 2, 3], "m": [1, 2, 2]}))
        >>> ev = ev.add(pd.DataFrame({"h": [4, 3], "m": [4, 3]}))
        >>> ev.compute().get("ExactAgreement", score="m").value
        80.0
        >>> float(ev.tables()["eval"].loc["m", "exact_agr"])
        80.0
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        human: str,
        system: str,
        human2: str | Sequence[str] | None = None,
        group_columns: Sequence[str] | None = None,
        exclude_zero_scores: bool = True,
        rater_error_variance: float | None = None,
        base_groups: Mapping[str, str] | None = None,
        smd_method: str = "unpooled",
        use_diff_std_means: bool = False,
        population_means: Mapping[str, float] | None = None,
        population_sds: Mapping[str, float] | None = None,
        by: Sequence[str] | None = None,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
    ) -> None:
        # the values are clean here (OPTIONS, checked before the body runs)
        self.ci = interval_from(self.options)
        self.cluster = cluster
        self.human, self.system = human, system
        self.human2 = list(human2 or ())
        self.smd = SmdOptions(
            smd_method, use_diff_std_means, dict(population_means or {}), dict(population_sds or {})
        )
        self.group_columns = list(group_columns or ())
        self.by = list(by or ())
        # one per-group state for the tables' group columns and the slices' columns
        self._columns = list(dict.fromkeys([*self.group_columns, *self.by]))
        # the columns each response keeps for the intervals: those and the cluster's
        self._kept = list(
            dict.fromkeys([*self._columns, *([self.cluster] if self.cluster else [])])
        )
        self.exclude_zero_scores = exclude_zero_scores
        self.rater_error_variance = rater_error_variance
        self.base_groups = dict(base_groups or {})
        self.fast = True  # cell-based statistics when human scores have few distinct values
        self.dropped: dict[str, int]  # responses dropped, per reason
        self._shift: float | None  # the sums are of score - shift (the first batch's)
        self._stats: BatchStats | None  # the sufficient statistics (None: nothing yet)
        self._units: ResponseUnits  # with ci: each response's scores, for the intervals
        self.add_state("dropped", {}, "sum")
        self.add_state("_shift", None, "first")
        self.add_state(
            "_stats",
            None,
            merge_batches,
            encode=partial(batch_state, group_columns=self._columns),
            decode=partial(load_batch_state, group_columns=self._columns),
        )
        self.add_state(
            "_units",
            ResponseUnits(self._kept, self.cluster),
            _joined_units,
            encode=_units_arrays,
            decode=partial(ResponseUnits.from_state, columns=self._kept, cluster=self.cluster),
        )

    # ------------------------------------------------------------ accumulation

    def add(self, data: Any, *, source: str = "data") -> Self:
        """Add a batch: a table with the configured columns (DataFrame, path, list of dicts)."""
        d = ScoringData.from_frame(
            data,
            human=self.human,
            system=self.system,
            human2=self.human2 or None,
            group_columns=self._kept,
            exclude_zero_scores=self.exclude_zero_scores,
            source=source,
        )
        return self.add_data(d)

    def add_data(self, d: ScoringData) -> Self:
        """Add an already-cleaned batch (:class:`ScoringData`) with the configured columns."""
        missing = [c for c in self._kept if c not in d.groups]
        if missing or (d.h2 is None) != (not self.human2):
            raise InvalidInputError(
                "the batch was cleaned for other columns than this evaluator's",
                source="add_data",
            )
        if self.cluster is not None:
            check_clusters(d.groups[self.cluster], self.cluster)
        shift = self._shift
        if shift is None:
            shift = float(np.rint(np.median(d.h[:1000])))
        true_scores = d.h2 is not None or self.rater_error_variance is not None
        part = batch_stats(d, self._columns, shift, self.fast, true_scores, self.by)
        self._shift = shift
        if self.ci is not None:
            ratings = None
            if true_scores:
                ratings = d.h[:, None] if d.h2 is None else np.column_stack([d.h, d.h2])
            self._units.add(d.h, d.m, d.groups, ratings)
        self._stats = part if self._stats is None else merge_batches(self._stats, part)
        for k, c in d.dropped.items():
            self.dropped[k] = self.dropped.get(k, 0) + c
        return self

    @property
    def is_empty(self) -> bool:
        # not derived: the per-response units are an object without a size
        return self._stats is None

    # ------------------------------------------------------------ results

    def tally(self) -> list[Tally]:
        """The tallies of the records that get an interval (units: the responses, in the
        order added; kept with ``ci`` only): :func:`assay.scoring.tally.tallies`."""
        if self._shift is None or not self._units.parts:
            return []
        return tallies(
            self._units,
            self.system,
            self._shift,
            self.rater_error_variance,
            self.group_columns,
        )

    def _compute(self) -> MetricSet:
        return MetricSet(self._built().records)

    def _built(self) -> Built:
        """The records and tables' rows of everything added (not empty)."""
        assert self._stats is not None
        built = build(self, self._stats)
        found = slice_records(self, self._stats, built.records)
        if self.ci is not None and self._shift is not None:
            attach(built.records, self.tally(), self.ci, record_key)
            smd = "dsm" if self.smd.use_diff_std_means else self.smd.smd_method
            attach_slices(
                found,
                self._units,
                self.by,
                self.system,
                self._shift,
                self.ci,
                smd,
                self.rater_error_variance,
            )
        built.records.extend(found)
        return built

    def tables(self) -> ScoringTables:
        """The records laid out as RSMTool's tables (a view of :meth:`compute`'s numbers).

        Raises:
            InvalidInputError: nothing was added.
        """
        if self.is_empty:
            raise InvalidInputError(
                "no data was added; call add() first", source="ScoringEvaluator.tables"
            )
        built = self._built()
        metrics = MetricSet(built.records)
        metrics.source = self  # as compute()'s: Store.save keeps this evaluator's units
        return ScoringTables.from_built(built, metrics)


def _joined_units(mine: ResponseUnits, theirs: ResponseUnits) -> ResponseUnits:
    out = ResponseUnits(mine.columns, mine.cluster)
    out.merge(mine)
    out.merge(theirs)
    return out


def _units_arrays(units: ResponseUnits) -> dict[str, np.ndarray]:
    return units.state() if units.parts else {}


@removed_keywords(subgroups="group_columns")
def evaluate_scoring(
    data: Any,
    *,
    human: str,
    system: str,
    human2: str | Sequence[str] | None = None,
    group_columns: Sequence[str] | None = None,
    exclude_zero_scores: bool = True,
    rater_error_variance: float | None = None,
    base_groups: Mapping[str, str] | None = None,
    source: str = "data",
    smd_method: str = "unpooled",
    use_diff_std_means: bool = False,
    population_means: Mapping[str, float] | None = None,
    population_sds: Mapping[str, float] | None = None,
    ci: float | None = None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
    by: Sequence[str] | None = None,
    cluster: str | None = None,
) -> MetricSet:
    """Evaluate system scores against human scores: every scoring metric as a Metric record.

    ``data`` is a pandas/polars DataFrame, a CSV/Parquet/JSONL path or a list of dicts. See
    :class:`ScoringEvaluator` for the arguments (``ci`` puts a bootstrap interval over
    responses, or the clusters of ``cluster``, on the ``eval`` metrics);
    :func:`scoring_tables` gives the same numbers as RSMTool's tables.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"h": [1, 2, 3, 4], "h2": [1, 3, 3, None], "m": [1.1, 2.2, 3.4, 3.6]})
        >>> ms = evaluate_scoring(df, human="h", system="m", human2="h2")
        >>> ms.get("N", table="consistency").value, ms.get("NMultiple", score="m").value
        (3, 3)
        >>> ms = evaluate_scoring(df, human="h", system="m", smd_method="Johnson",
        ...                       population_sds={"h": 2.0})
        >>> smd = ms.get("SMD", table="eval", score="m")
        >>> smd.parameters["smd_method"], round(smd.value, 6)   # (2.575 - 2.5) / 2.0
        ('johnson', 0.0375)
    """
    return _fitted(locals()).compute()


@removed_keywords(subgroups="group_columns")
def scoring_tables(
    data: Any,
    *,
    human: str,
    system: str,
    human2: str | Sequence[str] | None = None,
    group_columns: Sequence[str] | None = None,
    exclude_zero_scores: bool = True,
    rater_error_variance: float | None = None,
    base_groups: Mapping[str, str] | None = None,
    source: str = "data",
    smd_method: str = "unpooled",
    use_diff_std_means: bool = False,
    population_means: Mapping[str, float] | None = None,
    population_sds: Mapping[str, float] | None = None,
) -> ScoringTables:
    """:func:`evaluate_scoring`'s numbers as RSMTool's tables (:class:`ScoringTables`).

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"h": [1, 2, 3, 4], "h2": [1, 3, 3, None], "m": [1.1, 2.2, 3.4, 3.6]})
        >>> t = scoring_tables(df, human="h", system="m", human2="h2")
        >>> int(t["consistency"].loc["", "N"]), int(t["true_score_eval"].loc["m", "N multiple"])
        (3, 3)
        >>> t = scoring_tables(df, human="h", system="m", use_diff_std_means=True,
        ...                    population_means={"h": 2.0}, population_sds={"h": 1.0})
        >>> round(float(t["eval"].loc["m", "DSM"]), 4)   # 0 - (2.5 - 2.0) / 1.0
        -0.5
    """
    return _fitted(locals()).tables()


def _fitted(arguments: Mapping[str, Any]) -> ScoringEvaluator:
    """A :class:`ScoringEvaluator` with the one-call functions' arguments (their names are
    the evaluator's, plus ``data`` and ``source``), the data added."""
    options = dict(arguments)
    data, source = options.pop("data"), options.pop("source")
    return ScoringEvaluator(**options).add(data, source=source)
