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

import sys
from pathlib import Path
from typing import Any

import typer

from assay.cli_support import OutputFormat, db_option, guarded, publish, save_option
from assay.errors import InvalidInputError

__all__ = ["register", "pairwise_app"]

pairwise_app = typer.Typer(
    name="pairwise",
    help="Pairwise LLM judging with position swap (SubEval): consistency, win rates, ratings.",
    no_args_is_help=True,
)

_FMT = typer.Option(OutputFormat.json, "--format", "-f", help="json (default) or table.")
_OUT = typer.Option(None, "--out", "-o", help="Write the metric records (JSON) to this file.")
_OUT_DIR = typer.Option(..., "--out-dir", help="Folder for the run folder (a new one per run).")
_REF = typer.Option(
    ..., "--reference-model", help="The reference model every model is compared with."
)
_NOPT = typer.Option(2, "--nopt", help="Options the judge chooses from: 2, 3 or 4.")
_XLSX = typer.Option(False, "--xlsx", help="Also write the win tables as .xlsx.")
_NBOOT = typer.Option(200, "--n-boot", help="Bootstrap resamples for the rating intervals.")
_BSEED = typer.Option(0, "--bootstrap-seed", help="Seed of the bootstrap.")
_CONF = typer.Option(0.95, "--confidence", help="Confidence level of the intervals.")


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for text in values or [] for v in text.split(",") if v.strip()]


def _check_out(out: Path | None) -> None:
    if out is not None:
        from assay.io.files import check_writable_file

        check_writable_file(out, option="--out")


def _report(
    rows: Any, *, stem: str, judge: str, opts: dict[str, Any], publish_kw: dict[str, Any]
) -> Any:
    """Score the judged rows, write a new run folder, then store/print the records."""
    from assay.llm.pairwise.analysis import analyze
    from assay.llm.pairwise.report import new_run_folder, run_files, write_run

    ref = opts["reference_model"]
    analysis = analyze(
        rows,
        reference_model=ref,
        n_boot=opts["n_boot"],
        confidence=opts["confidence"],
        seed=opts["bootstrap_seed"],
    )
    metrics_json = analysis.metrics.to_json(indent=2) + "\n"
    files = run_files(
        analysis,
        rows,
        reference_model=ref,
        judge=judge,
        nopt=opts["nopt"],
        metrics_json=metrics_json,
        xlsx=opts["xlsx"],
    )
    folder = new_run_folder(opts["out_dir"], stem)
    write_run(folder, files)
    typer.echo(f"run folder: {folder}", err=True)
    publish(
        analysis.metrics,
        fmt=opts["fmt"],
        out=opts["out"],
        save=opts["save"],
        db=opts["db"],
        kind="pairwise",
        title="pairwise",
        **publish_kw,
    )
    return analysis


def _prepare(opts: dict[str, Any], model_list: list[str]) -> tuple[Any, Any]:
    """Read and check the table, build the comparisons and the judge items."""
    from assay.llm.pairwise.judge import judge_items
    from assay.llm.pairwise.table import build_comparisons, read_table

    if not model_list:
        raise InvalidInputError("give at least one model", source="--models")
    data, ref = opts["data"], opts["reference_model"]
    table = read_table(
        data, models=model_list, reference_model=ref, fill_contents=_split(opts["fill_contents"])
    )
    comparisons = build_comparisons(table, model_list, ref, mode=opts["mode"], seed=opts["seed"])
    if not comparisons:
        raise InvalidInputError("no question has answers of both models", source=str(data))
    params = {"temperature": 0.0, "max_tokens": opts["max_tokens"]}
    return comparisons, judge_items(comparisons, nopt=opts["nopt"], params=params)


def _runner(opts: dict[str, Any]) -> Any:
    from assay.llm.models.spec import load_model, parse_model_spec
    from assay.llm.runner import RetryPolicy, Runner

    judge, timeout, cache = opts["judge"], opts["timeout"], opts["cache"]
    remote = parse_model_spec(judge).kind == "openai"
    return Runner(
        load_model(judge, timeout=timeout) if remote else load_model(judge),
        max_concurrency=opts["concurrency"],
        rpm=opts["rpm"],
        timeout=timeout,
        retry=RetryPolicy(max_retries=opts["retries"]),
        cache=False if opts["no_cache"] else (cache if cache is not None else True),
        quiet=opts["quiet"],
    )


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


def _print_items(items: Any) -> None:
    import json

    for it in items:
        d = {"id": it.id, "messages": list(it.messages), "params": dict(it.params)}
        sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")


def _item_rows(items: Any, records: Any, rows: Any) -> Any:
    from assay.store import ItemRecord

    keys = [f"{q};{a};{b}" for q, a, b in zip(rows["index"], rows["model_a"], rows["model_b"])]
    choice = dict(zip(keys, rows["choice"]))
    return [
        ItemRecord.from_llm(it, r, parsed=choice.get(r.id) or None) for it, r in zip(items, records)
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
    seed: int = typer.Option(2680, "--seed", help="Seed of random mode (negative: swap roles)."),
    fill_contents: list[str] = typer.Option(
        None,
        "--fill-contents",
        help="Columns whose cells are file paths to read (repeat or comma-separate).",
    ),
    out_dir: Path = _OUT_DIR,
    xlsx: bool = _XLSX,
    concurrency: int = typer.Option(
        8, "--concurrency", "-c", help="Judge calls in flight at most."
    ),
    rpm: float = typer.Option(None, "--rpm", help="Requests per minute at most."),
    timeout: float = typer.Option(150.0, "--timeout", help="Seconds per judge call."),
    retries: int = typer.Option(5, "--retries", help="Retries per call on 429/5xx/timeouts."),
    max_tokens: int = typer.Option(1024, "--max-tokens", help="Cap on the judge's reply."),
    cache: Path = typer.Option(None, "--cache", help="Response cache file (default: assay's)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="No response cache (no resume)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the judge items (JSONL); no call."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    n_boot: int = _NBOOT,
    bootstrap_seed: int = _BSEED,
    confidence: float = _CONF,
    fmt: OutputFormat = _FMT,
    out: Path = _OUT,
    save: bool = save_option(),
    db: str = db_option(),
) -> None:
    """Judge every model against the reference model, then score (see docs/pairwise.md)."""
    from assay.llm.models.spec import parse_model_spec
    from assay.llm.pairwise.judge import judged_rows
    from assay.llm.pairwise.prompts import PROMPT_VERSION, check_nopt

    opts = dict(locals())
    check_nopt(nopt)
    model_list = _split(models)
    judge_spec = parse_model_spec(judge)
    _check_out(out)
    comparisons, items = _prepare(opts, model_list)  # every input check, before any call
    if dry_run:
        _print_items(items)
        return
    runner = _runner(opts)
    records = runner.run(items)
    rows = judged_rows(comparisons, records, judge=judge_spec.model, nopt=nopt)
    params = {
        "models": model_list,
        "reference_model": reference_model,
        "nopt": nopt,
        "mode": mode,
        "seed": seed,
        "prompt_version": PROMPT_VERSION,
    }
    analysis = _report(
        rows,
        stem=f"{data.stem}_record{{i}}_{judge_spec.model}_{nopt}",
        judge=judge_spec.model,
        opts=opts,
        publish_kw={
            "dataset": str(data),
            "model": judge,
            "parameters": params,
            "items": _item_rows(items, records, rows) if save else None,
        },
    )
    if analysis.counts["failed"]:
        typer.echo(
            f"{analysis.counts['failed']} judge calls failed; run again to retry them", err=True
        )
        raise typer.Exit(1)


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
    n_boot: int = _NBOOT,
    bootstrap_seed: int = _BSEED,
    confidence: float = _CONF,
    fmt: OutputFormat = _FMT,
    out: Path = _OUT,
    save: bool = save_option(),
    db: str = db_option(),
) -> None:
    """Recompute every output from an existing record table; no judge call."""
    from assay.llm.pairwise.prompts import check_nopt
    from assay.llm.pairwise.recordfile import read_records

    opts = dict(locals())
    check_nopt(nopt)
    _check_out(out)
    rows, judge = read_records(records, nopt=nopt)
    present = set(rows["model_a"]) | set(rows["model_b"])
    if reference_model not in present:
        raise InvalidInputError(
            f"reference model {reference_model!r} is in no comparison "
            f"(models: {', '.join(sorted(present))})",
            source=str(records),
            field="A/B",
        )
    params = {"reference_model": reference_model, "nopt": nopt, "rescored": True}
    _report(
        rows,
        stem=f"{records.stem}_score{{i}}",
        judge=judge,
        opts=opts,
        publish_kw={
            "dataset": str(records),
            "model": judge,
            "parameters": params,
            "items": _rescored_items(rows) if save else None,
        },
    )


def register(app: typer.Typer) -> None:
    """Add ``assay pairwise`` to the ``assay`` command."""
    app.add_typer(pairwise_app, name="pairwise")
