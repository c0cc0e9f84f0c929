"""Every Eval Ever files read back: an aggregate ``<uuid>.json`` and its companion
``<uuid>_samples.jsonl`` (schema 0.3.0; see :mod:`assay.importers.eee_write`).

Records: one per ``evaluation_results`` entry, ``score_details.score`` its value. A
result written by assay (``metric_config.additional_details.assay_parameters``) gets
back its type and parameters exactly; any other is typed by its ``metric_name`` (else
``metric_id``, else the evaluation's name) with ``evaluation_name``, its scalar
``metric_parameters`` and its uncertainty (``stderr``, ``ci_low``, ``ci_high``,
``confidence_level``, ``n``) as parameters. Items: one per sample (and epoch, for files
assay wrote), each instance record's score under its ``evaluation_name``; a record with
an ``error`` is a failed item.

The run: kind ``every_eval_ever`` (or the kind assay exported it from), dataset the first
result's ``source_data.dataset_name``, model ``model_info.id``.

Example:
    >>> from assay.importers.eee_write import every_eval_ever_files
    >>> import json, os, tempfile
    >>> run = {"id": 7, "created": "2026-01-01T00:00:00+00:00", "kind": "stats",
    ...        "dataset": "qa", "model": "org/m", "parameters": {}, "assay_version": "0.1",
    ...        "metrics": [{"type": "Mean", "value": 0.5, "parameters": {"scorer": "s"}}]}
    >>> f = every_eval_ever_files(run, retrieved="1")
    >>> p = os.path.join(tempfile.mkdtemp(), f.aggregate_name)
    >>> _ = open(p, "w").write(json.dumps(f.aggregate))
    >>> back = eee_run(p)
    >>> back.kind, back.dataset, back.model, back.metrics.to_list()
    ('stats', 'qa', 'org/m', [{'type': 'Mean', 'value': 0.5, 'parameters': {'scorer': 's'}}])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.importers.types import ImportedRun, sha256_of
from assay.results import Metric, MetricSet

__all__ = ["eee_run", "is_eee_aggregate", "companion_of"]


def is_eee_aggregate(obj: Any) -> bool:
    """Whether a parsed JSON object is an Every Eval Ever aggregate."""
    return (
        isinstance(obj, dict)
        and "schema_version" in obj
        and isinstance(obj.get("evaluation_results"), list)
    )


def companion_of(aggregate: str | Path) -> Path:
    """``<uuid>_samples.jsonl`` beside ``<uuid>.json``."""
    p = Path(aggregate)
    return p.with_name(f"{p.stem}_samples.jsonl")


def _json(path: Path) -> Any:
    data = path.read_bytes()
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidInputError("not UTF-8 text (expected JSON)", source=str(path)) from None
    except json.JSONDecodeError as e:
        raise InvalidInputError(f"invalid JSON: {e.msg}", source=str(path)) from None


def _lines(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("not UTF-8 text (expected JSONL)", source=str(path)) from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"invalid JSON: {e.msg}", source=str(path), record=n) from None
        if not isinstance(row, dict) or "sample_id" not in row:
            raise InvalidInputError(
                "not an instance record (no 'sample_id')", source=str(path), record=n
            )
        rows.append(row)
    return rows


def _record(result: dict[str, Any], source: str, n: int) -> Metric:
    score = (result.get("score_details") or {}).get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise InvalidInputError(
            "must be a number", source=source, record=f"result {n}", field="score_details.score"
        )
    config = result.get("metric_config") or {}
    mine = (config.get("additional_details") or {}).get("assay_parameters")
    if isinstance(mine, str):
        return Metric(str(config.get("metric_name")), score, json.loads(mine))
    name = config.get("metric_name") or config.get("metric_id") or result.get("evaluation_name")
    params: dict[str, Any] = {"evaluation_name": result.get("evaluation_name")}
    params.update(config.get("metric_parameters") or {})
    unc = (result.get("score_details") or {}).get("uncertainty") or {}
    se = (unc.get("standard_error") or {}).get("value")
    ci = unc.get("confidence_interval") or {}
    extra = {
        "stderr": se,
        "ci_low": ci.get("lower"),
        "ci_high": ci.get("upper"),
        "confidence_level": ci.get("confidence_level"),
        "n": unc.get("num_samples"),
    }
    params.update({k: v for k, v in extra.items() if v is not None})
    return Metric(str(name), score, params)


def _items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Instance records grouped into items: by (item id, item params) for assay's files,
    by sample id otherwise; each scorer's score under its name."""
    items: dict[str, dict[str, Any]] = {}
    for r in rows:
        meta = r.get("metadata") or {}
        mine = "raw_score" in meta
        params = json.loads(meta["item_params"]) if mine else {"epoch": 1}
        iid = str(meta.get("item_id", r["sample_id"]))
        key = json.dumps([iid, params], sort_keys=True)
        ev = r.get("evaluation") or {}
        scorer = str(meta.get("scorer", r.get("evaluation_name")))
        value = (
            json.loads(meta["raw_score"]) if mine else (None if r.get("error") else ev.get("score"))
        )
        it = items.setdefault(key, {
            "item_id": iid,
            "prompt": (r.get("input") or {}).get("raw"),
            "ok": not r.get("error"),
            "raw_answer": ((r.get("output") or {}).get("raw") or [None])[0],
            "parsed": {},
            "params": params,
            "error_kind": "sample_error" if r.get("error") else None,
            "error": r.get("error"),
            "info": {"reference": (r.get("input") or {}).get("reference")},
        })  # fmt: skip
        it["parsed"][scorer] = value
    return list(items.values())


def eee_run(path: str | Path) -> ImportedRun:
    """The run of an Every Eval Ever aggregate (with its companion samples, if any)."""
    p = Path(path)
    agg = _json(p)
    if not is_eee_aggregate(agg):
        raise InvalidInputError(
            "not an Every Eval Ever aggregate (no schema_version and evaluation_results)",
            source=str(p),
        )
    records = [_record(r, str(p), n) for n, r in enumerate(agg["evaluation_results"], 1)]
    samples = companion_of(p)
    files: list[Path] = [p]
    rows: list[dict[str, Any]] = []
    if samples.is_file():
        rows = _lines(samples)
        files.append(samples)
    if not records and not rows:
        raise InvalidInputError("the file holds no results (nothing to import)", source=str(p))
    details = (agg.get("source_metadata") or {}).get("additional_details") or {}
    model_info = agg.get("model_info") or {}
    results = agg["evaluation_results"]
    dataset = ((results[0].get("source_data") or {}).get("dataset_name")) if results else None
    params: dict[str, Any] = {
        "evaluation_id": agg.get("evaluation_id"),
        "schema_version": agg.get("schema_version"),
        "eval_library": (agg.get("eval_library") or {}).get("name"),
    }
    model = model_info.get("id")
    if "assay_parameters" in details:  # a run assay exported: its own fields back
        params = {**json.loads(details["assay_parameters"]), "every_eval_ever": params}
        dataset = details.get("assay_dataset") or None
        model = details.get("assay_model") or None
    return ImportedRun(
        format="every_eval_ever",
        source=str(p),
        sha256=sha256_of(files),
        kind=details.get("assay_kind") or "every_eval_ever",
        dataset=dataset,
        model=model,
        parameters=params,
        metrics=MetricSet(records),
        items=_items(rows),
    )
