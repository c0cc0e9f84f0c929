"""An Inspect log as an :class:`~assay.importers.types.ImportedRun`.

The run: kind ``inspect``, dataset the log's dataset name (else its task), model the
log's model, created when the evaluation was; parameters the task, its ids, status,
epochs, scorers and Inspect's version. Records: per scorer, the metrics of the log's
``results`` checked against assay's recomputation
(:func:`~assay.importers.recompute.reported_records`); a scorer the results do not cover
(a log that stopped early) gets assay's mean and stderr. Items: one per sample and epoch
(see :mod:`assay.importers.types`).

Example:
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "log.json")
    >>> samples = [{"id": i, "epoch": 1, "input": "q", "target": "a",
    ...             "scores": {"match": {"value": v}}} for i, v in enumerate("CCI")]
    >>> results = {"scores": [{"name": "match", "scorer": "match", "metrics": {
    ...     "accuracy": {"name": "accuracy", "value": 2 / 3, "params": {}}}}]}
    >>> _ = open(p, "w").write(json.dumps({"version": 2, "status": "success",
    ...     "eval": {"task": "t", "model": "m"}, "results": results, "samples": samples}))
    >>> run = inspect_run(p)
    >>> [(m.type, m.parameters["scorer"]) for m in run.metrics], len(run.items), run.notices
    ([('Accuracy', 'match')], 3, [])
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from assay.importers.inspect_log import (
    InspectLog,
    read_inspect_log,
    reported_metrics,
    sample_scores,
)
from assay.importers.recompute import reported_records
from assay.importers.types import ImportedRun, sha256_of
from assay.results import Metric, MetricSet

__all__ = ["inspect_run", "inspect_items"]


def _created(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def _completion(output: Any) -> str | None:
    if not isinstance(output, dict):
        return None
    if isinstance(output.get("completion"), str):
        return str(output["completion"])
    choices = output.get("choices") or []
    content = (choices[0].get("message") or {}).get("content") if choices else None
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict)) or None
    return content if isinstance(content, str) else None


def _tokens(usage: Any, key: str) -> int | None:
    if not isinstance(usage, dict) or not usage:
        return None
    vals = [u.get(key) for u in usage.values() if isinstance(u, dict)]
    return sum(v for v in vals if isinstance(v, int)) if vals else None


def inspect_items(log: InspectLog) -> list[dict[str, Any]]:
    """One item (the store's ItemRecord fields) per sample and epoch."""
    items = []
    for s in log.samples:
        scores = s.get("scores") or {}
        err = s.get("error")
        message = (err.get("message") if isinstance(err, dict) else str(err)) if err else None
        keep = ("value", "answer", "explanation", "metadata")
        items.append(
            {
                "item_id": str(s["id"]),
                "prompt": s.get("input"),
                "ok": not err,
                "raw_answer": _completion(s.get("output")),
                "parsed": {
                    n: (scores[n].get("value") if isinstance(scores.get(n), dict) else None)
                    for n in log.scorers
                },
                "params": {"epoch": int(s.get("epoch", 1))},
                "error_kind": "sample_error" if err else None,
                "error": message,
                "latency": s.get("total_time"),
                "prompt_tokens": _tokens(s.get("model_usage"), "input_tokens"),
                "completion_tokens": _tokens(s.get("model_usage"), "output_tokens"),
                "info": {
                    "sample_id": s["id"],
                    "epoch": int(s.get("epoch", 1)),
                    "target": s.get("target"),
                    "scores": {
                        n: {k: v.get(k) for k in keep if k in v}
                        for n, v in scores.items()
                        if isinstance(v, dict)
                    },
                    "metadata": s.get("metadata"),
                },
            }
        )
    return items


def inspect_records(log: InspectLog) -> tuple[list[Metric], list[str]]:
    """The log's metrics per scorer, checked against assay's recomputation."""
    out: list[Metric] = []
    notes: list[str] = []
    covered: set[str] = set()
    for es in log.results.get("scores") or []:
        if not isinstance(es, dict):
            continue
        scorer = str(es.get("scorer") or es.get("name"))
        if scorer not in log.scorers:
            continue
        covered.add(scorer)
        recs, n = reported_records(
            sample_scores(log, scorer), reported_metrics(es), es.get("reducer"), scorer=scorer
        )
        out += recs
        notes += n
    for scorer in log.scorers:
        if scorer not in covered:  # a log that stopped before its results
            recs, _ = reported_records(
                sample_scores(log, scorer), [("mean", None, {}), ("stderr", None, {})],
                "mean", scorer=scorer,
            )  # fmt: skip
            out += recs
            notes.append(
                f"scorer {scorer!r}: the log reports no metrics; assay's mean and stderr kept"
            )
    return out, notes


def inspect_run(path: str | Path) -> ImportedRun:
    """The run an Inspect log (``.eval`` or ``.json``) holds."""
    log = read_inspect_log(path)
    ev = log.eval
    dataset = ev.get("dataset") or {}
    records, notes = inspect_records(log)
    params = {
        "task": ev.get("task"),
        "task_id": ev.get("task_id"),
        "eval_id": ev.get("eval_id"),
        "run_id": ev.get("run_id"),
        "status": log.header.get("status"),
        "epochs": (ev.get("config") or {}).get("epochs") or 1,
        "scorers": log.scorers,
        "samples": len(log.samples),
        "failed_samples": sum(1 for s in log.samples if s.get("error")),
        "inspect_version": (ev.get("packages") or {}).get("inspect_ai"),
    }
    return ImportedRun(
        format="inspect",
        source=str(path),
        sha256=sha256_of([path]),
        kind="inspect",
        dataset=dataset.get("name") or ev.get("task"),
        model=ev.get("model"),
        parameters={k: v for k, v in params.items() if v is not None},
        metrics=MetricSet(records),
        items=inspect_items(log),
        created=_created(ev.get("created")),
        notices=notes,
    )
