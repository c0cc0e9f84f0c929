"""One options object for every LLM run: :class:`RunOptions`.

Every LLM command (``assay llm run|cat|fairness|language``, ``assay text`` with judge
metrics, ``assay judge``, ``assay pairwise judge``) and the library driver
(:func:`assay.llm.evaluate`) take the same options, declared once, here
(:data:`RUN_OPTIONS`: each option's default, rule, flag and help, :mod:`assay.options`). A
bad value is an :class:`~assay.errors.InvalidInputError` naming the command-line option
(``--concurrency``), raised before any model is loaded or any call is paid for; a misspelt
keyword (``max_concurrency``, the old name of ``concurrency``) is refused with a hint.

=================  ====================  ===============================================
field              option                meaning
=================  ====================  ===============================================
``concurrency``    ``--concurrency``     calls in flight at most (>= 1)
``rpm``            ``--rpm``             attempts per minute at most (> 0; None: no cap)
``timeout``        ``--timeout``         seconds per attempt (> 0)
``retries``        ``--retries``         retries per call on 429/5xx/timeouts (>= 0)
``backoff``        ``--backoff``         first backoff in seconds (>= 0, doubles)
``cache``          ``--cache``           response cache: True (default file), a path,
                   ``--no-cache``        or False (no cache, no resume)
``max_errors``     ``--max-errors``      failed calls allowed (>= 0): more stop the run;
                                         None (default): the run goes on, but any failed
                                         call makes it a failure (exit 1)
``max_tokens``     ``--max-tokens``      cap on each reply (>= 1; None: the task's own)
``structured``     ``--structured``      constrain replies to the task's reply shape
                                         (judge metrics, pairwise): ``auto`` (default:
                                         where the model supports it), ``on``, ``off``
                                         (``--json-mode`` is ``on``; see
                                         :mod:`assay.llm.constrain`)
``reasks``         ``--judge-retries``   re-asks of an invalid reply (>= 0; None: the
                                         task's own; tasks that re-ask: the judge)
``quiet``          ``--quiet``           no progress bar and no summary line
``loglik``         ``--loglik``          how an OpenAI-compatible server is asked for
                                         log-likelihoods (the model option ``loglik``:
                                         ``completions`` or ``chat``; None: not asked)
``ci``             ``--ci``              confidence level of the headline metrics'
                                         intervals (None: the task's default)
``ci_method``      ``--ci-method``       ``bootstrap``, ``wilson``, ``t``, ``delong``
``num_bootstrap``  ``--num-bootstrap``   bootstrap resamples (>= 2)
``seed``           ``--seed``            the bootstrap's seed (None: the task's seed)
``bootstrap_seed`` ``--bootstrap-seed``  re-seeds the bootstrap alone (None: ``seed``)
``cluster``        ``--cluster``         an item column: the bootstrap draws whole clusters
``by``             ``--by``              item columns to slice every headline metric by
=================  ====================  ===============================================

**One seed rule** (docs/records.md#intervals): ``--seed`` seeds everything random in a
command. Where that seed also changes what the model is asked (a suite's prompt shuffle,
pairwise random mode), ``--bootstrap-seed`` re-seeds only the interval, so the interval is
redrawn from the cache without a new paid call. ``parameters.seed`` of a record is the seed
its bootstrap used.

The last seven are read by the task (:meth:`~assay.llm.task.LLMTask.configure`), so every
evaluation gets intervals and slices the same way (:mod:`assay.llm.slicing`).

Example:
    >>> RunOptions(concurrency=4).concurrency
    4
    >>> RunOptions(max_tokens=0)
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: --max-tokens: must be an integer >= 1 or None, got 0
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from assay._compat import removed_keywords
from assay.errors import InvalidInputError
from assay.options import Bad, Option, Options, custom, flag, flags_named, number, text
from assay.uncertainty.options import by_option, interval_options

__all__ = ["OPTION_NAMES", "RUN_OPTIONS", "RunOptions", "run_options"]


def _cache(v: Any) -> Any:
    if v is not None and not isinstance(v, (str, Path, bool)):
        raise Bad(f"must be a file path, true or false, got {type(v).__name__}")
    return v


def _structured(v: Any) -> str:
    from assay.llm.constrain import check_mode

    try:
        return check_mode(v)
    except InvalidInputError as e:
        raise Bad(e.reason) from None  # "use auto, on or off, got ..."


def _columns(v: Any) -> tuple[str, ...]:
    """Column names: a list, one name, or None (none)."""
    by = (v,) if isinstance(v, str) else (() if v is None else v)
    if isinstance(by, (bytes, dict)) or not hasattr(by, "__iter__"):
        raise Bad(f"must be a list of column names, got {v!r}")
    by = tuple(by)
    if not all(isinstance(c, str) and c for c in by):
        raise Bad(f"must be a list of column names, got {v!r}")
    return tuple(dict.fromkeys(by))


def _cluster_needs_ci(values: dict[str, Any]) -> dict[str, Any]:
    """``cluster`` needs ``ci`` (refused, not ignored). Unlike an evaluator's, a method
    without ``ci`` is let be: a task may put its own default interval on its metrics."""
    if values["ci"] is None and values["cluster"] is not None:
        raise InvalidInputError(
            f"names the unit the bootstrap resamples ({values['cluster']!r}): give ci too "
            "(--ci on the command line)",
            source="cluster",
        )
    return values


_CI = interval_options(unit="item")

#: Every LLM run option, declared once: its default, rule, flag and help. :class:`RunOptions`
#: is checked against it, and its errors name the flag.
RUN_OPTIONS = Options(
    Option("concurrency", 8, number(1, integer=True), "--concurrency", "Calls in flight."),
    Option(
        "rpm",
        None,
        number(0, closed="neither", none=True),
        "--rpm",
        "Attempts per minute at most (default: no cap).",
    ),
    Option("timeout", 60.0, number(0, closed="neither"), "--timeout", "Seconds per attempt."),
    Option(
        "retries", 5, number(0, integer=True), "--retries", "Retries per call on 429/5xx/timeouts."
    ),
    Option("backoff", 0.5, number(0), "--backoff", "First backoff in seconds (doubles)."),
    Option(
        "cache",
        True,
        custom("a file path, true or false", _cache, (3, 2.5)),
        "--cache",
        "Response cache file (default: assay's).",
    ),
    Option(
        "max_errors",
        None,
        number(0, integer=True, none=True),
        "--max-errors",
        "Failed calls allowed: more stop the run (exit 1). Default: any failed call makes the "
        "run fail (exit 1; its records are still written).",
    ),
    Option(
        "max_tokens",
        None,
        number(1, integer=True, none=True),
        "--max-tokens",
        "Cap on each reply.",
    ),
    Option(
        "structured",
        "auto",
        custom("auto, on or off", _structured, ("sometimes", 3)),
        "--structured",
        "Constrain each reply to its JSON schema: auto (where the model supports it: the "
        "embedded model and llama.cpp servers by grammar; OpenAI, vLLM, Ollama by "
        "response_format json_schema), on, or off.",
    ),
    Option(
        "reasks",
        None,
        number(0, integer=True, none=True),
        "--judge-retries",
        "Re-asks of an invalid reply before it is an error.",
    ),
    Option("quiet", True, flag(), "--quiet", "No progress bar."),
    Option(
        "loglik",
        None,
        text(none=True),
        "--loglik",
        "How an OpenAI-compatible server is asked for log-likelihoods: completions or chat.",
    ),
    _CI["ci"],
    _CI["ci_method"],
    _CI["num_bootstrap"],
    Option(
        "seed",
        None,
        number(0, integer=True, none=True),
        "--seed",
        "Seeds everything random in the command: the bootstrap intervals.",
    ),
    replace(
        by_option("An item column"),
        rule=custom("a list of column names", _columns, ([3], [""], 3), many=True),
    ),
    Option(
        "bootstrap_seed",
        None,
        number(0, integer=True, none=True),
        "--bootstrap-seed",
        "Re-seed only the bootstrap interval (default: --seed, which may also seed what the "
        "model is asked): the interval is redrawn from the cache, with no new model call.",
    ),
    _CI["cluster"],
    check=_cluster_needs_ci,
)

#: field -> the command-line option that sets it (error messages name the option).
OPTION_NAMES: dict[str, str] = {o.name: str(o.flag) for o in RUN_OPTIONS}


@removed_keywords(max_concurrency="concurrency")
@dataclass(frozen=True)
class RunOptions:
    """How an LLM run is run (see the module docstring); checked when built, against
    :data:`RUN_OPTIONS` (errors name the flag). :meth:`of` builds it from keywords, a
    misspelt one getting a hint.

    Example:
        >>> RunOptions.of(concurency=2)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: options: unknown option 'concurency' (did you mean 'concurrency'?); the options are concurrency, rpm, timeout, retries, backoff, cache, max_errors, max_tokens, structured, reasks, quiet, loglik, ci, ci_method, num_bootstrap, seed, by, bootstrap_seed, cluster
    """  # noqa: E501

    concurrency: int = 8
    rpm: float | None = None
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 0.5
    cache: str | Path | bool | None = True
    max_errors: int | None = None
    max_tokens: int | None = None
    structured: str | bool = "auto"
    reasks: int | None = None
    quiet: bool = True
    loglik: str | None = None
    ci: float | None = None
    ci_method: str = "bootstrap"
    num_bootstrap: int = 1000
    seed: int | None = None
    by: tuple[str, ...] = ()
    bootstrap_seed: int | None = None
    cluster: str | None = None

    def __post_init__(self) -> None:
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        with flags_named(RUN_OPTIONS):
            clean = RUN_OPTIONS.validate(given)
        # the numbers stay as given (an int timeout stays an int); the texts are normalised
        object.__setattr__(self, "structured", clean["structured"])
        object.__setattr__(self, "by", clean["by"])

    @classmethod
    def of(cls, **given: Any) -> RunOptions:
        """The options from keywords: an unknown one is refused with a hint
        (``max_concurrency``: did you mean ``concurrency``?), not a bare ``TypeError``."""
        RUN_OPTIONS.validate({k: v for k, v in given.items() if k not in RUN_OPTIONS})
        return cls(**given)

    def intervals(self, seed: int) -> Any:
        """The :class:`~assay.uncertainty.intervals.CIOptions` asked for (``None`` without ``ci``);
        the bootstrap's seed is ``bootstrap_seed``, else ``seed``, else the task's own
        ``seed`` (the one seed rule).

        Example:
            >>> RunOptions(ci=0.9, seed=3).intervals(1).seed, RunOptions(ci=0.9).intervals(1).seed
            (3, 1)
            >>> RunOptions(ci=0.9, seed=3, bootstrap_seed=7).intervals(1).seed
            7
        """
        from assay.uncertainty.intervals import ci_options

        own = self.seed if self.seed is not None else seed
        own = self.bootstrap_seed if self.bootstrap_seed is not None else own
        return ci_options(self.ci, self.ci_method, self.num_bootstrap, own, cluster=self.cluster)

    def replace(self, **changes: Any) -> RunOptions:
        """A copy with ``changes`` (checked like the original)."""
        return replace(self, **changes)

    def runner_cache(self) -> Any:
        """What the runner's ``cache`` argument gets."""
        return None if self.cache is False else self.cache

    def allowed_errors(self) -> int:
        """Failed calls a successful run may have: ``max_errors``, or 0 when not given."""
        return self.max_errors or 0


def run_options(
    *,
    cache: Path | str | None = None,
    no_cache: bool = False,
    **given: Any,
) -> RunOptions:
    """The one helper that turns command-line values into :class:`RunOptions`.

    ``cache``/``no_cache`` are the ``--cache FILE`` and ``--no-cache`` flags; every other
    keyword is a :class:`RunOptions` field (``None`` values keep the default, except for
    fields whose ``None`` means something: ``rpm``, ``max_errors``, ``max_tokens``,
    ``reasks``). ``structured``: ``auto``, ``on`` or ``off`` (``True``/``False``: on/off).

    Example:
        >>> run_options(concurrency=2, no_cache=True).cache
        False
        >>> run_options(max_errors=-1)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --max-errors: must be an integer >= 0 or None, got -1
    """
    RUN_OPTIONS.validate({k: v for k, v in given.items() if k not in RUN_OPTIONS})
    if no_cache and cache is not None:
        raise InvalidInputError("give --cache FILE or --no-cache, not both", source="--cache")
    if cache is not None:
        from assay.io.files import check_writable_file

        check_writable_file(Path(cache), option="--cache", new_folders=True)
    kept = {k: v for k, v in given.items() if v is not None}  # None: the default
    return RunOptions(cache=False if no_cache else (cache if cache is not None else True), **kept)
