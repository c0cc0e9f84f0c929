"""Running the judge metrics as one task of the one driver (:func:`assay.llm.evaluate`).

1. **items**: each datum and metric asks for shared intermediates (the statements,
   opinions or claims of a text: one call per distinct text for the whole run) and, once
   those are known, for its own judgements (:mod:`assay.llm.judge.definitions`): stage 0
   is the intermediates and the judgements that need none, stage 1 the judgements built
   on intermediates.
2. **run**: the driver's shared runner (concurrency, transport retries, cache, resume,
   ``max_errors``, interrupts).
3. **parse**: each reply is checked against its pydantic shape
   (:mod:`assay.llm.judge.schemas`); the driver re-asks an invalid reply up to
   ``judge_retries`` times (the conversation continues with the reason it was refused, so
   the re-ask is a new call, not a cache hit), then it is recorded as an error of every
   metric of that datum that needed it (``value: null``, the reason and the raw reply
   kept). The run goes on.
4. **score**: pure functions (:mod:`assay.llm.judge.compute`) turn verdicts into values;
   each per-datum record keeps, under ``parameters["details"]``, the intermediates,
   verdicts with reasons and raw replies behind it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.llm.driver import LLMRun, evaluate
from assay.llm.items import Item
from assay.llm.judge.prompts import PROMPT_VERSION, messages, render
from assay.llm.judge.registry import get_metric
from assay.llm.judge.schemas import Invalid as SchemaInvalid
from assay.llm.judge.schemas import parse, reply_format
from assay.llm.judge.types import (
    COLUMNS,
    EXTRACTIONS,
    Datum,
    JudgeMetric,
    Outcome,
    Task,
    extraction_task,
    text_key,
)
from assay.llm.options import RunOptions
from assay.llm.task import Call, Invalid, LLMTask, Prepared, final_calls
from assay.results import Metric, MetricSet
from assay.stats.means import NUM_BOOTSTRAP, datum_record

if TYPE_CHECKING:
    from assay.llm.models.base import ChatModel

__all__ = [
    "TaskResult",
    "JudgeResult",
    "JudgeTask",
    "judge",
    "check_fields",
    "first_stage",
    "items_of",
    "task_params",
]

#: What a judge run returns (the driver's :class:`~assay.llm.driver.LLMRun`).
JudgeResult = LLMRun


@dataclass(frozen=True)
class TaskResult:
    """The final state of one judge call: its parsed reply, or the error."""

    parsed: Any = None
    error: str | None = None
    raw: str | None = None


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


def task_params(
    task: Task, params: Mapping[str, Any], constraint: str | None = None
) -> dict[str, Any]:
    """The generation parameters of a task's calls; ``constraint`` (``grammar``,
    ``json_schema``) sends its reply schema in that form (:mod:`assay.llm.constrain`)."""
    if constraint is None:
        return dict(params)
    from assay.llm.constrain import json_constraint

    return {**params, **json_constraint(reply_format(task.schema, task.lengths), constraint)}


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
    tasks: Sequence[Task], params: Mapping[str, Any] | None = None, constraint: str | None = None
) -> list[Item]:
    """The runner items of tasks (what ``--dry-run`` prints)."""
    gen = dict(params) if params is not None else {"temperature": 0.0}
    return [
        Item(t.key, messages(t.prompt, **t.values), task_params(t, gen, constraint)) for t in tasks
    ]


class JudgeTask(LLMTask):
    """Judge every datum on every metric: one record per datum and metric plus aggregates.

    Args:
        data: the datums (unique ``uid``\\ s).
        metrics: judge metric names (see :func:`assay.llm.judge.registered`).
        judge_retries: re-asks of an invalid reply before it is recorded as an error.
        params: generation parameters of every call (default ``temperature=0``).
        num_bootstrap, seed: the aggregates' bootstrap interval (``--ci`` and its options,
            in the run options, replace them).
        kind, dataset, parameters: how the run is stored.
        columns: the datums' other columns (one list per name, in the datums' order): what
            the run options' ``by`` may slice the aggregates by.
        repeats: judgement calls per datum and metric (:mod:`assay.llm.judge.repeats`).
    """

    can_reask = True
    can_structure = True

    def __init__(
        self,
        data: Sequence[Datum],
        metrics: Sequence[str],
        *,
        judge_retries: int = 2,
        params: Mapping[str, Any] | None = None,
        num_bootstrap: int = NUM_BOOTSTRAP,
        seed: int = 0,
        kind: str = "judge",
        dataset: str = "judge",
        parameters: Mapping[str, Any] | None = None,
        columns: Mapping[str, Sequence[Any]] | None = None,
        repeats: int = 1,
    ) -> None:
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise InvalidInputError(
                f"must be an integer >= 1 (judge calls per item), got {repeats!r}",
                source="--repeats",
            )
        self.repeats = repeats
        self.specs = [get_metric(n) for n in dict.fromkeys(metrics)]
        self.columns = {k: list(v) for k, v in (columns or {}).items()}
        for k, v in self.columns.items():
            if len(v) != len(data):
                raise InvalidInputError(f"expected {len(data)} values, got {len(v)}", field=k)
        if judge_retries < 0:
            raise InvalidInputError(f"must be >= 0, got {judge_retries}", source="--judge-retries")
        uids = [d.uid for d in data]
        if len(set(uids)) != len(uids):
            raise InvalidInputError("uids must be unique", field="uid")
        check_fields(data, self.specs)
        self.data = list(data)
        self.reasks = int(judge_retries)
        self.gen = dict(params) if params is not None else {"temperature": 0.0}
        self.num_bootstrap, self.seed = int(num_bootstrap), int(seed)
        self.kind, self._dataset = kind, dataset
        self._parameters = dict(parameters) if parameters is not None else None

    @property
    def dataset(self) -> str:
        return self._dataset

    def item_columns(self) -> list[str]:
        """The datums' other columns (given as ``columns``)."""
        return list(self.columns)

    def item_values(self, column: str) -> list[tuple[str, Any]]:
        """The datums by uid, with their value of ``column``."""
        return [(f"uid {d.uid}", v) for d, v in zip(self.data, self.columns.get(column, []))]

    def ci_seed(self) -> int:
        return self.seed

    def configure(self, options: RunOptions) -> None:
        """``--max-tokens`` caps every judge call; ``--json-mode``, ``--judge-retries``."""
        super().configure(options.replace(max_tokens=None))
        if options.max_tokens is not None:
            self.gen["max_tokens"] = options.max_tokens

    def parameters(self) -> dict[str, Any]:
        if self._parameters is not None:
            return dict(self._parameters)
        return {
            "metrics": [s.name for s in self.specs],
            "judge_retries": self.reasks,
            "prompt_version": PROMPT_VERSION,
        }

    def has_later_stages(self) -> bool:
        """Whether judgements follow the first stage (built on its extracted texts): what
        a dry run cannot count before the replies."""
        return any(s.extracts(d) for d in self.data for s in self.specs)

    def _prepared(self, tasks: Sequence[Task]) -> list[Prepared]:
        from assay.llm.judge.repeats import repeated

        items = items_of(tasks, self.gen, self.constraint)
        out = [Prepared(it, {"task": t}) for it, t in zip(items, tasks, strict=True)]
        return out if self.repeats == 1 else repeated(out, self.repeats)

    def stage(self, n: int, calls: Sequence[Call]) -> list[Prepared]:
        """Stage 0: intermediates and direct judgements; stage 1: judgements on intermediates."""
        if n == 0:
            return self._prepared(first_stage(self.data, self.specs))
        if n > 1:
            return []
        results = self.results(calls)
        second: dict[str, Task] = {}
        for d in self.data:
            for s in self.specs:
                if s.extracts(d):
                    ex, _ = _extracted(d, s, results)
                    if ex is not None:
                        second.update((t.key, t) for t in s.plan(d, ex))
        return self._prepared(list(second.values()))

    def parse(self, prepared: Prepared, text: str) -> Any:
        task: Task = prepared.info["task"]
        parsed = parse(text, task.schema, task.lengths)
        return Invalid(parsed.reason) if isinstance(parsed, SchemaInvalid) else parsed

    def reask_prompt(self, reason: str) -> str:
        return render("retry", reason=reason)

    def results(self, calls: Sequence[Call]) -> dict[str, TaskResult]:
        """The final state of every judge call made, by task key."""
        out: dict[str, TaskResult] = {}
        for key, c in final_calls(calls).items():
            rec = c.record
            if not rec.ok:
                out[key] = TaskResult(error=f"call failed: {rec.error_kind}: {rec.error}")
            elif c.invalid is not None:
                out[key] = TaskResult(
                    error=f"invalid reply after {self.reasks + 1} attempt(s): {c.invalid}",
                    raw=rec.text,
                )
            else:
                out[key] = TaskResult(parsed=c.value, raw=rec.text)
        return out

    def score(self, calls: Sequence[Call]) -> MetricSet:
        results = _Missing(self.results(calls))
        if self.repeats == 1:
            return MetricSet(_records(self, results))
        from assay.llm.judge.repeats import repeated_records

        return MetricSet(repeated_records(self, results, per_datum, aggregate))


class _Missing(dict):  # type: ignore[type-arg]
    """Results of calls never made (a run stopped by ``max_errors``) read as errors."""

    def __missing__(self, key: str) -> TaskResult:
        return TaskResult(error="not run: the run was stopped after too many call errors")


def judge(
    data: Sequence[Datum],
    metrics: Sequence[str],
    *,
    model: ChatModel | str | None = None,
    options: RunOptions | None = None,
    judge_retries: int = 2,
    params: Mapping[str, Any] | None = None,
    num_bootstrap: int = NUM_BOOTSTRAP,
    seed: int = 0,
    structured: str | bool | None = None,
    columns: Mapping[str, Sequence[Any]] | None = None,
    **run: Any,
) -> LLMRun:
    """Judge every datum on every metric through the one driver (see :class:`JudgeTask`).

    ``model``: a spec, a model, or ``None`` for the default. ``options`` (or, without
    them, ``run``: :class:`~assay.llm.options.RunOptions` fields such as ``cache``,
    ``concurrency``) say how the calls are run. ``structured`` (``auto``, the default of
    the options: where the model supports it; ``on``; ``off``) sends each reply's JSON
    schema, with the list lengths the judgement needs, as a constraint: the embedded model
    and llama.cpp servers (by grammar) and servers taking ``response_format``
    ``json_schema`` (OpenAI, vLLM, Ollama) can then only answer in that shape
    (:mod:`assay.llm.constrain`); the reply is still checked. ``columns``: the datums'
    other columns, which the options' ``by`` slices the aggregates by; the options' ``ci``
    (with ``ci_method``, ``num_bootstrap``, ``seed``) sets the aggregates' interval.
    """
    task = JudgeTask(
        data,
        metrics,
        judge_retries=judge_retries,
        params=params,
        num_bootstrap=num_bootstrap,
        seed=seed,
        columns=columns,
    )
    opts = options or RunOptions.of(**run)
    if structured is not None:
        opts = opts.replace(structured=structured)
    return evaluate(task, model, opts)


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


def _records(task: JudgeTask, results: Mapping[str, TaskResult]) -> list[Metric]:
    """Per-datum records of every metric, then the aggregates (and their slices) through
    the :class:`~assay.llm.judge.evaluator.JudgeEvaluator`."""
    return aggregate(task, per_datum(task, results))


def per_datum(task: JudgeTask, results: Mapping[str, TaskResult]) -> list[Metric]:
    """One record per datum and metric (the value, or ``None`` with the error)."""
    from assay.llm.judge.evaluator import ERROR_PREFIX

    data, specs = task.data, task.specs
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
    return per


def aggregate(task: JudgeTask, per: list[Metric]) -> list[Metric]:
    """The per-datum records and their aggregates (and slices) through the
    :class:`~assay.llm.judge.evaluator.JudgeEvaluator`."""
    from assay.llm.judge.evaluator import JudgeEvaluator

    data, specs = task.data, task.specs
    ci = task.ci
    ev = JudgeEvaluator(
        metrics=[s.name for s in specs],
        num_bootstrap=task.num_bootstrap if ci is None else ci.num_bootstrap,
        seed=task.seed if ci is None else ci.seed,
        ci=None if ci is None else ci.level,
        ci_method="bootstrap" if ci is None else ci.method,
        by=task.by,
        cluster=None if ci is None else ci.cluster,
    )
    row = {d.uid: i for i, d in enumerate(data)}
    wanted = task.scored_columns()
    columns = {c: [task.columns[c][row[m.parameters["datum_uid"]]] for m in per] for c in wanted}
    computed = ev.add(per, columns).compute()
    return per + [m for m in computed if "aggregate" in m.parameters]
