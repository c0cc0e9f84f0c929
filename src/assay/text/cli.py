"""``assay text``: ROUGE, BLEU and the LLM-judged text metrics over a JSONL/CSV/Parquet file.

Only typer is imported at module level, so ``assay text --help`` stays fast; the metrics,
the model and the store are imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

__all__ = ["register", "text_command"]

METRICS_HELP = (
    "Comma-separated: rouge, bleu, sacrebleu, chrf, answer_correctness, answer_relevance, "
    "bias, toxicity, "
    "coherence, summary_coherence, context_precision, context_recall, context_relevance, "
    "faithfulness, hallucination."
)


def text_command(
    data: Path = typer.Option(
        ..., "--data", help="JSONL, CSV or Parquet: uid, query, prediction, groundtruth, context."
    ),
    metrics: str = typer.Option("rouge,bleu", "--metrics", help=METRICS_HELP),
    model: str = typer.Option(
        None, "--model", "-m", help="Judge model spec (default: $ASSAY_MODEL or embedded)."
    ),
    rouge_types: str = typer.Option(
        "rouge1,rouge2,rougeL,rougeLsum", "--rouge-types", help="ROUGE types, comma-separated."
    ),
    use_stemmer: bool = typer.Option(False, "--use-stemmer", help="Porter-stem ROUGE tokens."),
    rouge_measures: str = typer.Option(
        "fmeasure", "--rouge-measures", help="fmeasure, precision, recall (comma-separated)."
    ),
    bleu_weights: str = typer.Option(
        "0.25,0.25,0.25,0.25", "--bleu-weights", help="BLEU n-gram weights."
    ),
    smoothing: str = typer.Option(None, "--bleu-smoothing", help="method1 or method2 (NLTK)."),
    bleu_tokenize: str = typer.Option(
        "whitespace",
        "--bleu-tokenize",
        help="BLEU's tokens: whitespace (str.split, as NLTK's examples) or valor "
        "(valor-lite's: periods dropped, so 'cat.' matches 'cat').",
    ),
    judge_retries: int = typer.Option(
        2, "--judge-retries", help="Re-asks of an invalid judge reply before it is an error."
    ),
    concurrency: int = typer.Option(8, "--concurrency", "-c", help="Judge calls in flight."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Cap on each judge reply."),
    json_mode: bool = typer.Option(
        False,
        "--json-mode",
        help="Ask for each judge reply's JSON schema (response_format json_schema): the "
        "embedded model (by grammar) and servers such as OpenAI, vLLM, llama.cpp, Ollama.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap intervals."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Write the records as JSONL here (with the judge's details)."
    ),
    fmt: str = typer.Option("json", "--format", help="json or table (stdout)."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the first judge calls as JSONL items (no call is made) and exit.",
    ),
    save: bool = typer.Option(False, "--save", help="Also record the evaluation in the store."),
    db: str = typer.Option(None, "--db", help="Evaluation store URL or SQLite file."),
) -> None:
    """ROUGE/BLEU (pure computation) and LLM-judged metrics, one record per datum + aggregates.

    A metric whose input column is missing stops the command (exit 2) before any call.
    """
    from assay.cli_support import guarded

    guarded(_run)(**locals())


def _floats(text: str, option: str) -> list[float]:
    from assay.cli_support import parse_floats

    return parse_floats(text, option=option) or []


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _plan(names: list[str], columns: set[str]) -> tuple[list[str], list[str]]:
    """(text metrics, judge metrics); every metric's columns checked against the file."""
    from assay.errors import InvalidInputError
    from assay.llm.judge import get_metric
    from assay.text.evaluator import TEXT_METRICS
    from assay.text.io import columns_of

    if not names:
        raise InvalidInputError("no metric given", field="--metrics")
    text, judged = [], []
    for n in dict.fromkeys(names):
        if n in TEXT_METRICS:
            need = ["prediction", "groundtruth"]
            text.append(n)
        else:
            need = columns_of(get_metric(n).fields)
            judged.append(n)
        for c in need:
            if c not in columns:
                raise InvalidInputError(f"metric {n} needs the {c!r} column", field=c)
    return text, judged


def _run(**o: Any) -> None:
    from assay.errors import InvalidInputError
    from assay.io.files import check_writable_file
    from assay.results import MetricSet
    from assay.text.io import read_rows

    if o["fmt"] not in ("json", "table"):
        raise InvalidInputError("use json or table", field="--format")
    if o["out"] is not None:
        check_writable_file(o["out"], option="--out")
    rows, columns = read_rows(o["data"])
    text, judged = _plan(_names(o["metrics"]), columns)
    if o["dry_run"]:
        _dry_run(rows, judged, o)
        return
    records = MetricSet()
    if text:
        records += _text_records(rows, text, o)
    calls: list[Any] = []
    model_name = None
    if judged:
        res, model_name = _judge_records(rows, judged, o)
        records += res.metrics
        calls = res.calls
    _publish(records, calls, model_name, o)


def _text_records(rows: list[dict], names: list[str], o: dict[str, Any]) -> Any:
    from assay.errors import InvalidInputError
    from assay.text.evaluator import TextEvaluator

    for r in rows:
        for c in ("prediction", "groundtruth"):
            if r[c] is None or (c == "groundtruth" and not r[c]):
                raise InvalidInputError(
                    "missing value", source=str(o["data"]), record=r["uid"], field=c
                )
    ev = TextEvaluator(
        metrics=names,
        rouge_types=_names(o["rouge_types"]),
        use_stemmer=o["use_stemmer"],
        rouge_measures=_names(o["rouge_measures"]),
        bleu_weights=_floats(o["bleu_weights"], "--bleu-weights"),
        smoothing=o["smoothing"],
        bleu_tokenize=o["bleu_tokenize"],
        seed=o["seed"],
    )
    ev.add(
        [r["prediction"] for r in rows],
        [r["groundtruth"] for r in rows],
        uids=[r["uid"] for r in rows],
    )
    return ev.compute()


def _judge_records(rows: list[dict], names: list[str], o: dict[str, Any]) -> tuple[Any, str]:
    from assay.llm.judge import get_metric, judge
    from assay.llm.judge.run import check_fields
    from assay.llm.models.spec import load_model
    from assay.llm.runner import Runner

    data = _datums(rows)
    check_fields(data, [get_metric(n) for n in names])  # before the model is loaded
    m = load_model(o["model"])
    runner = Runner(m, max_concurrency=o["concurrency"], cache=not o["no_cache"], quiet=False)
    res = judge(
        data,
        names,
        runner=runner,
        judge_retries=o["judge_retries"],
        params=_params(o),
        seed=o["seed"],
        structured=o["json_mode"],
    )
    return res, getattr(m, "spec", None) or m.identity


def _params(o: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {"temperature": 0.0}
    if o["max_tokens"] is not None:
        params["max_tokens"] = o["max_tokens"]
    return params


def _dry_run(rows: list[dict], names: list[str], o: dict[str, Any]) -> None:
    """Print the calls of the first stage (their prompts are known before any reply)."""
    import json
    import sys

    from assay.llm.judge import get_metric
    from assay.llm.judge.run import check_fields, first_stage, items_of

    data = _datums(rows)
    specs = [get_metric(n) for n in names]
    check_fields(data, specs)
    for it in items_of(first_stage(data, specs), _params(o), o["json_mode"]):
        line = {"id": it.id, "messages": list(it.messages), "params": dict(it.params)}
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")


def _datums(rows: list[dict]) -> list[Any]:
    from assay.llm.judge import Datum

    data = [
        Datum(
            r["uid"],
            r["query"],
            r["prediction"],
            tuple(r["groundtruth"] or ()),
            None if r["context"] is None else tuple(r["context"]),
        )
        for r in rows
    ]
    return data


def _publish(records: Any, calls: list[Any], model: str | None, o: dict[str, Any]) -> None:
    import json

    from assay.cli_support import OutputFormat, emit, save_metrics
    from assay.io.files import write_atomic

    if o["save"]:
        from assay.store import ItemRecord

        items = [
            ItemRecord.from_llm(
                c.item, c.record, c.parsed if c.invalid is None else {"invalid": c.invalid}
            )
            for c in calls
        ]
        save_metrics(
            records,
            kind="text",
            dataset=str(o["data"]),
            model=model,
            parameters={"metrics": o["metrics"]},
            items=items or None,
            url=o["db"],
        )
    fmt = OutputFormat(o["fmt"])
    if o["out"] is not None:
        lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in records.to_list())
        write_atomic(o["out"], lines)
        if fmt is OutputFormat.table:
            emit(records, fmt=fmt)
        return
    emit(records, fmt=fmt)


def register(app: typer.Typer) -> None:
    """Add ``assay text`` to the ``assay`` command."""
    app.command("text")(text_command)
