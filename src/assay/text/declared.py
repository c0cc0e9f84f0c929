"""What the text domain declares once: its metric types (:data:`METRICS`) and the options
of :class:`~assay.text.evaluator.TextEvaluator` (:data:`OPTIONS`).

A text metric is named in the options by its family (``rouge``, ``bleu``, ``sacrebleu``,
``chrf``, what ``metrics=`` and ``assay text --metrics`` take) and in the records by its
type (``ROUGE``, ``BLEU``, ``SacreBLEU``, ``ChrF``); both come from the table. The
evaluator, ``evaluate_text``, the ``assay text`` command and its help read these; nothing
else lists them. Light: no numpy (``--help`` reads it).

Unlike the other domains, every text aggregate carries a 95% bootstrap interval even
without ``ci``, so ``num_bootstrap`` and ``seed`` are always stored.

Example:
    >>> METRICS.families, METRICS.defaults
    (('rouge', 'bleu', 'sacrebleu', 'chrf'), ('ROUGE', 'BLEU'))
    >>> OPTIONS.config(OPTIONS.validate({"metrics": ["bleu"]}))["metrics"]
    ['bleu']
    >>> OPTIONS.validate({"bleu_weights": [0.5, -1]})
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: bleu_weights: weight 2 is -1: each weight must be a finite number >= 0, got [0.5, -1]
"""  # noqa: E501

from __future__ import annotations

import math
import re
from typing import Any

from assay.errors import InvalidInputError
from assay.metric_table import MetricEntry, MetricTable
from assay.options import Bad, Option, Options, choice, choices, custom, flag
from assay.text.tokenize import BLEU_TOKENIZERS
from assay.uncertainty.options import by_option, interval_options

__all__ = [
    "BLEU_WEIGHTS",
    "MEASURES",
    "METRICS",
    "OPTIONS",
    "ROUGE_TYPES",
    "SMOOTHINGS",
    "checked",
    "family_of",
]

#: ROUGE's default types.
ROUGE_TYPES: tuple[str, ...] = ("rouge1", "rouge2", "rougeL", "rougeLsum")
#: ROUGE's measures.
MEASURES: tuple[str, ...] = ("fmeasure", "precision", "recall")
#: BLEU-4, uniform.
BLEU_WEIGHTS: tuple[float, ...] = (0.25, 0.25, 0.25, 0.25)
#: BLEU's smoothings (NLTK's names; ``None``: method0).
SMOOTHINGS: tuple[str | None, ...] = (None, "method1", "method2")

_MEAN = ("bootstrap", "t", "wilson")  # a mean's methods (wilson: 0/1 values only)

#: The text metric types, in the order their records are emitted; the family is the name
#: ``metrics=`` takes.
METRICS = MetricTable(
    "text",
    MetricEntry(
        "ROUGE",
        "rouge",
        "assay.text.rouge:rouge_scores",
        True,
        _MEAN,
        help="ROUGE-N, ROUGE-L, ROUGE-Lsum per datum (best reference), per type and measure.",
    ),
    MetricEntry(
        "BLEU",
        "bleu",
        "assay.text.bleu:bleu",
        True,
        _MEAN,
        help="Sentence BLEU per datum (NLTK's; valor-lite's with tokenize valor).",
    ),
    MetricEntry(
        "SacreBLEU",
        "sacrebleu",
        "assay.text.sacre:sacrebleu_sentence",
        True,
        _MEAN,
        default=False,
        help="sacrebleu's sentence BLEU per datum, on its 0-100 scale.",
    ),
    MetricEntry(
        "ChrF",
        "chrf",
        "assay.text.sacre:chrf_sentence",
        True,
        _MEAN,
        default=False,
        help="sacrebleu's chrF per datum, on its 0-100 scale.",
    ),
)

_ROUGE_N = re.compile(r"rouge[1-9]$")


def family_of(type_: str) -> str:
    """The name ``metrics=`` takes for a record type (``"ROUGE"`` -> ``"rouge"``)."""
    return METRICS[type_].families[0]


def _rouge_types(v: Any) -> tuple[str, ...]:
    """``rouge1`` .. ``rouge9``, ``rougeL``, ``rougeLsum``: at least one, repeats dropped."""
    if isinstance(v, str):
        v = [v]
    if not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of ROUGE types, got {v!r}")
    types = tuple(dict.fromkeys(v))
    if not types:
        raise Bad("needs at least one ROUGE type")
    for t in types:
        if not isinstance(t, str) or (t not in ("rougeL", "rougeLsum") and not _ROUGE_N.match(t)):
            raise Bad(f"unknown ROUGE type {t!r}; use rouge1..rouge9, rougeL or rougeLsum")
    return types


def _weights(v: Any) -> tuple[float, ...]:
    """One or more finite weights >= 0, not all 0."""
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of n-gram weights, got {v!r}")
    got = list(v)
    if not got:
        raise Bad("needs one or more n-gram weights (e.g. 0.25,0.25,0.25,0.25)")
    out = []
    for i, w in enumerate(got, start=1):
        if type(w).__name__ in ("bool", "bool_") or not isinstance(w, (int, float)):
            raise Bad(f"weight {i} is {w!r}: each weight must be a number, got {got}")
        if not math.isfinite(w) or w < 0:
            raise Bad(f"weight {i} is {w:g}: each weight must be a finite number >= 0, got {got}")
        out.append(float(w))
    if not any(out):
        raise Bad(f"every weight is 0: one must be > 0, got {got}")
    return tuple(out)


def _always(values: Any) -> bool:
    return True


_CI = (
    interval_options(unit="row")
    .replace("num_bootstrap", stored=_always)
    .replace("seed", stored=_always)
)
assert len(_CI.checks) == 1, "the interval options hold one cross-check"

#: The options of ``TextEvaluator`` (and the text flags of ``assay text``).
OPTIONS = Options(
    Option(
        "metrics",
        tuple(family_of(t) for t in METRICS.defaults),
        choices(*METRICS.families, at_least=1),
        None,  # assay text --metrics also takes the judge metrics: the command's own
        "The text metrics: " + ", ".join(METRICS.families) + ".",
    ),
    Option(
        "rouge_types",
        ROUGE_TYPES,
        custom(
            "a list of ROUGE types (rouge1..rouge9, rougeL, rougeLsum)",
            _rouge_types,
            ("rougeX", ["rouge0"], [], 3),
            many=True,
        ),
        "--rouge-types",
        "ROUGE types, comma-separated.",
        separator=",",
    ),
    Option("use_stemmer", False, flag(), "--use-stemmer", "Porter-stem ROUGE tokens."),
    Option(
        "rouge_measures",
        ("fmeasure",),
        choices(*MEASURES),
        "--rouge-measures",
        "fmeasure, precision, recall (comma-separated).",
        separator=",",
    ),
    Option(
        "bleu_weights",
        BLEU_WEIGHTS,
        custom(
            "a list of n-gram weights",
            _weights,
            ([], [-1, 2], [0.5, math.nan], [0, 0], "0.5", ["x"]),
            cli_type=float,
            many=True,
        ),
        "--bleu-weights",
        "BLEU n-gram weights.",
        separator=",",
    ),
    Option(
        "smoothing",
        None,
        choice(*[s for s in SMOOTHINGS if s is not None], none=True),
        "--bleu-smoothing",
        "method1 or method2 (NLTK).",
    ),
    Option(
        "bleu_tokenize",
        "whitespace",
        choice(*BLEU_TOKENIZERS),
        "--bleu-tokenize",
        "BLEU's tokens: whitespace (str.split, as NLTK's examples) or valor "
        "(valor-lite's: periods dropped, so 'cat.' matches 'cat').",
    ),
    _CI["num_bootstrap"],
    _CI["seed"],
    _CI["ci"],
    _CI["ci_method"],
    by_option("A column of the rows (e.g. topic)"),
    _CI["cluster"],
    check=_CI.checks[0],
)


def checked(name: str, value: Any, *, field: str) -> Any:
    """``value`` checked by the rule of option ``name``, for the one-call functions
    (:func:`~assay.text.bleu.bleu`, :func:`~assay.text.rouge.rouge_scores`), whose argument
    ``field`` is named in the error.

    Example:
        >>> checked("bleu_tokenize", "valor", field="tokenize")
        'valor'
        >>> checked("smoothing", "method9", field="smoothing")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: field 'smoothing': must be method1, method2 or None, got 'method9'
    """  # noqa: E501
    try:
        return OPTIONS[name].rule.normalize(value)
    except Bad as e:
        raise InvalidInputError(e.reason, field=field) from None
