"""``assay scoring --config FILE.json`` (and ``--trim-min/--trim-max``): the rsmeval pipeline.

With ``--config`` the rsmeval configuration decides everything and the tables are written as
``<experiment_id>_<table>.csv`` (RSMTool's names); the other scoring options must not be given,
except the interval and slice options (``--ci``, ``--ci-method``, ``--num-bootstrap``,
``--seed``, ``--cluster``, ``--by``), which go on the records, never into the tables.
With ``--trim-min``/``--trim-max`` the options make the configuration and the tables are
written as ``<table>.csv``. The folder is written all at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.scoring_tables import print_tables
from assay.cli.support import OutputFormat
from assay.errors import InvalidInputError

__all__ = ["run_rsmeval_command"]

# the scoring options a configuration file decides (given both: refused)
CONFIG_DECIDES = (
    "predictions_file",
    "human_score_column",
    "system_score_column",
    "trim_min",
    "trim_max",
    "scale_with",
    "id_column",
    "rater_error_variance",
    "subgroups",
    "second_human_score_column",
)


def _from_flags(flags: dict[str, Any]) -> Any:
    from assay.scoring.rsmeval_config import RsmevalConfig

    if flags["trim_min"] is None or flags["trim_max"] is None:
        raise InvalidInputError("give both --trim-min and --trim-max", source="--trim-min")
    for opt, key in (
        ("--data", "predictions_file"),
        ("--human", "human_score_column"),
        ("--system", "system_score_column"),
    ):
        if flags[key] is None:
            raise InvalidInputError(f"{opt} is required", source=opt)
    h2 = list(flags["second_human_score_column"] or [])
    if len(h2) > 1:
        raise InvalidInputError("one --human2 with --trim-min/--trim-max", source="--human2")
    cfg = {k: v for k, v in flags.items() if v is not None}
    cfg["experiment_id"] = ""
    cfg["predictions_file"] = str(Path(flags["predictions_file"]).resolve())
    cfg["second_human_score_column"] = h2[0] if h2 else None
    cfg["subgroups"] = list(flags["subgroups"])
    cfg["id_column"] = flags["id_column"] or ""
    return RsmevalConfig.from_dict(cfg, base=Path.cwd(), source="options")


def _config_only(config: Path, flags: dict[str, Any]) -> Any:
    """The configuration file; refused when other scoring options are given too."""
    from assay.scoring.rsmeval_config import RsmevalConfig

    given = [k for k in CONFIG_DECIDES if flags[k] is not None and flags[k] != []]
    if not flags["exclude_zero_scores"]:
        given.append("keep_zero_scores")
    if given:
        raise InvalidInputError(
            "the configuration file decides the columns and options; drop the other "
            "scoring options",
            source="--config",
        )
    return RsmevalConfig.from_file(config)


def run_rsmeval_command(
    config: Path | None,
    flags: dict[str, Any],
    out_dir: Path,
    fmt: OutputFormat,
    options: dict[str, Any] | None = None,
    *,
    save: bool = False,
    db: str | None = None,
) -> None:
    """Run the pipeline, store it (``save``), write every table into ``out_dir`` at once,
    print a summary. ``options``: ``ci``, ``ci_method``, ``num_bootstrap``, ``seed``,
    ``cluster``, ``by`` (see :func:`assay.scoring.rsmeval.rsmeval_tables`)."""
    from assay.cli.options import CI_OPTIONS
    from assay.cli.support import save_metrics
    from assay.io.files import write_files_atomic
    from assay.scoring.rsmeval import rsmeval_tables

    cfg = _config_only(config, flags) if config is not None else _from_flags(flags)
    if cfg.ignored:
        typer.echo(f"ignored (as rsmeval ignores them): {', '.join(cfg.ignored)}", err=True)
    options = dict(options or {})
    try:
        tables = rsmeval_tables(cfg, **options)
    except InvalidInputError as e:  # an interval option: named as its flag
        flag = CI_OPTIONS.get(str(e.source), e.source)
        raise InvalidInputError(e.reason, source=flag, record=e.record, field=e.field) from None
    files = tables.files(cfg.experiment_id, cfg.file_format)
    for name in files:
        if (out_dir / name).is_dir():
            raise InvalidInputError(f"{out_dir / name} is a directory", source="--out-dir")
    params = {
        "rsmeval": cfg.experiment_id or None,
        "human": "sc1",
        "system": cfg.system_score_column,
        "score_types": cfg.score_types,
        "group_columns": cfg.subgroups,
        "exclude_zero_scores": cfg.exclude_zero_scores,
        **({"by": options["by"]} if options.get("by") else {}),
    }
    if options.get("ci") is not None:
        params |= {k: options[k] for k in ("ci", "ci_method", "num_bootstrap", "seed")}
        params |= {"cluster": options["cluster"]} if options.get("cluster") else {}
    # the store first: a failing --save leaves --out-dir untouched
    save_metrics(
        tables.metrics,
        kind="scoring",
        dataset=str(cfg.predictions_file),
        parameters=params,
        save=save,
        url=db,
    )
    write_files_atomic(out_dir, files)
    if fmt is OutputFormat.table:
        print_tables(tables)
    else:
        typer.echo(tables["eval"].to_json(orient="index", indent=2))
    typer.echo(f"{len(files)} tables written to {out_dir}", err=True)
    for note in tables.notes:
        typer.echo(f"note: {note}", err=True)
