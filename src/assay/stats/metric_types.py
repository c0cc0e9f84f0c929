"""The built-in metric types of the stats domain, one entry each (:data:`METRICS`).

The ``@metric`` registry (:mod:`assay.stats.metric_registry`) holds every metric a caller
can name, custom ones included; its built-ins are this table's entries: each entry's
builder is the registered factory, the registry imports the built-in modules from the
builders named here, and a contract test checks that the two agree. A type's family says
what kind of statistic it is: ``mean`` (a mean of per-sample values: ``ci`` puts an
interval on it), ``spread`` (a dispersion or standard error, not a value to plot with error
bars), ``interval`` (a metric whose value is an interval), ``agreement``, ``categorical``
and ``perplexity``. The default set of ``ScoreEvaluator`` (``metrics=None``) is the
table's defaults.

A module of its own, below the registry and the options (:mod:`assay.stats.declared`,
whose rules use the registry); light: no numpy.

Example:
    >>> METRICS.defaults, METRICS.family("spread")
    (('Mean', 'Stderr'), ('Var', 'Std', 'Stderr', 'BootstrapStderr'))
"""

from __future__ import annotations

from assay.metric_table import MetricEntry, MetricTable

__all__ = ["METRICS"]

_MEAN_CI = ("t", "wilson", "bootstrap", "bca")


def _m(
    type_: str,
    family: str,
    builder: str,
    help_: str,
    *,
    default: bool = False,
    intervals: tuple[str, ...] = (),
) -> MetricEntry:
    return MetricEntry(type_, family, builder, False, intervals, default, help_)


_METRICS = "assay.stats.metrics"

#: The built-in metric types (registered by ``@metric`` in their builders' modules).
METRICS = MetricTable(
    "stats",
    _m(
        "Accuracy",
        "mean",
        f"{_METRICS}:accuracy",
        "proportion correct (C 1, P 0.5, I 0)",
        intervals=_MEAN_CI,
    ),
    _m("Mean", "mean", f"{_METRICS}:mean", "mean of the values", default=True, intervals=_MEAN_CI),
    _m("Var", "spread", f"{_METRICS}:var", "sample variance of the values"),
    _m("Std", "spread", f"{_METRICS}:std", "sample standard deviation of the values"),
    _m(
        "Stderr",
        "spread",
        f"{_METRICS}:stderr",
        "standard error of the mean (clustered with cluster)",
        default=True,
    ),
    _m(
        "BootstrapStderr",
        "spread",
        f"{_METRICS}:bootstrap_stderr",
        "standard deviation of bootstrap means",
    ),
    _m("Ci", "interval", f"{_METRICS}:ci", "confidence interval of the mean (t or bootstrap)"),
    _m("CiWilson", "interval", f"{_METRICS}:ci_wilson", "Wilson interval of a proportion"),
    _m(
        "KrippendorffAlpha",
        "agreement",
        "assay.stats.agreement:krippendorff_alpha",
        "Krippendorff's alpha of several ratings per sample",
    ),
    _m(
        "Frequency",
        "categorical",
        "assay.stats.categorical:_frequency",
        "share (or count) of each category",
    ),
    _m(
        "Aggregate",
        "categorical",
        "assay.stats.categorical:aggregate",
        "one key of dict scores, aggregated",
    ),
    _m(
        "PerplexityPerToken",
        "perplexity",
        "assay.stats.perplexity:perplexity_per_token",
        "exp of the mean negative log probability per token",
    ),
    _m(
        "PerplexityPerSeq",
        "perplexity",
        "assay.stats.perplexity:perplexity_per_seq",
        "exp of the mean negative log probability per sequence",
    ),
)
