"""A stored run as Every Eval Ever files (``assay runs export ID --format every-eval-ever``).

Every Eval Ever (the EvalEval coalition's shared results format, schema 0.3.0, the
``every-eval-ever`` package) keeps a run as an aggregate ``<uuid>.json`` (the model, the
library, one ``evaluation_results`` entry per reported number) and, where the run has
per-sample data, a companion ``<uuid>_samples.jsonl`` (one instance record per sample
and scored result). Its datastore files them under
``data/<collection>/<developer>/<model>/``; :func:`every_eval_ever_files` gives both
files' contents and that relative folder, and the command writes them there under
``--out``, so the package's validator (``eee-validate``, path checks included) accepts
them as written.

What is kept, and how a re-import (:mod:`assay.importers.eee`) gets it back exactly:

* each record with a finite number as its value is one result: ``metric_name`` its type,
  ``metric_parameters`` its scalar parameters, ``additional_details.assay_parameters``
  all of them as JSON, and ``ci_low``/``ci_high``/``stderr`` also as the schema's
  ``uncertainty``; a record without a number (undefined, a dict) has no place in the
  schema and is left out (the command says how many);
* each item gives one instance record per scorer (each pointing to that scorer's first
  result): its score as a number (``C``/``I``/``P`` as 1/0/0.5) with ``is_correct`` when it
  is 1; the item's id, epoch and raw score (as JSON) in ``metadata``; a failed item has
  score 0 and its ``error``.

Example:
    >>> run = {"id": 7, "created": "2026-01-01T00:00:00+00:00", "kind": "stats",
    ...        "dataset": "qa", "model": "org/m", "parameters": {}, "assay_version": "0.1",
    ...        "metrics": [{"type": "Mean", "value": 0.5, "parameters": {"scorer": "s"}}],
    ...        "items": []}
    >>> files = every_eval_ever_files(run, retrieved="1767225600")
    >>> files.folder, files.aggregate["evaluation_results"][0]["score_details"]
    ('data/qa/org/m', {'score': 0.5})
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["every_eval_ever_files", "EEEFiles", "SCHEMA_VERSION"]

SCHEMA_VERSION = "0.3.0"
#: record types where a smaller value is the better one
_LOWER_IS_BETTER = frozenset({"Stderr", "Std", "Var", "RMSE", "MAE", "MSE", "Perplexity"})
#: the harness behind an imported run's format, as the schema names libraries
_LIBRARIES = {"inspect": "inspect_ai", "lm_eval": "lm_eval"}


@dataclass(frozen=True)
class EEEFiles:
    """The aggregate, the instance lines (empty when the run has no items), their file
    names and the datastore folder they belong in."""

    folder: str
    aggregate_name: str
    aggregate: dict[str, Any]
    samples_name: str
    samples: list[dict[str, Any]]

    def samples_text(self) -> str:
        return "".join(json.dumps(s, allow_nan=False) + "\n" for s in self.samples)


def _part(text: str) -> str:
    """One portable path component (the datastore's rule): unsafe characters as ``-``."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "unspecified"
    return "unspecified" if out.lower() in ("data", "unknown") else out


def _model_id(model: str | None) -> tuple[str, str, str]:
    """``(id, developer, model folder)``: ``org/name`` as it is; an endpoint URL
    (``http://host/v1#name``) as ``host/name``; any other name under ``unspecified``
    (the datastore wants a developer, which a bare name does not say)."""
    if not model:
        return "unspecified/unspecified", "unspecified", "unspecified"
    parts = model.split("/")
    if len(parts) == 2 and all(p and _part(p) == p for p in parts):
        return model, parts[0], parts[1]
    url = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/:#?]+)[^#]*(?:#(.*))?$", model)
    if url:
        developer, name = _part(url[1]), _part(url[2] or "default")
    else:
        developer, name = "unspecified", _part(model.replace("/", "_"))
    return f"{developer}/{name}", developer, name


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _scalars(params: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: v for k, v in params.items() if v is None or isinstance(v, (str, bool)) or (_finite(v))
    }


def _result(i: int, m: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    params = dict(m.get("parameters") or {})
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k in ("scorer", "filter"))
    result: dict[str, Any] = {
        "evaluation_result_id": f"result-{i + 1}",
        "evaluation_name": f"{m['type']} ({shown})" if shown else str(m["type"]),
        "source_data": {"dataset_name": dataset, "source_type": "other"},
        "metric_config": {
            "metric_id": str(m["type"]).lower(),
            "metric_name": str(m["type"]),
            "metric_parameters": _scalars(params),
            "lower_is_better": str(m["type"]) in _LOWER_IS_BETTER,
            "additional_details": {"assay_parameters": json.dumps(params, allow_nan=False)},
        },
        "score_details": {"score": m["value"]},
    }
    unc: dict[str, Any] = {}
    if _finite(params.get("ci_low")) and _finite(params.get("ci_high")):
        ci = {"lower": params["ci_low"], "upper": params["ci_high"]}
        if _finite(params.get("confidence_level")):
            ci["confidence_level"] = params["confidence_level"]
        unc["confidence_interval"] = ci
    if _finite(params.get("stderr")):
        unc["standard_error"] = {"value": params["stderr"]}
    if isinstance(params.get("n"), int) and not isinstance(params.get("n"), bool):
        unc["num_samples"] = params["n"]
    if unc:
        result["score_details"]["uncertainty"] = unc
    return result


def _score(v: Any) -> float | None:
    from assay.stats.score import value_to_float

    try:
        f = value_to_float(v)
    except Exception:  # a dict or list score: no one number
        return None
    return f if math.isfinite(f) else None


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(m, dict) for m in v):  # chat messages
        return "\n".join(str(m.get("content", "")) for m in v)
    return "" if v is None else json.dumps(v, allow_nan=False)


def _instances(
    run: Mapping[str, Any], results: list[dict[str, Any]], model_id: str, evaluation_id: str
) -> list[dict[str, Any]]:
    """One instance record per item and scorer (the scorer's first result)."""
    first: dict[str, str] = {}
    for r, m in zip(results, [m for m in run.get("metrics") or [] if _finite(m.get("value"))]):
        s = (m.get("parameters") or {}).get("scorer")
        if isinstance(s, str):
            first.setdefault(s, r["evaluation_result_id"])
    out: list[dict[str, Any]] = []
    for it in run.get("items") or []:
        parsed = it.get("parsed")
        scores = parsed if isinstance(parsed, dict) else {"score": parsed}
        info = it.get("info") or {}
        target = info.get("target") if isinstance(info, dict) else None
        refs = target if isinstance(target, list) else ([] if target is None else [target])
        for scorer, raw in scores.items():
            value = None if not it.get("ok", True) else _score(raw)
            meta = {
                "item_id": str(it["item_id"]),
                "scorer": str(scorer),
                "raw_score": json.dumps(raw, allow_nan=False),
                "item_params": json.dumps(it.get("params") or {}, allow_nan=False),
            }
            out.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": evaluation_id,
                    "model_id": model_id,
                    "evaluation_name": str(scorer),
                    **({"evaluation_result_id": first[scorer]} if scorer in first else {}),
                    "sample_id": str(it["item_id"]),
                    "interaction_type": "single_turn",
                    "input": {"raw": _text(it.get("prompt")),
                              "reference": [_text(t) for t in refs]},
                    "output": {"raw": [it.get("raw_answer") or ""]},
                    "answer_attribution": [],
                    "evaluation": {"score": 0.0 if value is None else value,
                                   "is_correct": value == 1.0},
                    "error": None if it.get("ok", True) else (it.get("error") or "failed"),
                    "metadata": meta,
                }
            )  # fmt: skip
    return out


def every_eval_ever_files(run: Mapping[str, Any], *, retrieved: str) -> EEEFiles:
    """The Every Eval Ever files of one stored run (``Evaluation.to_dict()``, items
    included); ``retrieved`` is the export time as Unix seconds (text)."""
    model_id, developer, model_dir = _model_id(run.get("model"))
    dataset = str(run.get("dataset") or run.get("kind") or "assay")
    collection = _part(dataset.replace("/", "_"))
    params = dict(run.get("parameters") or {})
    digest = hashlib.sha256(json.dumps([run.get("id"), run.get("created"), params],
                                       sort_keys=True, default=str).encode()).digest()  # fmt: skip
    name = str(uuid.UUID(bytes=digest[:16], version=4))
    evaluation_id = f"{dataset}/{model_id}/{retrieved}"
    numeric = [m for m in run.get("metrics") or [] if _finite(m.get("value"))]
    results = [_result(i, m, dataset) for i, m in enumerate(numeric)]
    fmt = str(params.get("import_format") or "")
    lib = _LIBRARIES.get(fmt, "assay")
    version = params.get(f"{fmt}_version") or (run.get("assay_version") if lib == "assay" else None)
    samples = _instances(run, results, model_id, evaluation_id)
    folder = f"data/{collection}/{developer}/{model_dir}"
    aggregate: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": str(run.get("created")),
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "assay",
            "source_type": "evaluation_run" if samples else "documentation",
            "source_organization_name": "assay",
            "evaluator_relationship": "other",
            "additional_details": {
                "assay_evaluation_id": str(run.get("id")),
                "assay_kind": str(run.get("kind")),
                "assay_dataset": "" if run.get("dataset") is None else str(run["dataset"]),
                "assay_model": "" if run.get("model") is None else str(run["model"]),
                "assay_parameters": json.dumps(params, allow_nan=False),
                "assay_version": str(run.get("assay_version")),
            },
        },
        "eval_library": {"name": lib, "version": str(version or "unknown")},
        "model_info": {
            "name": str(run.get("model") or "unknown"),
            "id": model_id,
            "developer": developer,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": results,
    }
    if samples:
        text = "".join(json.dumps(s, allow_nan=False) + "\n" for s in samples)
        aggregate["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": f"{folder}/{name}_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(text.encode()).hexdigest(),
            "total_rows": len(samples),
        }
    return EEEFiles(folder, f"{name}.json", aggregate, f"{name}_samples.jsonl", samples)
