"""The options several commands share, beyond output and errors: ``--where`` filters,
example paging, confidence intervals (``--ci`` ...), and Parquet datasets with
``--scheduler`` (:func:`add_table`, the one door of the commands' tables).

Split from :mod:`assay.cli.support`; like it, this
module imports nothing heavy at module level (every command's ``--help`` imports it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

from assay.cli.declared import declared_flag
from assay.errors import InvalidInputError
from assay.uncertainty import options as declared

__all__ = [
    "WHERE_OPTIONS",
    "where_option",
    "examples_page_options",
    "CI_OPTIONS",
    "interval_options",
    "interval_kwargs",
    "by_option",
    "apply_where",
    "SCHEDULER_HELP",
    "scheduler_option",
    "scheduler_timeout_option",
    "scheduler_address",
    "add_table",
    "SAVE_LABELS",
    "save_label_parameters",
    "parse_tags",
]


#: ``Evaluator.filter()`` argument -> the option that gives its expression.
WHERE_OPTIONS = {
    "datums": "--where",
    "groundtruths": "--where-groundtruths",
    "predictions": "--where-predictions",
}


def where_option(target: str, fields: str, extra: str = "") -> Any:
    """The ``--where`` option of ``filter(target=...)``, naming the fields it can use."""
    what = {"groundtruths": "ground truths"}.get(target, target)
    return typer.Option(
        None,
        WHERE_OPTIONS[target],
        help=f"Keep the {what} where this expression is true (pandas query syntax; fields "
        f"{fields}){extra}.",
    )


def examples_page_options() -> tuple[Any, Any]:
    """``--examples-limit`` and ``--examples-offset``: the page of datums given Examples."""
    return (
        typer.Option(None, "--examples-limit", min=0, help="Examples for at most N datums."),
        typer.Option(0, "--examples-offset", min=0, help="Examples from datum N on (uid order)."),
    )


#: The interval options' flags, by keyword argument (errors name the flag), from their
#: declaration (:mod:`assay.uncertainty.options`).
CI_OPTIONS = {o.name: str(o.flag) for o in declared.interval_options()}


def interval_options(seed_flag: str = "--seed") -> tuple[Any, Any, Any, Any]:
    """``--ci``, ``--ci-method``, ``--num-bootstrap`` and ``--seed`` as typer options, from
    their one declaration (:func:`assay.uncertainty.options.interval_options`), for a
    command that writes its parameters out: confidence intervals on the headline metrics
    (off unless ``--ci`` is given; see docs/records.md#intervals).

    ``seed_flag`` names the seed option of a command whose ``--seed`` already means
    something else (``pairwise judge``: random mode's order)."""
    opts = declared.interval_options(seed_flag=seed_flag)
    ci, method, boot, seed = (declared_flag(opts[n]) for n in CI_OPTIONS if n != "cluster")
    return ci, method, boot, seed


def cluster_option(unit: str) -> Any:
    """``--cluster COLUMN``: the bootstrap resamples whole clusters of ``unit`` (a metadata
    column) instead of single ones (with ``--ci``); from its declaration."""
    return declared_flag(declared.interval_options(unit=unit)["cluster"])


def bootstrap_seed_option(what: str) -> Any:
    """``--bootstrap-seed``: re-seeds only the interval of a command whose ``--seed`` also
    changes what the model is asked (``what``); the one seed rule of docs/records.md."""
    return typer.Option(
        None,
        "--bootstrap-seed",
        help=f"Re-seed only the bootstrap interval (default: --seed, which also seeds {what}): "
        "the interval is redrawn from the cache, with no new model call. Recorded as "
        "parameters.seed.",
    )


def interval_kwargs(
    ci: float | None,
    ci_method: str,
    num_bootstrap: int,
    seed: int,
    cluster: str | None = None,
    *,
    seed_flag: str = "--seed",
) -> dict:
    """The interval options as keyword arguments, checked (errors name the flag).

    Empty when ``--ci`` is not given, so a command without it configures as before.
    """
    from assay.uncertainty.intervals import ci_options

    try:
        ci_options(ci, ci_method, num_bootstrap, seed, cluster=cluster)
    except InvalidInputError as e:
        flags = CI_OPTIONS | {"seed": seed_flag}
        raise InvalidInputError(e.reason, source=flags.get(str(e.source), e.source)) from None
    if ci is None:
        return {}
    out = {"ci": ci, "ci_method": ci_method, "num_bootstrap": num_bootstrap, "seed": seed}
    return out | ({"cluster": cluster} if cluster else {})


def apply_where(ev: Any, where: dict[str, str | None]) -> Any:
    """``ev.filter(**where)`` for the --where options given; errors name the option, and a
    filter that keeps nothing is refused (rather than failing later with "no data")."""
    given = {k: v for k, v in where.items() if v is not None}
    if not given:
        return ev
    try:
        view = ev.filter(**given)
    except InvalidInputError as e:
        option = WHERE_OPTIONS.get(str(e.source), e.source)
        raise InvalidInputError(e.reason, source=option) from None
    if view.is_empty:
        options = ", ".join(WHERE_OPTIONS[k] for k in given)
        raise InvalidInputError("the filters keep no datum", source=options)
    return view


SCHEDULER_HELP = (
    "Dask scheduler address (tcp://HOST:PORT): the table's partitions are evaluated on its "
    "workers and their states merged (needs pip install 'assay[dist]'). Default: in process; "
    "a Parquet dataset (a directory or a glob) is then streamed one row group at a time."
)


def scheduler_option() -> Any:
    """The ``--scheduler ADDRESS`` option of the commands that evaluate a table."""
    return typer.Option(None, "--scheduler", metavar="ADDRESS", help=SCHEDULER_HELP)


def check_scheduler(scheduler: str) -> None:
    """``--scheduler`` is an address and Dask is installed (else one line)."""
    if "://" not in scheduler:
        raise InvalidInputError(
            f"expected a scheduler address such as tcp://HOST:8786, got {scheduler!r}",
            source="--scheduler",
        )
    from assay.dist.dask import check_address

    check_address(scheduler)
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InvalidInputError(
            "needs Dask: pip install 'assay[dist]'", source="--scheduler"
        ) from None


def scheduler_timeout_option() -> Any:
    """``--scheduler-timeout SECONDS``, beside every ``--scheduler``."""
    return typer.Option(
        30.0,
        "--scheduler-timeout",
        min=0.1,
        metavar="SECONDS",
        help="With --scheduler: seconds allowed to connect (connection and handshake), for "
        "a first worker to join, and without any worker mid-run.",
    )


def scheduler_address(address: str | None, timeout: float) -> str | None:
    """``--scheduler`` with its ``--scheduler-timeout`` (an :class:`assay.dist.dask.Address`);
    None stays None (in process)."""
    if address is None:
        return None
    from assay.dist.dask import Address

    return Address(address, timeout=timeout)


def add_table(ev: Any, path: Path, add: Callable[[Any, Any], Any], *, scheduler: str | None) -> Any:
    """Fold the table at ``path`` into ``ev`` with ``add(ev, frame_or_path)``: the one door of
    the commands' tables. A Parquet file, directory or glob is streamed by row group
    (:func:`assay.dist.table.evaluate_table`); any table goes to the Dask cluster at
    ``scheduler``; another file without a scheduler is handed to ``add`` as a path, so the
    command's reader (its formats, its messages) reads it whole."""
    from assay.dist.table import evaluate_table

    if scheduler is not None:
        check_scheduler(scheduler)
    from assay.io.parquet import is_parquet_dataset

    if scheduler is None and not is_parquet_dataset(path):
        add(ev, path)  # one file, read whole by the command's own reader (its formats)
        return ev
    return evaluate_table(ev, path, add=add, scheduler=scheduler)


def by_option(what: str, extra: str = "") -> Any:
    """``--by COLUMN`` (repeatable): the headline metrics again per value of ``what``'s
    column (docs/records.md#slices), from its declaration
    (:func:`assay.uncertainty.options.by_option`); ``extra``: a sentence the command adds."""
    return declared_flag(declared.by_option(what, extra))


#: What ``--name``, ``--tag`` and ``--no-units`` are to every command with ``--save``: its
#: parameter name -> (type, the option). :func:`assay.cli.support.guarded` adds them to
#: any command that declares ``--save`` (:func:`assay.cli.support.save_option`), so they
#: are declared here once, not in every command.
SAVE_LABELS: dict[str, tuple[Any, Any]] = {
    "save_name": (
        str | None,
        typer.Option(
            None,
            "--name",
            help="With --save: a name people know the run by (runs list, compare and the "
            "report show it).",
        ),
    ),
    "save_tags": (
        list[str],
        typer.Option(
            [],
            "--tag",
            metavar="KEY=VALUE",
            help="With --save: a label of the run (repeatable), e.g. --tag prompt=v2.",
        ),
    ),
    "no_units": (
        bool,
        typer.Option(
            False,
            "--no-units",
            help="With --save: do not keep the run's units (what 'assay compare' pairs runs "
            "on; kept by default, compressed).",
        ),
    ),
}


def save_label_parameters() -> list[inspect.Parameter]:
    """The :data:`SAVE_LABELS` as keyword parameters of a command's signature."""
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=kind)
        for name, (kind, opt) in SAVE_LABELS.items()
    ]


def parse_tags(tags: Sequence[str]) -> dict[str, str]:
    """``["k=v", ...]`` as ``{k: v}`` (one line naming ``--tag`` for a malformed one).

    Example:
        >>> parse_tags(["prompt=v2", "seed=3"])
        {'prompt': 'v2', 'seed': '3'}
    """
    out: dict[str, str] = {}
    for t in tags:
        key, eq, value = t.partition("=")
        if not eq or not key.strip():
            raise InvalidInputError(f"expected KEY=VALUE, got {t!r}", source="--tag")
        if key.strip() in out:
            raise InvalidInputError(f"the key {key.strip()!r} is given twice", source="--tag")
        out[key.strip()] = value
    return out
