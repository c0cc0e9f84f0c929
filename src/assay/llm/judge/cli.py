"""The judge metrics on the command line (``assay text --metrics faithfulness,...``).

``assay text`` reads the file and computes ROUGE/BLEU; the judge metrics it names are run
here: the rows become :class:`~assay.llm.judge.Datum`\\ s, a
:class:`~assay.llm.judge.run.JudgeTask` is built, and the one driver runs it through
:func:`assay.llm.run_cli.run_task` (pre-flight checks, store with status and item rows,
exit codes, interrupts). Heavy modules are imported when a command runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["datums", "judge_task", "run_judge_metrics", "dry_run"]


def datums(rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Rows ``{uid, query, prediction, groundtruth, context}`` -> judge datums."""
    from assay.llm.judge.types import Datum

    return [
        Datum(
            r["uid"],
            r["query"],
            r["prediction"],
            tuple(r["groundtruth"] or ()),
            None if r["context"] is None else tuple(r["context"]),
        )
        for r in rows
    ]


def judge_task(
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    *,
    judge_retries: int,
    seed: int,
    num_bootstrap: int = 1000,
    dataset: str,
    parameters: Mapping[str, Any],
    columns: Mapping[str, Sequence[Any]] | None = None,
) -> Any:
    """The judge task of ``names`` over ``rows``, stored as a ``text`` evaluation."""
    from assay.llm.judge.run import JudgeTask

    return JudgeTask(
        datums(rows),
        names,
        judge_retries=judge_retries,
        params={"temperature": 0.0},
        num_bootstrap=num_bootstrap,
        seed=seed,
        kind="text",
        dataset=dataset,
        parameters=parameters,
        columns=columns,
    )


def dry_run(task: Any, options: Any) -> None:
    """Print the calls of the first stage (their prompts are known before any reply)."""
    from assay.llm.driver import dry_run_items
    from assay.llm.run_cli import print_dry_run

    print_dry_run(dry_run_items(task, options))


def run_judge_metrics(
    task: Any,
    model: str | None,
    options: Any,
    *,
    extra: Any,
    out: Path | None,
    fmt: str,
    save: bool,
    db: str | None,
) -> None:
    """Run the judge task (``extra``: the records computed without a model, stored and
    printed first), then write ``--out`` as JSONL and print JSON or a table."""
    from assay.llm.run_cli import run_task

    run_task(
        task,
        model,
        options,
        out=out,
        fmt=fmt,
        save=save,
        db=db,
        title="text",
        extra=extra,
        write=write_records,
    )


def write_records(records: Any, fmt: Any, out: Path | None) -> None:
    """``--out``: JSONL records (with the judge's details); stdout: JSON or a table."""
    import json

    from assay.cli_support import OutputFormat, emit
    from assay.io.files import write_atomic

    fmt = OutputFormat(fmt)
    if out is not None:
        lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in records.to_list())
        write_atomic(out, lines)
        if fmt is OutputFormat.table:
            emit(records, fmt=fmt)
        return
    emit(records, fmt=fmt)
