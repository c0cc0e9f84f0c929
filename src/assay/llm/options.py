"""One options object for every LLM run: :class:`RunOptions`.

Every LLM command (``assay llm run|cat|fairness|language``, ``assay text`` with judge
metrics, ``assay judge``, ``assay pairwise judge``) and the library driver
(:func:`assay.llm.evaluate`) take the same options, checked once, here. A bad value is an
:class:`~assay.errors.InvalidInputError` naming the command-line option (``--concurrency``),
raised before any model is loaded or any call is paid for.

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
    assay.errors.InvalidInputError: --max-tokens: must be >= 1, got 0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from assay._compat import removed_keywords
from assay.errors import InvalidInputError

__all__ = ["RunOptions", "OPTION_NAMES", "run_options"]

#: field -> the command-line option that sets it (error messages name the option).
OPTION_NAMES: dict[str, str] = {
    "concurrency": "--concurrency",
    "rpm": "--rpm",
    "timeout": "--timeout",
    "retries": "--retries",
    "backoff": "--backoff",
    "cache": "--cache",
    "max_errors": "--max-errors",
    "max_tokens": "--max-tokens",
    "structured": "--structured",
    "reasks": "--judge-retries",
    "quiet": "--quiet",
    "loglik": "--loglik",
    "ci": "--ci",
    "ci_method": "--ci-method",
    "num_bootstrap": "--num-bootstrap",
    "seed": "--seed",
    "bootstrap_seed": "--bootstrap-seed",
    "cluster": "--cluster",
    "by": "--by",
}

# field -> (lowest value, whether the lowest is allowed, None allowed)
_BOUNDS: dict[str, tuple[float, bool, bool]] = {
    "concurrency": (1, True, False),
    "rpm": (0, False, True),
    "timeout": (0, False, False),
    "retries": (0, True, False),
    "backoff": (0, True, False),
    "max_errors": (0, True, True),
    "max_tokens": (1, True, True),
    "reasks": (0, True, True),
}
_INTS = {"concurrency", "retries", "max_errors", "max_tokens", "reasks"}


@removed_keywords(max_concurrency="concurrency")
@dataclass(frozen=True)
class RunOptions:
    """How an LLM run is run (see the module docstring); checked when built."""

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
        from assay.llm.constrain import check_mode

        object.__setattr__(self, "structured", check_mode(self.structured))
        for name, (low, inclusive, nullable) in _BOUNDS.items():
            _check(name, getattr(self, name), low, inclusive, nullable)
        if not isinstance(self.cache, (str, Path, bool)) and self.cache is not None:
            raise InvalidInputError(
                f"expected a file path, True or False, got {type(self.cache).__name__}",
                source="--cache",
            )
        self.intervals(0, check=True)  # every interval option checked here, named by option
        by = (self.by,) if isinstance(self.by, str) else tuple(self.by or ())
        if not all(isinstance(c, str) and c for c in by):
            raise InvalidInputError(f"expected column names, got {self.by!r}", source="--by")
        object.__setattr__(self, "by", tuple(dict.fromkeys(by)))

    def intervals(self, seed: int, *, check: bool = False) -> Any:
        """The :class:`~assay.uncertainty.intervals.CIOptions` asked for (``None`` without ``ci``);
        the bootstrap's seed is ``bootstrap_seed``, else ``seed``, else the task's own
        ``seed`` (the one seed rule). ``check``: the method, resamples, seeds and cluster
        are checked even without ``ci``.

        Example:
            >>> RunOptions(ci=0.9, seed=3).intervals(1).seed, RunOptions(ci=0.9).intervals(1).seed
            (3, 1)
            >>> RunOptions(ci=0.9, seed=3, bootstrap_seed=7).intervals(1).seed
            7
        """
        from assay.uncertainty.intervals import ci_options

        own = self.seed if self.seed is not None else seed
        own = self.bootstrap_seed if self.bootstrap_seed is not None else own
        level = 0.5 if check and self.ci is None and self.cluster is None else self.ci
        try:
            if check and self.bootstrap_seed is not None:
                ci_options(0.5, seed=self.bootstrap_seed)
            return ci_options(level, self.ci_method, self.num_bootstrap, own, cluster=self.cluster)
        except InvalidInputError as e:
            source = OPTION_NAMES.get(str(e.source))
            if e.source == "seed" and self.bootstrap_seed is not None:
                source = OPTION_NAMES["bootstrap_seed"]
            raise InvalidInputError(e.reason, source=source) from None

    def replace(self, **changes: Any) -> RunOptions:
        """A copy with ``changes`` (checked like the original)."""
        return replace(self, **changes)

    def runner_cache(self) -> Any:
        """What the runner's ``cache`` argument gets."""
        return None if self.cache is False else self.cache

    def allowed_errors(self) -> int:
        """Failed calls a successful run may have: ``max_errors``, or 0 when not given."""
        return self.max_errors or 0


def _check(name: str, value: Any, low: float, inclusive: bool, nullable: bool) -> None:
    option = OPTION_NAMES[name]
    if value is None:
        if nullable:
            return
        raise InvalidInputError("a value is required", source=option)
    integer = name in _INTS
    numeric = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not numeric:
        kind = "an integer" if integer else "a number"
        raise InvalidInputError(f"expected {kind}, got {value!r}", source=option)
    if not math.isfinite(value) or value < low or (value == low and not inclusive):
        relation = ">=" if inclusive else ">"
        raise InvalidInputError(f"must be {relation} {low:g}, got {value!r}", source=option)


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
        assay.errors.InvalidInputError: --max-errors: must be >= 0, got -1
    """
    known = {f.name for f in fields(RunOptions)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise InvalidInputError(f"unknown run option(s): {', '.join(unknown)}", source="options")
    if no_cache and cache is not None:
        raise InvalidInputError("give --cache FILE or --no-cache, not both", source="--cache")
    if cache is not None:
        from assay.io.files import check_writable_file

        check_writable_file(Path(cache), option="--cache", new_folders=True)
    kept = {k: v for k, v in given.items() if v is not None or _BOUNDS.get(k, (0, 0, False))[2]}
    return RunOptions(cache=False if no_cache else (cache if cache is not None else True), **kept)
