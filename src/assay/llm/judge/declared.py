"""What the LLM judge declares once: its built-in metrics (:data:`METRICS`) and the options
of :class:`~assay.llm.judge.evaluator.JudgeEvaluator` (:data:`OPTIONS`).

A judge metric is named in the options and on the command line by its family
(``faithfulness``, what ``metrics=`` and ``assay text --metrics`` take) and in the records
by its type (``Faithfulness``); its builder is its
:class:`~assay.llm.judge.types.JudgeMetric` definition (:mod:`assay.llm.judge.definitions`),
which reads its type from here. The registry (:mod:`assay.llm.judge.registry`), the
package's ``JUDGE_METRICS`` and the ``assay text`` help read the table; a metric a caller
registers at run time is accepted by ``metrics=`` too. Light: no numpy, no pydantic
(``--help`` reads it).

Like the text metrics, every judged aggregate carries a 95% bootstrap interval even without
``ci``, so ``num_bootstrap`` and ``seed`` are always stored.

Example:
    >>> METRICS.families[:3], METRICS["Faithfulness"].family
    (('answer_correctness', 'answer_relevance', 'bias'), 'faithfulness')
    >>> OPTIONS.config(OPTIONS.validate({"metrics": ["bias", "bias"]}))
    {'metrics': ['bias'], 'num_bootstrap': 1000, 'seed': 0}
"""

from __future__ import annotations

from typing import Any

from assay.metric_table import MetricEntry, MetricTable
from assay.options import REQUIRED, Bad, Option, Options, custom
from assay.uncertainty.options import by_option, interval_options

__all__ = ["METRICS", "OPTIONS", "REGISTERED", "type_of"]

_DEFINITIONS = "assay.llm.judge.definitions"
_MEAN = ("bootstrap", "t", "wilson")  # a mean's methods (wilson: 0/1 values only)


def _judged(type_: str, family: str, what: str) -> MetricEntry:
    """One built-in judge metric: per datum, and its mean (sliced, with an interval); not
    in a default set (a judge metric is always asked for by name)."""
    builder = f"{_DEFINITIONS}:{family.upper()}"
    return MetricEntry(type_, family, builder, True, _MEAN, default=False, help=what)


#: The built-in judge metrics, in the order they are listed (``registered()``, the help).
METRICS = MetricTable(
    "judge",
    _judged(
        "AnswerCorrectness",
        "answer_correctness",
        "F1 of the answer's statements against the ground truth's (best ground truth).",
    ),
    _judged(
        "AnswerRelevance",
        "answer_relevance",
        "Share of the answer's statements relevant to the query.",
    ),
    _judged("Bias", "bias", "Share of the answer's opinions judged biased (0 without opinions)."),
    _judged(
        "Toxicity", "toxicity", "Share of the answer's opinions judged toxic (0 without opinions)."
    ),
    _judged("Coherence", "coherence", "1-5 rating of the answer's coherence."),
    _judged(
        "SummaryCoherence",
        "summary_coherence",
        "1-5 rating of the answer as a coherent summary of the query.",
    ),
    _judged(
        "ContextPrecision",
        "context_precision",
        "Ordered precision of the contexts useful for a ground truth.",
    ),
    _judged(
        "ContextRecall",
        "context_recall",
        "Share of the ground truth's statements the contexts support (best ground truth).",
    ),
    _judged(
        "ContextRelevance", "context_relevance", "Share of the contexts relevant to the query."
    ),
    _judged("Faithfulness", "faithfulness", "Share of the answer's claims the contexts support."),
    _judged("Hallucination", "hallucination", "Share of the contexts the answer contradicts."),
)


def type_of(family: str) -> str:
    """The record type of a built-in judge metric (``"bias"`` -> ``"Bias"``)."""
    return METRICS.family(family)[0]


#: The names ``metrics=`` accepts: the table's families, then those of the metrics a caller
#: adds (:func:`assay.llm.judge.registry.register` names them here).
REGISTERED: list[str] = list(METRICS.families)


def _metrics(v: Any) -> tuple[str, ...]:
    """Registered judge metric names, repeats dropped; at least one."""
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of judge metric names, got {v!r}")
    names = tuple(dict.fromkeys(v))
    if not names:
        raise Bad("needs at least one judge metric")
    for n in names:
        if n not in REGISTERED:
            raise Bad(f"unknown judge metric {n!r}; use one of {', '.join(REGISTERED)}")
    return names


def _always(values: Any) -> bool:
    return True


_CI = (
    interval_options(("bootstrap", "t", "wilson", "delong"), unit="datum")
    .replace("num_bootstrap", stored=_always)
    .replace("seed", stored=_always)
)
assert len(_CI.checks) == 1, "the interval options hold one cross-check"

#: The options of ``JudgeEvaluator``. No command builds it from flags: on the command line
#: the judged metrics are among ``assay text --metrics``, and the interval, slice and seed
#: flags are the LLM run's (:data:`assay.llm.options.RUN_OPTIONS`), which the judge task
#: hands to the evaluator.
OPTIONS = Options(
    Option(
        "metrics",
        REQUIRED,
        custom(
            "a list of judge metric names",
            _metrics,
            ("bias", ["fluency"], [], 3),
            many=True,
        ),
        None,
        "The judge metrics: " + ", ".join(METRICS.families) + ", or any registered one.",
        example=["bias"],
    ),
    *(_CI[n] for n in ("num_bootstrap", "seed", "ci", "ci_method")),
    _CI["cluster"],
    by_option("An item column"),
    check=_CI.checks[0],
)
