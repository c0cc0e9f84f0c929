"""What the LLM suites declare once: the metric types of each suite and the options of
their evaluators.

* :data:`CAT` (context association tests, :class:`~assay.llm.suites.cat.CATEvaluator`),
  :data:`FAIRNESS` (LLM fairness, :class:`~assay.llm.suites.fairness_metrics.LLMFairnessEvaluator`)
  and :data:`LANGUAGE` (language exams, :class:`~assay.llm.suites.language.LanguageEvaluator`):
  one :class:`~assay.metric_table.MetricTable` per suite (two suites emit an ``Accuracy`` of
  their own), in the order the records are emitted. The types that carry an interval, the
  records a slice repeats, the averaged fairness metrics (``assay llm average``) and the
  report's lists are read from them.
* :data:`SUITE_OPTIONS`: what every suite takes (``max_queries``, ``seed``, ``max_tokens``,
  ``answer_mode``), checked by :meth:`~assay.llm.suites.base.Suite.setup` (errors name the
  flags); ``--answer-mode``'s flag and help come from here.
* :data:`COUNTS_OPTIONS` (the CAT and language evaluators: ``dataset`` and the interval
  options) and :data:`FAIRNESS_OPTIONS` (``group_column``, ``groups`` and the interval
  options). The cluster bootstrap of a suite run is
  :class:`~assay.llm.slicing.SlicedEvaluator`'s, so these evaluators have no ``cluster``.
  Their options are the library's only: a suite command builds its evaluator from the
  suite's data, so none has a flag of its own (``--ci``... are the run options,
  :mod:`assay.llm.options`).

Light: no numpy.

Example:
    >>> CAT.with_interval()
    ('LMS', 'SS', 'ICAT')
    >>> LANGUAGE.with_interval("wilson")
    ('FormatErrorRate', 'Accuracy', 'AccuracyOnValid')
    >>> FAIRNESS_OPTIONS.config(FAIRNESS_OPTIONS.validate({"groups": [0, 1]}))
    {'group_column': 'group', 'groups': ['0', '1']}
    >>> FAIRNESS_OPTIONS.validate({"groups": ["a"]})
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: groups: must be two group values [unprivileged, \
privileged], got ['a']
"""

from __future__ import annotations

from typing import Any

from assay.metric_table import MetricEntry, MetricTable
from assay.options import Bad, Option, Options, choice, custom, number, text
from assay.uncertainty.options import interval_options

__all__ = [
    "ANSWER_MODES",
    "CAT",
    "COUNTS_OPTIONS",
    "FAIRNESS",
    "FAIRNESS_OPTIONS",
    "LANGUAGE",
    "SUITE_OPTIONS",
]

_RECORDS = "assay.llm.suites.records"
_BOOT = ("bootstrap",)
_WILSON = ("bootstrap", "wilson")

#: The context association tests' types, per scope (``general``, the test types, the bias
#: types); ``ErrorRate`` once, over the run.
CAT = MetricTable(
    "llm cat",
    MetricEntry(
        "LMS", "scores", f"{_RECORDS}:scoped", True, _BOOT,
        help="Language modeling score: 100 (S + A) / (S + A + U + O).",
    ),
    MetricEntry(
        "SS", "scores", f"{_RECORDS}:scoped", True, _BOOT,
        help="Stereotype score: 100 S / (S + A); 50 is unbiased.",
    ),
    MetricEntry(
        "ICAT", "scores", f"{_RECORDS}:scoped", True, _BOOT,
        help="Idealized CAT score: LMS * min(SS, 100 - SS) / 50.",
    ),
    MetricEntry(
        "CATCounts", "counts", f"{_RECORDS}:scoped",
        help="The scope's stereotype, anti-stereotype, unrelated, other and error answers.",
    ),
    MetricEntry(
        "ErrorRate", "errors", f"{_RECORDS}:error_rate", True,
        help="Failed calls over all calls of the run.",
    ),
)  # fmt: skip

#: LLM fairness's types: group fairness and rates of the valid answers, the response
#: counts (original and counterfactual prompts), the counterfactual change rates.
FAIRNESS = MetricTable(
    "llm fairness",
    MetricEntry(
        "StatisticalParityDifference", "group", f"{_RECORDS}:fairness", True, _BOOT,
        help="Positive-answer rate of the unprivileged group minus the privileged's.",
    ),
    MetricEntry(
        "DisparateImpact", "group", f"{_RECORDS}:fairness", True, _BOOT,
        help="Positive-answer rate of the unprivileged group over the privileged's.",
    ),
    MetricEntry(
        "AverageOddsDifference", "group", f"{_RECORDS}:fairness", True, _BOOT,
        help="Mean of the groups' false- and true-positive rate differences.",
    ),
    MetricEntry(
        "EqualOpportunityDifference", "group", f"{_RECORDS}:fairness", True, _BOOT,
        help="True-positive rate of the unprivileged group minus the privileged's.",
    ),
    MetricEntry(
        "Accuracy", "rates", f"{_RECORDS}:rate", True, _BOOT,
        help="(TP + TN) / valid answers.",
    ),
    MetricEntry(
        "Precision", "rates", f"{_RECORDS}:rate", True, _BOOT,
        help="TP / (TP + FP) of the valid answers.",
    ),
    MetricEntry(
        "Recall", "rates", f"{_RECORDS}:rate", True, _BOOT,
        help="TP / (TP + FN) of the valid answers.",
    ),
    MetricEntry(
        "ResponseCounts", "responses", f"{_RECORDS}:response_counts",
        help="Valid, invalid and failed answers (original or counterfactual prompts).",
    ),
    MetricEntry(
        "CounterfactualChangeRate", "counterfactual", f"{_RECORDS}:rate", True, _BOOT,
        help="Points whose answer changed with the sensitive value swapped, overall and "
        "per group.",
    ),
)  # fmt: skip

#: The language exams' types, per language and over all (``language: all``).
LANGUAGE = MetricTable(
    "llm language",
    MetricEntry(
        "FormatErrorRate", "rates", f"{_RECORDS}:per_language", True, _WILSON,
        help="Invalid answers over answered calls.",
    ),
    MetricEntry(
        "Accuracy", "rates", f"{_RECORDS}:per_language", True, _WILSON,
        help="Correct answers over answered calls.",
    ),
    MetricEntry(
        "AccuracyOnValid", "rates", f"{_RECORDS}:per_language", True, _WILSON,
        help="Correct answers over valid answers.",
    ),
    MetricEntry(
        "LanguageCounts", "counts", f"{_RECORDS}:per_language",
        help="Correct, incorrect, invalid and failed answers.",
    ),
)  # fmt: skip

_INTERVALS = interval_options(unit="item", cluster=False)

#: The options of the CAT and language evaluators.
COUNTS_OPTIONS = Options(
    Option(
        "dataset",
        None,
        text(none=True),
        None,
        "Names what is evaluated: evaluators of different datasets refuse to merge.",
    ),
    _INTERVALS,
)


def _groups(v: Any) -> tuple[str, ...]:
    describe = "two group values [unprivileged, privileged]"
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be {describe}, got {v!r}")
    got = list(v)
    if len(got) != 2:
        raise Bad(f"must be {describe}, got {got!r}")
    return tuple(str(g) for g in got)


#: The options of the LLM fairness evaluator.
FAIRNESS_OPTIONS = Options(
    Option(
        "group_column",
        "group",
        text(),
        None,
        "The sensitive column (named in the records' parameters).",
    ),
    Option(
        "groups",
        ("0", "1"),
        custom("two group values [unprivileged, privileged]", _groups, ("01", ["a"], 3)),
        None,
        "Its two values, [unprivileged, privileged].",
    ),
    _INTERVALS,
)


#: How a suite gets its answers (:mod:`assay.llm.suites.base`).
ANSWER_MODES = ("generate", "loglik", "loglik_norm")

#: The options every suite takes (its reply cap's default is the suite's own).
SUITE_OPTIONS = Options(
    Option(
        "max_queries",
        0,
        number(0, integer=True),
        "--max-queries",
        "Items to query at most (0 = all).",
    ),
    Option("seed", 1, number(integer=True), "--seed", "Seed of the prompts' shuffles."),
    Option("max_tokens", 16, number(1, integer=True), "--max-tokens", "Cap on each answer."),
    Option(
        "answer_mode",
        None,
        choice(*ANSWER_MODES, none=True),
        "--answer-mode",
        "generate (the model writes, a strict parser reads), loglik (each option scored by "
        "its log-probability, the best taken: lm-eval's acc) or loglik_norm (per character: "
        "acc_norm). Default: loglik when the model gives log-probabilities (embedded, or "
        "--loglik), else generate.",
    ),
)
