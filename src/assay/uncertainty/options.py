"""The uncertainty options every evaluator shares, declared once: ``ci``, ``ci_method``,
``num_bootstrap``, ``seed``, ``cluster`` and ``by`` (see :mod:`assay.options`).

An evaluator includes :func:`interval_options` (with the interval methods its metrics
offer) and :data:`BY` in its :class:`~assay.options.Options`; its command gets the flags
``--ci``, ``--ci-method``, ``--num-bootstrap``, ``--seed``, ``--cluster`` and ``--by`` with
their help from here. Light on purpose: no numpy, so ``--help`` stays fast.

Stored parameters follow the records' rules: ``ci_method``, ``num_bootstrap`` and ``seed``
only with ``ci``; ``cluster`` and ``by`` only when given.

Example:
    >>> opts = interval_options()
    >>> opts.config(opts.validate({"ci": 0.9}))
    {'ci': 0.9, 'ci_method': 'bootstrap', 'num_bootstrap': 1000, 'seed': 0}
    >>> opts.config(opts.validate({}))
    {}
    >>> opts.validate({"cluster": "ward"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: cluster: names the unit the bootstrap resamples ('ward'): ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidInputError
from assay.options import Bad, Option, Options, choice, custom, names, number, text

__all__ = ["BY", "CI_METHODS", "MAX_BOOTSTRAP", "by_option", "interval_options"]

#: Every interval method; an evaluator offers those its metrics have (a metric a method
#: does not apply to gets the bootstrap, and its record says so).
CI_METHODS: tuple[str, ...] = ("bootstrap", "wilson", "t", "delong", "bca")

#: The most bootstrap resamples asked for (``--num-bootstrap``): 10^9 would run for hours.
MAX_BOOTSTRAP = 100_000


def _with_ci(values: Mapping[str, Any]) -> bool:
    return values["ci"] is not None


def _num_bootstrap(v: Any) -> int:
    if type(v).__name__ in ("bool", "bool_") or not isinstance(v, int | float) or v != int(v):
        raise Bad(f"must be an integer from 2 to {MAX_BOOTSTRAP:,}, got {v!r}")
    if not 2 <= int(v) <= MAX_BOOTSTRAP:
        raise Bad(
            f"must be from 2 to {MAX_BOOTSTRAP:,} (more resamples move a 95% interval's "
            f"bounds by far less than its width), got {v!r}"
        )
    return int(v)


def _cross_check(values: dict[str, Any]) -> dict[str, Any]:
    """``cluster`` and a method other than the bootstrap need ``ci``: refused, not ignored."""
    if values["ci"] is None:
        if values.get("cluster") is not None:
            raise InvalidInputError(
                f"names the unit the bootstrap resamples ({values['cluster']!r}): "
                "give ci too (--ci on the command line)",
                source="cluster",
            )
        if values["ci_method"] != "bootstrap":
            raise InvalidInputError(
                f"chooses how an interval is computed ({values['ci_method']!r}): give ci too "
                "(--ci on the command line)",
                source="ci_method",
            )
    return values


def interval_options(
    methods: tuple[str, ...] = CI_METHODS,
    *,
    unit: str = "datum",
    seed_flag: str = "--seed",
    cluster: bool = True,
) -> Options:
    """``ci``, ``ci_method`` (one of ``methods``), ``num_bootstrap``, ``seed`` and ``cluster``:
    a confidence interval on every headline metric, the bootstrap resampling ``unit``s.

    ``seed_flag`` names the seed's flag on a command whose ``--seed`` means something else;
    ``cluster=False`` leaves ``cluster`` out (an evaluator whose cluster bootstrap is its
    wrapper's, as the LLM suites' under :class:`~assay.llm.slicing.SlicedEvaluator`).

    Example:
        >>> interval_options(cluster=False).names
        ('ci', 'ci_method', 'num_bootstrap', 'seed')
    """
    a_unit = f"{'An' if unit[:1] in 'aeiou' else 'A'} {unit}"
    clustered = Option(
        "cluster",
        None,
        text(none=True),
        "--cluster",
        f"{a_unit} metadata column whose values are clusters (e.g. a patient, a site): "
        f"the bootstrap draws whole clusters instead of single {unit}s (needs --ci; every "
        "interval is then the bootstrap). Recorded as parameters.cluster.",
        stored="if_set",
    )
    return Options(
        Option(
            "ci",
            None,
            number(0, 1, closed="neither", none=True, describe="a confidence level in (0, 1)"),
            "--ci",
            "Put a confidence interval of this level (e.g. 0.95) on every headline metric: "
            "ci_low, ci_high in the record's parameters. Default: none.",
            stored="if_set",
        ),
        Option(
            "ci_method",
            "bootstrap",
            choice(*methods),
            "--ci-method",
            "bootstrap (default; resamples the input units), bca (the bias-corrected and "
            "accelerated bootstrap, where offered: scoring, stats), wilson (proportions), "
            "t (means) or delong (ROC AUC); a metric it does not apply to gets the bootstrap.",
            stored=_with_ci,
        ),
        Option(
            "num_bootstrap",
            1000,
            custom(
                f"an integer from 2 to {MAX_BOOTSTRAP:,}",
                _num_bootstrap,
                (1, 2.5, "x"),
                cli_type=int,
            ),
            "--num-bootstrap",
            "Bootstrap resamples.",
            stored=_with_ci,
        ),
        Option(
            "seed",
            0,
            number(0, integer=True),
            seed_flag,
            "Seed of the bootstrap.",
            stored=_with_ci,
        ),
        *([clustered] if cluster else []),
        check=_cross_check,
    )


def by_option(what: str = "A metadata field", extra: str = "") -> Option:
    """``by``: the headline metrics again per value of each of these columns (``what``
    says whose columns; ``extra`` a sentence the command adds)."""
    return Option(
        "by",
        (),
        names(),
        "--by",
        f"{what} (repeatable): every headline metric again per value, with slice_column, "
        "slice, slice_n (its size) and gap (to the whole set); with --ci the gap's interval "
        "too." + (f" {extra}" if extra else ""),
        stored="if_set",
    )


#: ``by`` with the general help.
BY = by_option()
