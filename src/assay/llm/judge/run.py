"""Running the judge metrics: items -> runner -> strict parse (re-ask) -> pure score -> records.

1. **items**: each datum and metric asks for shared intermediates (the statements,
   opinions or claims of a text: one task per distinct text for the whole run) and, once
   those are known, for its own judgements (:mod:`assay.llm.judge.definitions`).
2. **run**: every call goes through one :class:`~assay.llm.runner.Runner` (concurrency,
   transport retries, cache, resume), in two stages: intermediates and the judgements
   that need none first, then the judgements built on intermediates.
3. **parse**: each reply is checked against its pydantic shape
   (:mod:`assay.llm.judge.schemas`); an invalid reply is re-asked up to ``judge_retries``
   times (the conversation continues with the reason it was refused, so the re-ask is a
   new call, not a cache hit), then recorded as an error of every metric of that datum
   that needed it (``value: null``, the reason and the raw reply kept). The run goes on.
4. **score**: pure functions (:mod:`assay.llm.judge.compute`) turn verdicts into values;
   each per-datum record keeps, under ``parameters["details"]``, the intermediates,
   verdicts with reasons and raw replies behind it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.judge.prompts import PROMPT_VERSION, messages, render
from assay.llm.judge.schemas import Invalid, parse, reply_format
from assay.llm.judge.types import (
    COLUMNS,
    EXTRACTIONS,
    Datum,
    JudgeMetric,
    Outcome,
    Task,
    extraction_task,
    get_metric,
    text_key,
)
from assay.llm.runner import Item, Record, Runner
from assay.results import Metric, MetricSet
from assay.text.records import NUM_BOOTSTRAP, datum_record

__all__ = [
    "Call",
    "TaskResult",
    "JudgeResult",
    "judge",
    "check_fields",
    "first_stage",
    "items_of",
    "task_params",
]


@dataclass(frozen=True)
class Call:
    """One call of the run: the item sent, the runner's record, the parse outcome."""

    task: str
    item: Item
    record: Record
    parsed: Any = None
    invalid: str | None = None


@dataclass(frozen=True)
class TaskResult:
    """The final state of one task: its parsed reply, or the error."""

    parsed: Any = None
    error: str | None = None
    raw: str | None = None


@dataclass
class JudgeResult:
    """Records of a judge run and every call behind them."""

    metrics: MetricSet
    calls: list[Call] = field(default_factory=list)

    @property
    def paid_calls(self) -> int:
        """Calls sent to the model in this run (cache hits and shared answers excluded)."""
        return sum(c.record.attempts for c in self.calls)


def check_fields(data: Sequence[Datum], metrics: Sequence[JudgeMetric]) -> None:
    """Every datum has every field its metrics need; raises before any call otherwise.

    An empty ground-truth or context list is not missing: the metric's definition gives
    that datum its value (or ``None`` with the reason), the run goes on.
    """
    for m in metrics:
        for i, d in enumerate(data):
            for f in m.fields:
                if getattr(d, f) is None:
                    raise InvalidInputError(
                        f"metric {m.name} needs the {COLUMNS[f]!r} column",
                        record=d.uid or i,
                        field=COLUMNS[f],
                    )


def task_params(task: Task, params: Mapping[str, Any], structured: bool) -> dict[str, Any]:
    """The generation parameters of a task's calls; ``structured`` asks for its reply schema."""
    if not structured:
        return dict(params)
    return {**params, "response_format": reply_format(task.schema, task.lengths)}


def _run_tasks(
    runner: Runner,
    tasks: Iterable[Task],
    retries: int,
    params: Mapping[str, Any],
    calls: list[Call],
    structured: bool = False,
) -> dict[str, TaskResult]:
    pending = {t.key: (t, list(messages(t.prompt, **t.values))) for t in tasks}
    done: dict[str, TaskResult] = {}
    for attempt in range(retries + 1):
        if not pending:
            break
        items = [
            Item(
                key if attempt == 0 else f"{key}#reask{attempt}",
                tuple(msgs),
                task_params(task, params, structured),
            )
            for key, (task, msgs) in pending.items()
        ]
        records = runner.run(items)
        nxt: dict[str, tuple[Task, list[dict[str, str]]]] = {}
        for (key, (task, msgs)), item, rec in zip(pending.items(), items, records, strict=True):
            if not rec.ok:
                calls.append(Call(key, item, rec))
                done[key] = TaskResult(error=f"call failed: {rec.error_kind}: {rec.error}")
                continue
            parsed = parse(rec.text, task.schema, task.lengths)
            if isinstance(parsed, Invalid):
                calls.append(Call(key, item, rec, invalid=parsed.reason))
                if attempt < retries:
                    more = [
                        {"role": "assistant", "content": rec.text or ""},
                        {"role": "user", "content": render("retry", reason=parsed.reason)},
                    ]
                    nxt[key] = (task, msgs + more)
                else:
                    done[key] = TaskResult(
                        error=f"invalid reply after {retries + 1} attempt(s): {parsed.reason}",
                        raw=rec.text,
                    )
                continue
            calls.append(Call(key, item, rec, parsed=parsed.model_dump()))
            done[key] = TaskResult(parsed=parsed, raw=rec.text)
        pending = nxt
    return done


def _extracted(d: Datum, m: JudgeMetric, results: Mapping[str, TaskResult]):
    """The metric's intermediates for a datum, or the first failed task."""
    ex: dict[tuple[str, str], list[str]] = {}
    for kind, text in m.extracts(d):
        r = results[text_key(kind, text)]
        if r.error is not None:
            return None, (kind, r)
        ex[kind, text] = list(getattr(r.parsed, EXTRACTIONS[kind][2]))
    return ex, None


def first_stage(data: Sequence[Datum], specs: Sequence[JudgeMetric]) -> list[Task]:
    """The tasks that need no reply to be built: shared extractions (one per distinct text)
    and the judgements that need no intermediate. The rest depend on the replies."""
    first: dict[str, Task] = {}
    for d in data:
        for s in specs:
            needs = s.extracts(d)
            for kind, text in needs:
                t = extraction_task(kind, text)
                first.setdefault(t.key, t)
            if not needs:
                first.update((t.key, t) for t in s.plan(d, {}))
    return list(first.values())


def items_of(
    tasks: Sequence[Task], params: Mapping[str, Any] | None = None, structured: bool = False
) -> list[Item]:
    """The runner items of tasks (what ``--dry-run`` prints)."""
    gen = dict(params) if params is not None else {"temperature": 0.0}
    return [
        Item(t.key, messages(t.prompt, **t.values), task_params(t, gen, structured)) for t in tasks
    ]


def judge(
    data: Sequence[Datum],
    metrics: Sequence[str],
    *,
    runner: Runner | None = None,
    model: Any = None,
    judge_retries: int = 2,
    params: Mapping[str, Any] | None = None,
    num_bootstrap: int = NUM_BOOTSTRAP,
    seed: int = 0,
    structured: bool = False,
    **runner_options: Any,
) -> JudgeResult:
    """Judge every datum on every metric; one record per datum and metric plus aggregates.

    Parameters
    ----------
    data : the datums (unique ``uid``\\ s).
    metrics : judge metric names (see :func:`assay.llm.judge.registered`).
    runner : the runner to call through; built from ``model`` (a spec, a model, or
        ``None`` for the default) and ``runner_options`` when not given.
    judge_retries : re-asks of an invalid reply before it is recorded as an error.
    params : generation parameters of every call (default ``temperature=0``).
    structured : ask for each reply's JSON schema (``response_format`` ``json_schema``, with
        the list lengths the judgement needs). Servers that support it (OpenAI, vLLM, the
        llama.cpp server, Ollama) and the embedded model (by grammar) can then only answer
        in that shape; the reply is still checked.
    """
    specs = [get_metric(n) for n in dict.fromkeys(metrics)]
    if judge_retries < 0:
        raise InvalidInputError("must be >= 0", field="judge_retries")
    uids = [d.uid for d in data]
    if len(set(uids)) != len(uids):
        raise InvalidInputError("uids must be unique", field="uid")
    check_fields(data, specs)
    if runner is None:
        from assay.llm.models.spec import load_model

        m = load_model(model) if model is None or isinstance(model, str) else model
        runner = Runner(m, **{"quiet": True, **runner_options})
    gen = dict(params) if params is not None else {"temperature": 0.0}
    calls: list[Call] = []

    results = _run_tasks(runner, first_stage(data, specs), judge_retries, gen, calls, structured)

    second: dict[str, Task] = {}
    for d in data:
        for s in specs:
            if s.extracts(d):
                ex, _ = _extracted(d, s, results)
                if ex is not None:
                    second.update((t.key, t) for t in s.plan(d, ex))
    results.update(_run_tasks(runner, second.values(), judge_retries, gen, calls, structured))
    records = _records(data, specs, results, num_bootstrap, seed)
    return JudgeResult(MetricSet(records), calls)


def _outcome(d: Datum, s: JudgeMetric, results: Mapping[str, TaskResult]):
    """(outcome or None, error TaskResult or None, raw replies) of one datum and metric."""
    ex, failed = _extracted(d, s, results)
    raws = {text_key(k, t): results[text_key(k, t)].raw for k, t in s.extracts(d)}
    if failed is not None:
        kind, r = failed
        return None, TaskResult(error=f"{kind}: {r.error}", raw=r.raw), raws
    tasks = s.plan(d, ex or {})
    replies = {}
    for t in tasks:
        r = results[t.key]
        raws[t.key] = r.raw
        if r.error is not None:
            return None, r, raws
        replies[t.key] = r.parsed
    details: dict[str, Any] = {k[0]: v for k, v in (ex or {}).items() if k[1] == d.prediction}
    out: Outcome = s.score(d, ex or {}, replies)
    return Outcome(out.value, out.reason, {**details, **out.details}), None, raws


def _records(
    data: Sequence[Datum],
    specs: Sequence[JudgeMetric],
    results: Mapping[str, TaskResult],
    num_bootstrap: int,
    seed: int,
) -> list[Metric]:
    from assay.llm.judge.evaluator import ERROR_PREFIX, JudgeEvaluator

    per: list[Metric] = []
    common = {"prompt_version": PROMPT_VERSION}
    for s in specs:
        for d in data:
            out, err, raws = _outcome(d, s, results)
            if err is not None:
                per.append(
                    datum_record(
                        s.type,
                        d.uid,
                        None,
                        reason=f"{ERROR_PREFIX}{err.error}",
                        **common,
                        raw_reply=err.raw,
                        details={"raw_replies": raws},
                    )
                )
                continue
            assert out is not None
            details = {**out.details, "raw_replies": raws}
            per.append(
                datum_record(s.type, d.uid, out.value, reason=out.reason, **common, details=details)
            )
    ev = JudgeEvaluator(metrics=[s.name for s in specs], num_bootstrap=num_bootstrap, seed=seed)
    computed = ev.add(per).compute()
    return per + [m for m in computed if "aggregate" in m.parameters]
