"""``assay scoring``: evaluate automated scores against human scores (RSMTool's tables).

Prints the Metric records (JSON by default, like every command; ``--format table`` for the
main tables) and writes into ``--out-dir`` every table as CSV (``eval.csv``,
``eval_short.csv``, ``consistency.csv``, ``degradation.csv``,
``disattenuated_correlations.csv``, ``true_score_eval.csv``, ``eval_by_<col>.csv``,
``consistency_by_<col>.csv``, ``disattenuated_correlations_by_<col>.csv``,
``fairness_metrics_by_<col>.csv``, ``undefined_metrics.csv``) plus ``metrics.json``.
``--out FILE`` writes the records' JSON there as well (not in rsmeval mode).

Built on the metric commands' skeleton (:class:`assay.cli.command.MetricCommand`): the
evaluator is built from the declared options, the table added, the tables computed and
published by it; :func:`_publish` is the command's own last step (the folder of tables).
The rsmeval mode (``--config``, ``--trim-min``/``--trim-max``) runs RSMTool's experiment
in :mod:`assay.cli.rsmeval`, outside the skeleton.

The folder is written all at once, after everything was computed and serialised and after
``--save`` stored the evaluation: a failure leaves an existing ``--out-dir`` as it was. File
names derived from column names are made safe, so nothing is written outside ``--out-dir``.
Heavy modules (pandas, scipy, statsmodels) are imported inside the command, so
``assay scoring --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.command import MetricCommand
from assay.cli.options import (
    add_table,
    scheduler_address,
    scheduler_option,
    scheduler_timeout_option,
)
from assay.cli.rsmeval import run_rsmeval_command
from assay.cli.scoring_tables import print_tables
from assay.cli.support import OutputFormat, emit, guarded, save_metrics
from assay.errors import InvalidInputError
from assay.options import Options, flags_named
from assay.scoring.declared import OPTIONS

if TYPE_CHECKING:
    from assay.scoring.tables import ScoringTables

__all__ = ["register"]

METRICS_JSON = "metrics.json"


def _print_tables(view: ScoringTables, out_dir: Path) -> None:
    from rich.console import Console

    print_tables(view.tables, by_group=True)
    # RSMTool's tables hold point values: the records with an interval (--ci) or of a slice
    # (--by) are shown as the JSON says them, one row each.
    from assay.report.table import metrics_table
    from assay.results import MetricSet

    console = Console()
    extra = [m for m in view.metrics if {"ci_low", "slice_column"} & set(m.parameters)]
    if extra:
        console.print(metrics_table(MetricSet(extra), title="intervals and slices"))
    console.print(f"all tables written to {out_dir}", markup=False, highlight=False)


def _check_out_dir(out_dir: Path, names: list[str] | None = None) -> None:
    """Refuse an ``--out-dir`` that cannot take the files, before or after the work."""
    from assay.io.files import check_writable_file
    from assay.io.protect import refuse_protected

    check_writable_file(out_dir / METRICS_JSON, option="--out-dir", new_folders=True)
    for name in [METRICS_JSON, *(names or [])]:  # never a file the command reads
        refuse_protected(out_dir / name, option="--out-dir")
    for name in names or []:
        if (out_dir / name).is_dir():
            raise InvalidInputError(
                f"{out_dir / name} is a directory, cannot write the table there",
                source="--out-dir",
            )


def _check_early(given: dict[str, Any]) -> None:
    """The declared rules of the options either mode reads, before anything runs (errors
    name the flag)."""
    early = Options(OPTIONS["rater_error_variance"])
    with flags_named(OPTIONS):
        early.validate({"rater_error_variance": given["rater_error_variance"]})


_DATA = typer.Option(
    None,
    "--data",
    help="Table with one response per row: CSV, TSV, XLSX, Parquet, JSONL, or a Parquet "
    "directory or glob (streamed by row group).",
)
# --human and --system are the evaluator's required options, but optional here: an rsmeval
# configuration file can name the columns instead (so the command spells these two itself)
_HUMAN = typer.Option(None, "--human", help=OPTIONS["human"].help)
_SYSTEM = typer.Option(None, "--system", help=OPTIONS["system"].help)
_CONFIG = typer.Option(
    None,
    "--config",
    help="An rsmeval configuration file (JSON): run that experiment, write RSMTool's tables "
    "as <experiment_id>_<table>.csv (or .tsv/.xlsx, its file_format). --ci, --cluster and "
    "--by (columns of its predictions file) go on the records of every score type "
    "(--by: the main one), never into the tables.",
)
_TRIM_MIN = typer.Option(None, "--trim-min", help="Lowest score of the scale (trims scores).")
_TRIM_MAX = typer.Option(None, "--trim-max", help="Highest score of the scale.")
_TRIM_TOL = typer.Option(0.4998, "--trim-tolerance", help="How far beyond the scale to trim.")
_SCALE_WITH = typer.Option(
    None, "--scale-with", help="'asis' or a file with 'prediction' and 'sc1' to scale with."
)
_ID = typer.Option(None, "--id-column", help="Column of the response ids (rsmeval mode).")
_OUT_DIR = typer.Option(..., "--out-dir", help="Folder for the CSV tables and metrics.json.")
# exclude_zero_scores turned round: the flag asks for what is not the default
_KEEP_ZERO = typer.Option(
    False, "--keep-zero-scores", help="Do not exclude responses whose human score is 0."
)
#: The scoring command's evaluator and declarations: its stored parameters are the options
#: the command sets (those with a flag and exclude_zero_scores, in the declared order);
#: --human and --system it spells itself (see above).
SCORING = MetricCommand(
    "scoring",
    "assay.scoring.evaluator:ScoringEvaluator",
    OPTIONS,
    skip=("human", "system"),
    stored=tuple(o.name for o in OPTIONS if o.flag or o.name == "exclude_zero_scores"),
    format_help="Print the records as JSON (default) or the main tables as a table.",
)


def register(app: typer.Typer) -> None:
    """Add the ``scoring`` command to ``app``."""

    @app.command("scoring")
    @guarded
    @SCORING.flags
    def scoring(
        data: Path | None = _DATA,
        human: str | None = _HUMAN,
        system: str | None = _SYSTEM,
        out_dir: Path = _OUT_DIR,
        keep_zero_scores: bool = _KEEP_ZERO,
        config: Path | None = _CONFIG,
        trim_min: float | None = _TRIM_MIN,
        trim_max: float | None = _TRIM_MAX,
        trim_tolerance: float = _TRIM_TOL,
        scale_with: str | None = _SCALE_WITH,
        id_column: str | None = _ID,
        scheduler: str | None = scheduler_option(),
        scheduler_timeout: float = scheduler_timeout_option(),
        **given: Any,
    ) -> None:
        """Evaluate system scores against human scores: agreement, kappa, QWK, r, SMD, R2,
        PRMSE, DSM, fairness. With --config (or --trim-min/--trim-max), RSMTool's rsmeval."""
        _check_early(given)
        _check_out_dir(out_dir)
        if config is not None or trim_min is not None or trim_max is not None:
            if given["out"] is not None:
                raise InvalidInputError(
                    "rsmeval mode writes its tables to --out-dir; --out is not for it",
                    source="--out",
                )
            flags = {
                "predictions_file": data,
                "human_score_column": human,
                "system_score_column": system,
                "second_human_score_column": given["human2"],
                "subgroups": given["group_columns"],
                "exclude_zero_scores": not keep_zero_scores,
                "rater_error_variance": given["rater_error_variance"],
                "trim_min": trim_min,
                "trim_max": trim_max,
                "trim_tolerance": trim_tolerance,
                "scale_with": scale_with,
                "id_column": id_column,
            }
            names = ("ci", "ci_method", "seed", "num_bootstrap", "cluster")
            options: dict[str, Any] = {n: given[n] for n in names} | {"by": list(given["by"])}
            fmt, save, db = given["fmt"], given["save"], given["db"]
            run_rsmeval_command(config, flags, out_dir, fmt, options, save=save, db=db)
            return
        if data is None or human is None or system is None:
            raise InvalidInputError(
                "give --data, --human and --system (or --config FILE.json)", source="--data"
            )
        from functools import partial

        given |= {"human": human, "system": system, "exclude_zero_scores": not keep_zero_scores}
        batch = partial(_add_batch, source=str(data))
        address = scheduler_address(scheduler, scheduler_timeout)
        SCORING.run(
            given,
            add=lambda ev: add_table(ev, data, batch, scheduler=address),
            dataset=str(data),
            inputs={},
            compute=lambda ev, wanted: ev.tables(),
            show=lambda view, kwargs: _publish(view, out_dir, kwargs),
        )


def _add_batch(ev: Any, frame: Any, source: str) -> None:
    ev.add(frame, source=source)


def _publish(view: ScoringTables, out_dir: Path, kwargs: dict[str, Any]) -> None:
    """Serialise everything, store it (``--save``), write ``--out-dir`` at once (and
    ``--out``), then print. ``kwargs``: what :meth:`MetricCommand.run` would publish with."""
    from assay.io.files import write_files_atomic

    files = view.csv_files()
    files[METRICS_JSON] = view.metrics.to_json(indent=2) + "\n"
    _check_out_dir(out_dir, list(files))
    # the store first: a failing --save leaves --out-dir untouched
    save_metrics(
        view.metrics,
        kind=kwargs["kind"],
        dataset=kwargs["dataset"],
        parameters=kwargs["parameters"],
        save=kwargs["save"],
        url=kwargs["db"],
    )
    write_files_atomic(out_dir, files)
    if kwargs["out"] is not None:  # the records' JSON to --out (printed as --format says)
        emit(view.metrics, out=kwargs["out"])
    if kwargs["fmt"] is OutputFormat.table:
        _print_tables(view, out_dir)
    elif kwargs["out"] is None:
        emit(view.metrics, fmt=kwargs["fmt"])
    if view.dropped:
        typer.echo(f"dropped responses: {view.dropped}", err=True)
    for note in view.notes:
        typer.echo(f"note: {note}", err=True)
