"""``assay text``: ROUGE, BLEU and the LLM-judged text metrics over a JSONL/CSV/Parquet file
(ROUGE/BLEU also over a Parquet dataset, streamed or on a Dask cluster).

The flags of the text metrics' options (``--rouge-types``, ``--bleu-weights``, ...,
``--ci``, ``--by``, ``--cluster``) come from their declaration
(:data:`assay.text.declared.OPTIONS`), those of the judge run (``--timeout``,
``--retries``, ``--max-errors``, ``--max-tokens``, ``--structured``) from the LLM run
options' (:data:`assay.llm.options.RUN_OPTIONS`), and the ``--metrics`` names from the two
metric tables. The command is an LLM command (its judge metrics run through
:func:`assay.cli.llm_run.run_task`), so it does not use the metric commands' skeleton.

Only typer and the declarations are imported at module level, so ``assay text --help``
stays fast; the metrics, the model and the store are imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.declared import declared_flags
from assay.cli.options import scheduler_timeout_option
from assay.cli.support import OutputFormat, db_option, format_option, save_option
from assay.llm.judge.declared import METRICS as JUDGED
from assay.llm.options import RUN_OPTIONS
from assay.text.declared import METRICS, OPTIONS

__all__ = ["register", "text_command"]

_TEXT_NAMES = ", ".join(METRICS.families[:-1]) + f" and {METRICS.families[-1]}"
METRICS_HELP = "Comma-separated: " + ", ".join([*METRICS.families, *JUDGED.families]) + "."

#: The LLM run options the command offers with their declared flag (the others it writes:
#: ``--concurrency/-c``, ``--judge-retries``, ``--quiet/-q`` have the command's own
#: defaults or short names; ``--cache``/``--no-cache`` are one option).
RUN_FLAGS = ("timeout", "retries", "max_errors", "max_tokens", "structured")


@declared_flags(OPTIONS, skip=("metrics", "seed"))
@declared_flags(RUN_OPTIONS, only=RUN_FLAGS)
def text_command(
    data: Path = typer.Option(
        ...,
        "--data",
        help="JSONL, CSV or Parquet (a file, a directory or a glob): uid, query, prediction, "
        "groundtruth, context.",
    ),
    metrics: str = typer.Option(
        ",".join(OPTIONS["metrics"].default), "--metrics", help=METRICS_HELP
    ),
    model: str = typer.Option(
        None, "--model", "-m", help="Judge model spec (default: $ASSAY_MODEL or embedded)."
    ),
    judge_retries: int = typer.Option(
        2, "--judge-retries", help="Re-asks of an invalid judge reply before it is an error."
    ),
    concurrency: int = typer.Option(8, "--concurrency", "-c", help="Judge calls in flight."),
    json_mode: bool = typer.Option(False, "--json-mode", help="The same as --structured on."),
    cache: Path = typer.Option(None, "--cache", help="Response cache file (default: assay's)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    seed: int = typer.Option(
        0, "--seed", help="Seeds everything random in the command: the bootstrap intervals."
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Write the records as JSONL here (with the judge's details)."
    ),
    fmt: OutputFormat = format_option("json or table (stdout)."),
    repeats: int = typer.Option(
        1,
        "--repeats",
        help="Judge calls per datum and metric (distinct seeds, each cached): the per-datum "
        "value is their mean, and a JudgeRepeatability record per metric gives the flakiness "
        "and the judge's noise against the between-item variance.",
    ),
    human_labels: Path = typer.Option(
        None,
        "--human-labels",
        help="JSONL, CSV or Parquet of human labels: id (a datum uid) and one column per judge "
        "metric (or value, with one judge metric). Each judged mean gets a PPI++ record "
        "(estimator=ppi) calibrated on the labels, and a JudgeAgreement record.",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the first judge calls as JSONL items and, on stderr, how many calls and "
        "prompt tokens a run would pay and how many are cached (no call is made); exit.",
    ),
    price_per_mtok: str = typer.Option(
        None,
        "--price-per-mtok",
        metavar="IN,OUT",
        help="With --dry-run: prices per million input and output tokens, for the expected "
        "cost of the judge calls to pay.",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        metavar="ADDRESS",
        help=f"Dask scheduler address (tcp://HOST:PORT) for {_TEXT_NAMES}: "
        "the rows are scored on its workers (needs pip install 'assay[dist]'); judge metrics "
        "refuse it. Default: in process; a Parquet directory or glob is streamed one row "
        "group at a time.",
    ),
    scheduler_timeout: float = scheduler_timeout_option(),
    save: bool = save_option(),
    db: str = db_option("Evaluation store URL or SQLite file."),
    **given: Any,
) -> None:
    """ROUGE/BLEU (pure computation) and LLM-judged metrics, one record per datum + aggregates.

    A metric whose input column is missing stops the command (exit 2) before any call.
    Judge metrics run through the one LLM driver (see docs/llm.md): failed calls make the
    run fail (exit 1) unless --max-errors allows them; Ctrl-C/SIGTERM keep what was done
    and the same command resumes from the cache.
    """
    own = dict(locals())
    _run(**own.pop("given"), **own)  # through guarded (errors, protected files, --name/--tag)


def _bleu_weights(text: str) -> list[float]:
    """``--bleu-weights``' numbers (one line if it holds none or a non-number; each weight is
    then checked by the declared rule)."""
    from assay.cli.support import parse_floats
    from assay.errors import InvalidInputError

    weights = parse_floats(text, option="--bleu-weights") or []
    if not weights:
        raise InvalidInputError(
            f"expected comma-separated n-gram weights (e.g. 0.25,0.25,0.25,0.25), got {text!r}",
            source="--bleu-weights",
        )
    return weights


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _plan(names: list[str]) -> tuple[list[str], list[str]]:
    """(text metrics, judge metrics), in the order given (an unknown name is refused)."""
    from assay.errors import InvalidInputError
    from assay.llm.judge import get_metric

    if not names:
        raise InvalidInputError("no metric given", field="--metrics")
    text, judged = [], []
    for n in dict.fromkeys(names):
        if n in METRICS.families:
            text.append(n)
        else:
            get_metric(n)
            judged.append(n)
    return text, judged


def _check_columns(names: list[str], columns: Any) -> None:
    """Every metric's input columns are among ``columns``."""
    from assay.errors import InvalidInputError
    from assay.llm.judge import get_metric
    from assay.text.io import columns_of

    have = {str(c) for c in columns}
    for n in names:
        need = (
            ["prediction", "groundtruth"]
            if n in METRICS.families
            else columns_of(get_metric(n).fields)
        )
        for c in need:
            if c not in have:
                raise InvalidInputError(f"metric {n} needs the {c!r} column", field=c)


def _run(**o: Any) -> None:
    from assay.cli.llm_run import check_outputs
    from assay.errors import InvalidInputError
    from assay.llm.options import run_options
    from assay.text.io import read_rows

    options = run_options(
        concurrency=o["concurrency"],
        timeout=o["timeout"],
        retries=o["retries"],
        max_errors=o["max_errors"],
        max_tokens=o["max_tokens"],
        structured="on" if o["json_mode"] else o["structured"],
        reasks=o["judge_retries"],
        cache=o["cache"],
        no_cache=o["no_cache"],
        quiet=o["quiet"],
        ci=o["ci"],
        ci_method=o["ci_method"],
        num_bootstrap=o["num_bootstrap"],
        seed=o["seed"],
        by=tuple(o["by"] or ()),
        cluster=o["cluster"],
    )
    from assay.llm.estimate import parse_prices

    parse_prices(o["price_per_mtok"])  # before the data is read
    if isinstance(o["repeats"], bool) or o["repeats"] < 1:
        raise InvalidInputError(
            f"must be an integer >= 1 (judge calls per datum), got {o['repeats']}",
            source="--repeats",
        )
    check_outputs(out=o["out"], save=False, db=None)  # the store: before the first call
    text, judged = _plan(_names(o["metrics"]))
    if judged and o["scheduler"] is not None:
        raise InvalidInputError(
            f"judge metrics ({', '.join(judged)}) run through the LLM driver in this process; "
            f"--scheduler takes {_TEXT_NAMES} only",
            source="--scheduler",
        )
    if not judged and not o["dry_run"]:
        _publish(_text_records(text, o), o)
        return
    keep = _kept(o)
    rows, columns = read_rows(o["data"], keep=keep, cluster=o["cluster"])
    _check_columns(text + judged, columns)
    _check_by(keep, columns, str(o["data"]), o["cluster"])
    if not judged:
        return
    import assay.cli.judge as judge_cli

    task = judge_cli.judge_task(
        rows,
        judged,
        judge_retries=o["judge_retries"],
        seed=o["seed"],
        num_bootstrap=o["num_bootstrap"],
        dataset=str(o["data"]),
        parameters={"metrics": o["metrics"]}
        | ({} if o["human_labels"] is None else {"human_labels": str(o["human_labels"])})
        | ({} if o["repeats"] == 1 else {"repeats": o["repeats"]}),
        columns={c: [r["columns"][c] for r in rows] for c in keep},
        repeats=o["repeats"],
    )
    labels = None
    if o["human_labels"] is not None:
        labels = judge_cli.read_labels(o["human_labels"], rows, judged)
    if o["dry_run"]:
        judge_cli.dry_run(task, options, o["model"], parse_prices(o["price_per_mtok"]))
        return
    from assay.llm.caution import demo_caution

    caution = demo_caution(o["model"])
    from assay.results import MetricSet

    records = MetricSet()
    if text:
        records += _add_rows(_evaluator(text, o), rows, str(o["data"]), keep).compute()
    judge_cli.run_judge_metrics(
        task,
        o["model"],
        options,
        extra=records,
        out=o["out"],
        fmt=o["fmt"],
        save=o["save"],
        db=o["db"],
        after=judge_cli.trust_step(
            judged,
            caution,
            labels,
            options,
            cluster_of=None
            if o["cluster"] is None
            else {judge_cli.uid_text(r["uid"]): r["columns"][o["cluster"]] for r in rows},
        ),
    )


def _evaluator(names: list[str], o: dict[str, Any]) -> Any:
    """The text metrics' evaluator from the declared options' flags (errors name them)."""
    from assay.cli.declared import build
    from assay.text.evaluator import TextEvaluator

    given = {n: o[n] for n in OPTIONS.names if n != "metrics"}
    given |= {"metrics": names, "bleu_weights": _bleu_weights(o["bleu_weights"])}
    return build(TextEvaluator, OPTIONS, given)


def _kept(o: dict[str, Any]) -> list[str]:
    """The row columns the command keeps: the ``--by`` ones and the ``--cluster`` one."""
    return list(dict.fromkeys([*(o["by"] or ()), *([o["cluster"]] if o["cluster"] else [])]))


def _add_rows(ev: Any, rows: list[dict], source: str, by: Any = ()) -> Any:
    """Add normalised rows (a ``None`` uid is numbered by position); a missing prediction or
    reference is refused, naming the row."""
    from assay.errors import InvalidInputError

    for i, r in enumerate(rows):
        for c in ("prediction", "groundtruth"):
            if r[c] is None or (c == "groundtruth" and not r[c]):
                where = r["uid"] if r["uid"] is not None else f"row {i + 1} of a batch"
                raise InvalidInputError("missing value", source=source, record=where, field=c)
    return ev.add(
        [r["prediction"] for r in rows],
        [r["groundtruth"] for r in rows],
        uids=[r["uid"] for r in rows],
        columns={c: [r["columns"][c] for r in rows] for c in by or ()},
    )


def _add_batch(ev: Any, batch: Any, *, names: list[str], source: str) -> None:
    """Add one batch: a file read whole by the text reader, or a table batch (a Parquet row
    group, a Dask partition)."""
    from assay.text.io import normalise_row, read_rows

    by = list(ev.columns)
    if isinstance(batch, (str, Path)):
        rows, columns = read_rows(batch, keep=by, cluster=ev.cluster)
        _check_columns(names, columns)
        _check_by(by, columns, source, ev.cluster)
    else:
        _check_columns(names, batch.columns)
        _check_by(by, batch.columns, source, ev.cluster)
        records = batch.to_dict(orient="records")
        rows = [normalise_row(r, i, source=source) for i, r in enumerate(records)]
        for row, rec in zip(rows, records, strict=True):
            row["columns"] = {c: rec[c] for c in by}
    _add_rows(ev, rows, source, by)


def _check_by(by: list[str], columns: Any, source: str, cluster: str | None = None) -> None:
    """Every ``--by`` (and ``--cluster``) column is a column of the table (exit 2 naming it,
    before any row is scored or any call made)."""
    from assay.errors import InvalidInputError

    have = [str(c) for c in columns]
    for c in by:
        if c not in have:
            flag = "--cluster" if c == cluster else "--by"
            raise InvalidInputError(
                f"unknown column {c!r}; {source} has: {', '.join(have)}", source=flag
            )


def _text_records(names: list[str], o: dict[str, Any]) -> Any:
    """ROUGE/BLEU records of ``--data``: a file, or a Parquet file, directory or glob
    streamed by row group, or either on the Dask cluster at ``--scheduler``."""
    from functools import partial

    from assay.cli.options import add_table, scheduler_address
    from assay.errors import InvalidInputError
    from assay.io.parquet import is_parquet_dataset, schema_frame

    data, source = o["data"], str(o["data"])
    if is_parquet_dataset(data):  # the columns, before any row is read
        _check_columns(names, schema_frame(data).columns)
        _check_by(_kept(o), schema_frame(data).columns, source, o["cluster"])
    ev = _evaluator(names, o)
    scheduler = scheduler_address(o["scheduler"], o["scheduler_timeout"])
    add_table(ev, data, partial(_add_batch, names=names, source=source), scheduler=scheduler)
    if ev.is_empty:
        raise InvalidInputError("no rows", source=source)
    uids = ev.uids()
    seen: set[str] = set()
    for u in uids.tolist():  # batches cannot see each other's uids
        if u in seen:
            raise InvalidInputError("duplicate uid", source=source, record=u, field="uid")
        seen.add(u)
    return ev.compute()


def _publish(records: Any, o: dict[str, Any]) -> None:
    """ROUGE/BLEU only: store (with --save), then write --out (JSONL) and print."""
    from assay.cli.judge import write_records
    from assay.cli.support import save_metrics

    save_metrics(
        records,
        kind="text",
        dataset=str(o["data"]),
        parameters={"metrics": o["metrics"]},
        save=o["save"],
        url=o["db"],
    )
    write_records(records, o["fmt"], o["out"])


def register(app: typer.Typer) -> None:
    """Add ``assay text`` to the ``assay`` command."""
    from assay.cli.support import guarded

    app.command("text")(guarded(text_command))
