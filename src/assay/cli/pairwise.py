"""``assay pairwise judge|score``: pairwise LLM judging with position-bias checks (SubEval).

* ``assay pairwise judge --data T.xlsx --models M1,M2 --reference-model R --judge SPEC
  --nopt 2 --out-dir DIR``: every model against the reference, both orders (or one
  seeded random order), through the runner (cache, retries, resume); writes a new run
  folder and prints the metric records.
* ``assay pairwise score --records record_J_2.tsv --reference-model R --nopt 2 --out-dir DIR``:
  the same outputs from an existing record table (the original's TSV or assay's JSONL),
  with no judge call.

Heavy modules are imported inside the commands, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.declared import declared_flag
from assay.cli.llm_run import RunOpts
from assay.cli.options import (
    bootstrap_seed_option,
    by_option,
    interval_kwargs,
    interval_options,
)
from assay.cli.support import (
    OutputFormat,
    db_option,
    format_option,
    guarded,
    out_option,
    publish,
    save_option,
)
from assay.errors import InvalidInputError
from assay.llm.pairwise.declared import OPTIONS

__all__ = ["register", "pairwise_app"]

pairwise_app = typer.Typer(
    name="pairwise",
    help="Pairwise LLM judging with position swap (SubEval): consistency, win rates, ratings.",
    no_args_is_help=True,
)

_FMT = format_option("json (default) or table.")
_OUT = out_option("Write the metric records (JSON) to this file.")
_OUT_DIR = typer.Option(..., "--out-dir", help="Folder for the run folder (a new one per run).")
_REF = declared_flag(OPTIONS["reference_model"])
_NOPT = declared_flag(OPTIONS["nopt"])
_XLSX = typer.Option(False, "--xlsx", help="Also write the win tables as .xlsx.")
# The one seed rule: --seed seeds everything random (on `judge` random mode's order too);
# --bootstrap-seed re-seeds the interval alone (`judge` only: `score` asks no model).
_CI, _CI_METHOD, _NUM_BOOTSTRAP, _ = interval_options()
_BSEED = bootstrap_seed_option("random mode's order of the two answers")
_CLUSTER = typer.Option(
    None,
    "--cluster",
    help="A question-level column of the input table whose values are clusters (e.g. a "
    "source document): the bootstrap draws whole clusters of questions (needs --ci). "
    "Recorded as parameters.cluster.",
)
_BY = by_option(
    "A question-level column (task, or a column of the input table such as a topic)",
    "No judge call is made for it.",
)


def _intervals(
    ci: float | None,
    ci_method: str,
    num_bootstrap: int,
    seed: tuple[int, str],
    cluster: str | None = None,
) -> dict[str, Any]:
    """The interval options, checked (errors name the flag given: ``seed`` is the
    bootstrap's seed and its flag)."""
    flags = {"--seed": seed[1]}
    try:  # the ratings' interval is always computed: check the options with or without --ci
        level = 0.95 if ci is None else ci
        interval_kwargs(
            level, ci_method, num_bootstrap, seed[0], cluster if ci is not None else None
        )
        if cluster is not None and ci is None:
            raise InvalidInputError(
                f"names the unit the bootstrap resamples ({cluster!r}): give --ci too",
                source="--cluster",
            )
    except InvalidInputError as e:
        raise InvalidInputError(e.reason, source=flags.get(str(e.source), e.source)) from None
    return {"ci": ci, "ci_method": ci_method, "num_bootstrap": num_bootstrap, "cluster": cluster}


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for text in values or [] for v in text.split(",") if v.strip()]


def _check_out(out: Path | None) -> None:
    if out is not None:
        from assay.io.files import check_writable_file

        check_writable_file(out, option="--out")


def _write_folder(analysis: Any, rows: Any, *, stem: str, judge: str, opts: dict[str, Any]) -> None:
    """Write a new run folder with every table of the analysis."""
    from assay.llm.pairwise.report import new_run_folder, run_files, write_run

    files = run_files(
        analysis,
        rows,
        reference_model=opts["reference_model"],
        judge=judge,
        nopt=opts["nopt"],
        metrics_json=analysis.metrics.to_json(indent=2) + "\n",
        xlsx=opts["xlsx"],
    )
    folder = new_run_folder(opts["out_dir"], stem)
    write_run(folder, files)
    typer.echo(f"run folder: {folder}", err=True)


def _check_out_dir(out_dir: Path) -> None:
    """``--out-dir`` is (or can become) a folder; checked before any call."""
    import os

    path = out_dir
    while not path.exists() and path != path.parent:
        path = path.parent
    if not path.is_dir():
        raise InvalidInputError(f"{path} is not a folder", source="--out-dir")
    if not os.access(path, os.W_OK | os.X_OK):
        raise InvalidInputError(f"no permission to write in {path}", source="--out-dir")


def _rescored_items(rows: Any) -> Any:
    """Item rows of a re-scored record table: stored reply and choice (no prompt was kept)."""
    from assay.store import ItemRecord

    return [
        ItemRecord(
            item_id=f"{r['index']};{r['model_a']};{r['model_b']}",
            prompt=[],
            ok=r["status"] != "failed",
            raw_answer=r["reply"] if isinstance(r["reply"], str) else None,
            parsed=r["choice"] or None,
            error=r["error"] or r["reason"] or None,
        )
        for r in rows.to_dict("records")
        if r["status"] != "em"
    ]


@pairwise_app.command("judge")
@guarded
def judge_command(
    data: Path = typer.Option(..., "--data", help="Input table: .xlsx, .csv, .tsv or .jsonl."),
    models: list[str] = typer.Option(..., "--models", help="Models to evaluate (comma-separated)."),
    reference_model: str = _REF,
    judge: str = typer.Option(..., "--judge", help="Judge model spec (see `assay llm`)."),
    nopt: int = _NOPT,
    mode: str = typer.Option("dual", "--mode", help="dual (both orders) or random (one order)."),
    seed: int = typer.Option(
        2680,
        "--seed",
        help="Seeds everything random in the command: random mode's order (negative: swap "
        "roles) and the bootstrap intervals (|seed|; --bootstrap-seed re-seeds them alone).",
    ),
    fill_contents: list[str] = typer.Option(
        None,
        "--fill-contents",
        help="Columns whose cells are file paths to read (repeat or comma-separate).",
    ),
    out_dir: Path = _OUT_DIR,
    xlsx: bool = _XLSX,
    concurrency: int = RunOpts.concurrency,
    rpm: float = RunOpts.rpm,
    timeout: float = typer.Option(150.0, "--timeout", help="Seconds per judge call attempt."),
    retries: int = RunOpts.retries,
    max_errors: int = RunOpts.max_errors,
    max_tokens: int = typer.Option(1024, "--max-tokens", help="Cap on the judge's reply."),
    structured: str = RunOpts.structured,
    cache: Path = RunOpts.cache,
    no_cache: bool = RunOpts.no_cache,
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the judge items (JSONL) and, on stderr, the calls, cached calls and "
        "prompt tokens a run would pay; no call.",
    ),
    price_per_mtok: str | None = RunOpts.price_per_mtok,
    repeats: int = typer.Option(
        1,
        "--repeats",
        help="Judge calls per comparison (distinct seeds, each cached): a JudgeRepeatability "
        "record gives how often the verdict changes; the other records are repeat 0's.",
    ),
    human_labels: Path | None = typer.Option(
        None,
        "--human-labels",
        help="JSONL, CSV or Parquet of human preferences: id (a question's index), model, "
        "opponent, value (1: model better, 0: opponent better, 0.5: tie). Each labelled pair "
        "gets a PPI++ WinRate (estimator=ppi) and a JudgeAgreement record with the "
        "position-swap flip rate.",
    ),
    quiet: bool = RunOpts.quiet,
    ci: float | None = _CI,
    ci_method: str = _CI_METHOD,
    num_bootstrap: int = _NUM_BOOTSTRAP,
    bootstrap_seed: int | None = _BSEED,
    by: list[str] = _BY,
    cluster: str | None = _CLUSTER,
    fmt: OutputFormat = _FMT,
    out: Path = _OUT,
    save: bool = save_option(),
    db: str = db_option(),
) -> None:
    """Judge every model against the reference model, then score (see docs/pairwise.md).

    Runs through the one LLM driver: failed calls make the run fail (exit 1; stored as
    failed, the run folder written all the same) unless --max-errors allows them;
    Ctrl-C/SIGTERM store what was done and the same command resumes from the cache.
    """
    from assay.cli.llm_run import print_dry_run, print_estimate, run_task
    from assay.llm.driver import dry_run_items
    from assay.llm.estimate import parse_prices
    from assay.llm.options import run_options
    from assay.llm.pairwise.task import PairwiseTask

    prices = parse_prices(price_per_mtok)
    opts = dict(locals())
    boot = (abs(seed), "--seed") if bootstrap_seed is None else (bootstrap_seed, "--bootstrap-seed")
    intervals = _intervals(ci, ci_method, num_bootstrap, boot, cluster)
    options = run_options(
        concurrency=concurrency,
        rpm=rpm,
        timeout=timeout,
        retries=retries,
        max_errors=max_errors,
        cache=cache,
        no_cache=no_cache,
        quiet=quiet,
        structured=structured,
    )
    _check_out(out)
    _check_out_dir(out_dir)
    task = PairwiseTask(  # every input check, before any call
        data,
        models=_split(models),
        reference_model=reference_model,
        nopt=nopt,
        mode=mode,
        seed=seed,
        fill_contents=_split(fill_contents),
        max_tokens=max_tokens,
        bootstrap_seed=bootstrap_seed,
        by=_split(by),
        repeats=repeats,
        **intervals,
    )
    prefs = None
    if human_labels is not None:  # checked before any call
        from assay.cli.support import check_input_file
        from assay.llm.pairwise.human_labels import read_preferences

        judged = [(c.index, c.model_a, c.model_b) for c in task.comparisons]
        prefs = read_preferences(check_input_file(human_labels, option="--human-labels"), judged)
    if dry_run:
        print_dry_run(dry_run_items(task, options))
        print_estimate(task, judge, options, prices)
        return
    from assay.llm.caution import demo_caution

    caution = demo_caution(judge)

    def write_folder(run: Any) -> None:
        from assay.llm.caution import PARAMETER, announce

        lines = [caution] if caution is not None else []
        if caution is not None:  # the run's parameters and every judged record say it
            for m in run.metrics:
                m.parameters[PARAMETER] = caution
        if prefs is not None and task.rows is not None:
            from assay.llm.pairwise.human_labels import preference_records
            from assay.results import MetricSet
            from assay.uncertainty.intervals import ci_options

            level = intervals["ci"]
            ci = ci_options(
                0.95 if level is None else level,
                num_bootstrap=intervals["num_bootstrap"],
                seed=boot[0],
                cluster=intervals["cluster"],
            )
            assert ci is not None
            clusters = task._by_values.get(intervals["cluster"]) if intervals["cluster"] else None
            new = preference_records(task.rows, prefs, ci, clusters)
            for m in new:
                if PARAMETER in m.parameters and m.type == "JudgeAgreement":
                    line = f"{m.parameters['model']} vs {m.parameters['opponent']}: "
                    lines.append(line + m.parameters[PARAMETER])
                    announce(lines[-1])
            run.metrics = MetricSet([*run.metrics, *new])
        if lines:
            run.parameters[PARAMETER] = "; ".join(lines)
        stem = f"{data.stem}_record{{i}}_{task.judge_name}_{nopt}"
        _write_folder(task.analysis, task.rows, stem=stem, judge=task.judge_name, opts=opts)

    run_task(
        task,
        judge,
        options,
        out=out,
        fmt=fmt,
        save=save,
        db=db,
        title="pairwise",
        after=write_folder,
    )


@pairwise_app.command("score")
@guarded
def score_command(
    records: Path = typer.Option(
        ..., "--records", help="record_{judge}_{nopt}.tsv or comparisons.jsonl."
    ),
    reference_model: str = _REF,
    nopt: int = _NOPT,
    out_dir: Path = _OUT_DIR,
    xlsx: bool = _XLSX,
    ci: float | None = _CI,
    ci_method: str = _CI_METHOD,
    num_bootstrap: int = _NUM_BOOTSTRAP,
    seed: int = typer.Option(
        2680,
        "--seed",
        help="Seeds everything random in the command: the bootstrap intervals (the same "
        "default as `judge`, so its intervals come out again).",
    ),
    by: list[str] = _BY,
    cluster: str | None = _CLUSTER,
    fmt: OutputFormat = _FMT,
    out: Path = _OUT,
    save: bool = save_option(),
    db: str = db_option(),
) -> None:
    """Recompute every output from an existing record table; no judge call."""
    from assay.llm.pairwise.prompts import check_nopt
    from assay.llm.pairwise.recordfile import read_records
    from assay.llm.pairwise.slicing import check_by

    opts = dict(locals())
    check_nopt(nopt)
    intervals = _intervals(ci, ci_method, num_bootstrap, (seed, "--seed"), cluster)
    _check_out(out)
    _check_out_dir(out_dir)
    rows, judge = read_records(records, nopt=nopt)
    present = set(rows["model_a"]) | set(rows["model_b"])
    if reference_model not in present:
        raise InvalidInputError(
            f"reference model {reference_model!r} is in no comparison "
            f"(models: {', '.join(sorted(present))})",
            source=str(records),
            field="A/B",
        )
    try:
        slice_by = check_by(rows, _split(by))
    except InvalidInputError as e:
        raise InvalidInputError(f"{e.field!r} {e.reason}", source="--by") from None
    if cluster is not None:
        from assay.llm.pairwise.slicing import question_clusters

        try:
            question_clusters(rows, cluster, sorted(set(rows["index"])))
        except InvalidInputError as e:
            raise InvalidInputError(f"{e.field!r} {e.reason}", source="--cluster") from None
    from assay.llm.pairwise.analysis import analyze

    analysis = analyze(rows, reference_model=reference_model, by=slice_by, seed=seed, **intervals)
    _write_folder(analysis, rows, stem=f"{records.stem}_score{{i}}", judge=judge, opts=opts)
    publish(
        analysis.metrics,
        fmt=fmt,
        out=out,
        save=save,
        db=db,
        kind="pairwise",
        title="pairwise",
        dataset=str(records),
        model=judge,
        parameters={"reference_model": reference_model, "nopt": nopt, "rescored": True},
        items=_rescored_items(rows) if save else None,
    )


def register(app: typer.Typer) -> None:
    """Add ``assay pairwise`` to the ``assay`` command."""
    app.add_typer(pairwise_app, name="pairwise")
