"""The judge metrics on the command line (``assay text --metrics faithfulness,...``).

``assay text`` reads the file and computes ROUGE/BLEU; the judge metrics it names are run
here: the rows become :class:`~assay.llm.judge.Datum`\\ s, a
:class:`~assay.llm.judge.run.JudgeTask` is built, and the one driver runs it through
:func:`assay.cli.llm_run.run_task` (pre-flight checks, store with status and item rows,
exit codes, interrupts). Heavy modules are imported when a command runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "datums",
    "dry_run",
    "judge_task",
    "read_labels",
    "run_judge_metrics",
    "trust_step",
    "uid_text",
]


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
    repeats: int = 1,
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
        repeats=repeats,
    )


def dry_run(task: Any, options: Any, model: str | None = None, prices: Any = None) -> None:
    """Print the calls of the first stage (their prompts are known before any reply), then
    the estimate of what the run would pay on stderr (:mod:`assay.llm.estimate`)."""
    from assay.cli.llm_run import print_dry_run, print_estimate
    from assay.llm.driver import dry_run_items

    print_dry_run(dry_run_items(task, options))
    print_estimate(task, model, options, prices)


def uid_text(v: Any) -> str:
    """A uid as the labels' ids are matched: its text (``7.0`` as ``7``)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def read_labels(path: Path, rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> Any:
    """``--human-labels``: the labels of the judged rows (by ``uid``), checked before any
    call (:func:`assay.llm.human_labels.check_labels`)."""
    from assay.cli.support import check_input_file
    from assay.io.human_labels import read_human_labels
    from assay.llm.human_labels import check_labels
    from assay.llm.judge import get_metric

    labels = read_human_labels(check_input_file(path, option="--human-labels"))
    ids = [uid_text(r["uid"]) for r in rows]
    check_labels(labels, ids, {n: get_metric(n).type for n in names})
    return labels


def trust_step(
    names: Sequence[str],
    caution: str | None,
    labels: Any = None,
    options: Any = None,
    cluster_of: Mapping[str, Any] | None = None,
) -> Any:
    """The ``after(run)`` of a judged run: with ``labels``, the PPI and ``JudgeAgreement``
    records (:mod:`assay.llm.human_labels`; ``options``: the run options, whose ``ci``
    (0.95 without), ``num_bootstrap``, ``seed`` and ``cluster`` they take) and the caution
    of a weakly agreeing judge, announced; every caution in the run's parameters and on
    its judged aggregates (``judge_caution``)."""
    from assay.llm.caution import PARAMETER, announce
    from assay.llm.judge import get_metric
    from assay.results import MetricSet

    types = {n: get_metric(n).type for n in names}

    def after(run: Any) -> None:
        new: list[Any] = []
        if labels is not None:
            from assay.llm.human_labels import labelled_records
            from assay.uncertainty.intervals import ci_options

            ci = getattr(options, "ci", None)
            opts = ci_options(
                0.95 if ci is None else ci,
                num_bootstrap=getattr(options, "num_bootstrap", 1000),
                seed=getattr(options, "seed", None) or 0,
                cluster=getattr(options, "cluster", None),
            )
            assert opts is not None
            new = labelled_records(run.metrics, labels, types, opts, cluster_of=cluster_of)
        weak = {
            types[m.parameters["metric"]]: f"{m.parameters['metric']}: {m.parameters[PARAMETER]}"
            for m in new
            if m.type == "JudgeAgreement" and PARAMETER in m.parameters
        }
        for line in weak.values():
            announce(line)
        lines = ([caution] if caution else []) + list(weak.values())
        if lines:
            run.parameters[PARAMETER] = "; ".join(lines)
        for m in run.metrics:
            if "aggregate" in m.parameters:
                mine = ([caution] if caution else []) + ([weak[m.type]] if m.type in weak else [])
                if mine:
                    m.parameters[PARAMETER] = "; ".join(mine)
        if new:
            run.metrics = MetricSet([*run.metrics, *new])

    return after


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
    after: Any = None,
) -> None:
    """Run the judge task (``extra``: the records computed without a model, stored and
    printed first), then write ``--out`` as JSONL and print JSON or a table."""
    from assay.cli.llm_run import run_task

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
        after=after,
    )


def write_records(records: Any, fmt: Any, out: Path | None) -> None:
    """``--out``: JSONL records (with the judge's details); stdout: JSON or a table."""
    import json

    from assay.cli.support import OutputFormat, emit
    from assay.io.files import write_atomic

    fmt = OutputFormat(fmt)
    if out is not None:
        lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in records.to_list())
        write_atomic(out, lines)
        if fmt is OutputFormat.table:
            emit(records, fmt=fmt)
        return
    emit(records, fmt=fmt)
