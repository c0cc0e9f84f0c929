"""``assay scoring --config FILE.json`` (and ``--trim-min/--trim-max``): the rsmeval pipeline.

With ``--config`` the rsmeval configuration decides everything and the tables are written as
``<experiment_id>_<table>.csv`` (RSMTool's names); the other scoring options must not be given.
With ``--trim-min``/``--trim-max`` the options make the configuration and the tables are
written as ``<table>.csv``. The folder is written all at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli_support import OutputFormat
from assay.errors import InvalidInputError

__all__ = ["run_rsmeval_command"]


def _from_flags(flags: dict[str, Any]) -> Any:
    from assay.scoring.rsmeval_config import RsmevalConfig

    if flags["trim_min"] is None or flags["trim_max"] is None:
        raise typer.BadParameter("give both --trim-min and --trim-max", param_hint="--trim-min")
    for opt, key in (
        ("--data", "predictions_file"),
        ("--human", "human_score_column"),
        ("--system", "system_score_column"),
    ):
        if flags[key] is None:
            raise typer.BadParameter(f"{opt} is required", param_hint=opt)
    h2 = list(flags["second_human_score_column"] or [])
    if len(h2) > 1:
        raise typer.BadParameter("one --human2 with --trim-min/--trim-max", param_hint="--human2")
    cfg = {k: v for k, v in flags.items() if v is not None}
    cfg["experiment_id"] = ""
    cfg["predictions_file"] = str(Path(flags["predictions_file"]).resolve())
    cfg["second_human_score_column"] = h2[0] if h2 else None
    cfg["subgroups"] = list(flags["subgroups"])
    cfg["id_column"] = flags["id_column"] or ""
    return RsmevalConfig.from_dict(cfg, base=Path.cwd(), source="options")


def run_rsmeval_command(
    config: Path | None, flags: dict[str, Any], out_dir: Path, fmt: OutputFormat
) -> None:
    """Run the pipeline, write every table into ``out_dir`` at once, print a summary."""
    from assay.io.files import write_files_atomic
    from assay.scoring.rsmeval import rsmeval_tables
    from assay.scoring.rsmeval_config import RsmevalConfig

    if config is not None:
        given = [
            k
            for k in (
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
            if flags[k] is not None and flags[k] != []
        ]
        if not flags["exclude_zero_scores"]:
            given.append("keep_zero_scores")
        if given:
            raise typer.BadParameter(
                "the configuration file decides the columns and options; drop the other "
                "scoring options",
                param_hint="--config",
            )
        cfg = RsmevalConfig.from_file(config)
        prefix = cfg.experiment_id
    else:
        cfg = _from_flags(flags)
        prefix = ""
    tables = rsmeval_tables(cfg)
    files = tables.csv_files(prefix)
    for name in files:
        if (out_dir / name).is_dir():
            raise InvalidInputError(f"{out_dir / name} is a directory", source="--out-dir")
    write_files_atomic(out_dir, files)
    if fmt is OutputFormat.table:
        from rich.console import Console

        from assay.scoring.cli import frame_table

        console = Console()
        for name in ("eval", "consistency", "true_score_eval"):
            if name in tables:
                console.print(frame_table(tables[name].T, title=name))
    else:
        typer.echo(tables["eval"].to_json(orient="index", indent=2))
    typer.echo(f"{len(files)} tables written to {out_dir}", err=True)
