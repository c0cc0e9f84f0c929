"""What pairwise judging declares once: its metric types (:data:`METRICS`) and the options of
:class:`~assay.llm.pairwise.evaluator.PairwiseEvaluator` (:data:`OPTIONS`).

The analysis (which rates get Wilson's interval, which records a slice repeats) and the
report's plots read the table. Light: no numpy, no pandas.

Stored parameters stay as they always were: ``ci``, ``ci_method``, ``num_bootstrap``,
``seed`` and ``by`` always (the ratings carry an interval even without ``ci``),
``cluster`` when given.

Example:
    >>> METRICS.with_interval("wilson")
    ('ExtractionRate', 'ConsistencyRate')
    >>> "BradleyTerryRating" in METRICS.sliced
    False
    >>> OPTIONS.config(OPTIONS.validate({"reference_model": "r", "by": "task"}))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'reference_model': 'r', 'nopt': 2, 'l2': 0.01, 'ci': None, 'ci_method': 'bootstrap',
     'num_bootstrap': 1000, 'seed': 0, 'by': ['task']}
"""

from __future__ import annotations

from typing import Any

from assay.metric_table import MetricEntry, MetricTable
from assay.options import REQUIRED, Option, Options, choice, custom, names, number, text
from assay.uncertainty.options import interval_options

__all__ = ["METRICS", "OPTIONS"]

_RECORDS = "assay.llm.pairwise.records"
_BOOT = ("bootstrap",)
_WILSON = ("bootstrap", "wilson")

#: The pairwise types, in the order they are emitted.
METRICS = MetricTable(
    "pairwise",
    MetricEntry(
        "ExtractionRate", "rates", f"{_RECORDS}:extraction_rate", True, _WILSON,
        help="Comparisons whose reply gave a valid choice, over those sent.",
    ),
    MetricEntry(
        "ConsistencyRate", "rates", f"{_RECORDS}:consistency_rate", True, _WILSON,
        help="Extracted pairs with the same verdict in both orders.",
    ),
    MetricEntry(
        "WinRate", "win_rates", f"{_RECORDS}:win_rate", True, _BOOT,
        help="A model's wins against the reference (two countings) or an opponent "
        "(debiased over both orders).",
    ),
    MetricEntry(
        "WinRateWithTie", "win_rates", f"{_RECORDS}:win_rate_with_tie", True, _BOOT,
        help="Wins plus half the ties, over the comparisons of a pair.",
    ),
    MetricEntry(
        "WinRateWithoutTie", "win_rates", f"{_RECORDS}:win_rate_without_tie", True, _BOOT,
        help="Wins over the comparisons of a pair that were not ties.",
    ),
    MetricEntry(
        "LengthControlledWinRate", "length_controlled",
        f"{_RECORDS}:length_controlled_win_rate", True, _BOOT,
        help="The win rate against the reference with the answers' length difference "
        "regressed out (always with an interval).",
    ),
    MetricEntry(
        "BradleyTerryRating", "ratings", f"{_RECORDS}:bradley_terry_rating", False, _BOOT,
        help="Each model's Bradley-Terry strength (always with an interval).",
    ),
)  # fmt: skip


def _by(v: Any) -> tuple[str, ...]:
    """``by``: one column name, a list of them, or None (none)."""
    if v is None:
        return ()
    if isinstance(v, str):
        v = [v]
    return tuple(names().normalize(v))


_INTERVALS = interval_options(unit="question", cluster=False)
_CLUSTER = interval_options(unit="question")["cluster"]
for _name in ("ci", "ci_method", "num_bootstrap", "seed"):
    _INTERVALS = _INTERVALS.replace(_name, stored="always")
_NUM = _INTERVALS["num_bootstrap"].rule
_CI = _INTERVALS["ci"].rule

#: The options of ``PairwiseEvaluator``.
OPTIONS = Options(
    Option(
        "reference_model",
        REQUIRED,
        text(),
        "--reference-model",
        "The reference model every model is compared with.",
        example="ref",
    ),
    Option(
        "nopt",
        2,
        choice(2, 3, 4),
        "--nopt",
        "Options the judge chooses from: 2, 3 or 4.",
    ),
    Option(
        "l2",
        0.01,
        number(0),
        None,
        "The weak prior of the Bradley-Terry and length-controlled fits.",
    ),
    _INTERVALS,
    Option(
        "by",
        None,
        custom("a list of column names or None", _by, ([1], 3), many=True),
        "--by",
        "Question-level columns whose every value gets the rate records again.",
    ),
    _CLUSTER,
)
