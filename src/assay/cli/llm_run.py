"""What every LLM evaluation command shares: its run options and its last step.

A command parses its own options, builds its task, and calls :func:`run_task`, which
checks the outputs before the first call, runs the task through the one driver
(:func:`assay.llm.evaluate`), stores the run with its status and item rows, prints or
writes the records, and exits with one rule for every command:

* exit 0: the run finished with no more failed calls than ``--max-errors`` allows;
* exit 1: calls failed beyond that (their count on stderr; the run stored as ``failed``,
  its records written all the same, since nothing paid for is thrown away);
* exit 130/143: SIGINT/SIGTERM; the calls made so far are stored (the unfinished ones
  marked ``interrupted``), their answers are cached, and the same command resumes;
* exit 2: a bad option or bad data, before any call.

Only typer is imported at module level.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

__all__ = [
    "run_task",
    "check_outputs",
    "item_rows",
    "print_dry_run",
    "print_estimate",
    "MODEL_HELP",
    "RunOpts",
]

MODEL_HELP = (
    "Model spec: 'embedded', 'openai:MODEL', or 'http://HOST:PORT/v1#MODEL' "
    "(default: $ASSAY_MODEL or embedded)."
)


class RunOpts:
    """The shared run options, declared once (typer ``Option`` objects by name)."""

    concurrency = typer.Option(8, "--concurrency", "-c", help="Calls in flight at most.")
    rpm = typer.Option(None, "--rpm", help="Requests per minute at most.")
    timeout = typer.Option(60.0, "--timeout", help="Seconds per attempt.")
    retries = typer.Option(5, "--retries", help="Retries per call on 429/5xx/timeouts.")
    max_errors = typer.Option(
        None,
        "--max-errors",
        help="Failed calls allowed: more stop the run (stored as failed, exit 1). "
        "Default: the run goes on, but any failed call makes it fail (exit 1).",
    )
    cache = typer.Option(
        None, "--cache", help="Response cache file (default: $ASSAY_LLM_CACHE or assay's)."
    )
    no_cache = typer.Option(False, "--no-cache", help="No response cache (so no resume).")
    quiet = typer.Option(False, "--quiet", "-q", help="No progress bar.")
    price_per_mtok = typer.Option(
        None,
        "--price-per-mtok",
        metavar="IN,OUT",
        help="With --dry-run: prices per million input and output tokens, for the expected "
        "cost of the calls to pay.",
    )
    structured = typer.Option(
        "auto",
        "--structured",
        help="Constrain replies to the task's reply shape: auto (where the model supports "
        "it: the embedded model and llama.cpp servers by grammar; OpenAI, vLLM, Ollama by "
        "response_format json_schema), on, or off.",
    )


def check_outputs(*, out: Path | None, save: bool, db: str | None) -> None:
    """Every output is usable before the first call: ``--out`` writable, the store opens."""
    if out is not None:
        from assay.io.files import check_writable_file

        check_writable_file(out, option="--out")
    if save:
        from assay.store import Store

        Store(db).close()


def print_dry_run(items: Any, limit: int | None = None) -> None:
    """The items as JSONL on stdout (what ``--dry-run`` shows); no call is made."""
    import json

    for it in list(items)[:limit]:
        d = {"id": it.id, "messages": list(it.messages), "params": dict(it.params)}
        sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")


def print_estimate(
    task: Any, model: str | None, options: Any, prices: Any = None, *, start: bool = True
) -> None:
    """``--dry-run``'s line on stderr: the calls a run would make, how many are cached, their
    prompt tokens and, with ``prices`` (IN, OUT per million tokens), the expected cost
    (:mod:`assay.llm.estimate`); no call is made."""
    from assay.llm.estimate import estimate_task

    sys.stderr.write(estimate_task(task, model, options, start=start).line(prices) + "\n")


def run_task(
    task: Any,
    model: str | None,
    options: Any,
    *,
    out: Path | None,
    fmt: Any,
    save: bool,
    db: str | None,
    title: str,
    extra: Any = None,
    after: Callable[[Any], None] | None = None,
    write: Callable[[Any, Any, Path | None], None] | None = None,
) -> Any:
    """Run ``task`` through the driver and finish the command (see the module docstring).

    ``extra``: records computed without a model (ROUGE/BLEU), stored and printed before the
    task's. ``after(run)``: the command's own outputs (pairwise's run folder) and records
    (``run.metrics`` may be replaced), before the records are published.
    ``write(metrics, fmt, out)``: how the records are printed (default
    :func:`assay.cli.support.emit`).
    """
    from assay.cli.support import emit, print_error
    from assay.llm.driver import EvaluationInterrupted, evaluate

    try:
        run = evaluate(
            task, model, options, preflight=lambda: check_outputs(out=out, save=save, db=db)
        )
    except EvaluationInterrupted as stop:
        eid = _store(stop.run, stop.run.metrics, db, task) if save else None
        where = f" (stored as failed evaluation {eid})" if eid is not None else ""
        print_error(
            f"{stop}{where}; their answers are cached. Run the same command again to resume."
        )
        raise typer.Exit(128 + stop.signum) from None
    if after is not None:  # it may add records (human labels) and parameters (a caution)
        after(run)
    metrics = run.metrics if extra is None else extra + run.metrics
    eid = _store(run, metrics, db, task) if save else None
    (write or (lambda m, f, o: emit(m, fmt=f, out=o, title=title)))(metrics, fmt, out)
    if run.status != "finished":
        where = f"; stored as failed evaluation {eid}" if eid is not None else ""
        print_error(f"{run.error}{where}")
        raise typer.Exit(1)
    if run.n_errors:
        from assay.cli.support import note

        note(f"{run.n_errors} of {len(run.calls)} calls failed (allowed by --max-errors)")
    return run


def _store(run: Any, metrics: Any, db: str | None, task: Any = None) -> int:
    """The run in the store with its status, its records and one item row per call."""
    from assay.cli.support import note, save_labels
    from assay.store import Store

    items = item_rows(run, task) or None
    labels = save_labels()
    named = {"name": labels.get("name"), "tags": labels.get("tags") or None}
    with Store(db) as store:
        if run.status == "finished":
            eid = store.save(
                metrics,
                units=labels.get("units", True),
                **named,
                kind=run.kind,
                dataset=run.dataset,
                model=run.model,
                parameters=run.parameters,
                items=items,
                created=run.started,
                served_model=run.served_model,
            )
            note(f"saved evaluation {eid} ({run.kind}) to {store.display_url}")
            return eid
        eid = store.start(
            run.kind,
            dataset=run.dataset,
            model=run.model,
            parameters=run.parameters,
            served_model=run.served_model,
            created=run.started,
            **named,
        )
        if items:
            store.add_items(eid, items)
        store.add_metrics(eid, metrics)
        store.fail(eid, run.error or "failed")
    return eid


def item_rows(run: Any, task: Any = None) -> list[Any]:
    """One store row per call of a run: prompt, params, raw reply, parsed result or error
    (``{"invalid": reason}`` for a refused reply), and the facts ``task.item_info`` keeps."""
    from assay.store import ItemRecord

    return [
        ItemRecord.from_llm(
            c.item,
            c.record,
            c.parsed if c.invalid is None else {"invalid": c.invalid},
            info=None if task is None else task.item_info(c),
        )
        for c in run.calls
    ]
