"""lm-evaluation-harness ``--log_samples`` output read as files.

With ``--output_path DIR --log_samples``, lm-eval writes for each task a
``samples_<task>_<date>.jsonl`` (one line per document and filter) beside one
``results_<date>.json`` for the whole run (lm-eval 0.4: ``lm_eval/loggers/
evaluation_tracker.py``). A samples line holds ``doc_id``, ``doc``, ``target``,
``arguments`` (the requests, as ``{"gen_args_0": {"arg_0": context, ...}}``), ``resps`` and
``filtered_resps`` (the model's answers before and after the filter), ``filter``,
``metrics`` (the names of its per-sample metrics), ``doc_hash``, ``prompt_hash``,
``target_hash`` and one key per metric (``acc``, ``acc_norm``, ``exact_match``) with the
document's value. The results JSON has ``results[task]["<metric>,<filter>"]`` and
``"<metric>_stderr,<filter>"``, the task's ``configs`` (each metric's ``aggregation``),
``model_name`` and ``config`` (``model``, ``model_args``).

One samples file is one run: kind ``lm_eval``, dataset the task, model the results'
``model_name``. Records: per metric and filter, lm-eval's value and stderr checked against
assay's mean and stderr of the per-document values (where the metric's aggregation is
the mean); a metric aggregated otherwise (``bleu``, ``f1`` over the corpus) is kept as
reported. Items: one per document and filter, epoch 1 (lm-eval has no epochs).

Example:
    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> rows = [{"doc_id": i, "filter": "none", "target": "1", "resps": [], "filtered_resps": [],
    ...          "metrics": ["acc"], "acc": v} for i, v in enumerate([1.0, 0.0, 1.0, 1.0])]
    >>> p = os.path.join(d, "samples_demo_2026-01-01T00-00-00.000000.jsonl")
    >>> _ = open(p, "w").write("".join(json.dumps(r) + "\\n" for r in rows))
    >>> res = {"results": {"demo": {"acc,none": 0.75, "acc_stderr,none": 0.25}}, "model_name": "m"}
    >>> _ = open(os.path.join(d, "results_2026-01-01T00-00-00.000000.json"), "w").write(
    ...     json.dumps(res))
    >>> run = lm_eval_run(p)
    >>> run.dataset, run.model, [(m.type, m.value) for m in run.metrics], run.notices
    ('demo', 'm', [('Mean', 0.75), ('Stderr', 0.25)], [])
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.importers.recompute import reported_records
from assay.importers.types import ImportedRun, sha256_of
from assay.results import Metric, MetricSet
from assay.stats.score import SampleScore, Score

__all__ = ["lm_eval_run", "samples_name", "results_for", "samples_for", "read_samples"]

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_RESULTS = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")
#: keys of a samples line that are not per-sample metrics
_BOOKKEEPING = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
     "doc_hash", "prompt_hash", "target_hash"}
)  # fmt: skip


def samples_name(path: str | Path) -> tuple[str, str] | None:
    """``(task, date)`` of a ``samples_<task>_<date>.jsonl`` name, else ``None``."""
    m = _SAMPLES.match(Path(path).name)
    return None if m is None else (m["task"], m["date"])


def results_for(samples: str | Path) -> Path | None:
    """The ``results_<date>.json`` beside a samples file, if there is one."""
    parsed = samples_name(samples)
    if parsed is None:
        return None
    p = Path(samples).with_name(f"results_{parsed[1]}.json")
    return p if p.is_file() else None


def samples_for(results: str | Path) -> list[Path]:
    """The samples files of a ``results_<date>.json`` (same folder, same date)."""
    m = _RESULTS.match(Path(results).name)
    if m is None:
        return []
    return sorted(
        p
        for p in Path(results).parent.glob(f"samples_*_{m['date']}.jsonl")
        if samples_name(p) is not None
    )


def _text(path: Path, what: str) -> str:
    data = path.read_bytes()
    if b"\x00" in data:
        raise InvalidInputError(f"a binary file, not {what}", source=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"not UTF-8 text, not {what}", source=str(path)) from None


def read_samples(path: str | Path) -> list[dict[str, Any]]:
    """The lines of a samples file (errors name the file and the line)."""
    p = Path(path)
    rows = []
    for n, line in enumerate(_text(p, "lm-eval samples JSONL").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"invalid JSON: {e.msg}", source=str(p), record=n) from None
        if not isinstance(row, dict) or "doc_id" not in row:
            raise InvalidInputError(
                "not an lm-eval sample (no 'doc_id')", source=str(p), record=n, field="doc_id"
            )
        rows.append(row)
    if not rows:
        raise InvalidInputError("the file holds no samples (nothing to import)", source=str(p))
    return rows


def _metric_names(rows: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for r in rows:
        listed = r.get("metrics")
        keys = listed if isinstance(listed, list) else [k for k in r if k not in _BOOKKEEPING]
        names.update(dict.fromkeys(str(k) for k in keys if k in r))
    return list(names)


def _load_results(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        obj = json.loads(_text(path, "an lm-eval results JSON"))
    except json.JSONDecodeError as e:
        raise InvalidInputError(f"invalid JSON: {e.msg}", source=str(path)) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("results"), dict):
        raise InvalidInputError("not an lm-eval results file (no 'results')", source=str(path))
    return obj


def _aggregation(results: dict[str, Any], task: str, metric: str) -> str | None:
    for m in ((results.get("configs") or {}).get(task) or {}).get("metric_list") or []:
        if isinstance(m, dict) and m.get("metric") == metric:
            agg = m.get("aggregation")
            return agg if isinstance(agg, str) else None
    return "mean" if metric in ("acc", "acc_norm", "exact_match") else None


def _scores(rows: list[dict[str, Any]], metric: str) -> list[SampleScore]:
    out = []
    for r in rows:
        v = r.get(metric)
        ok = isinstance(v, (int, float)) and not (isinstance(v, float) and v != v)
        out.append(SampleScore(Score(v if ok else None), r["doc_id"], 1))
    return out


def _wanted(
    reported: dict[str, Any], metric: str, f: str, mean: bool
) -> tuple[list[tuple[str, Any, dict[str, Any]]], list[str]]:
    """What lm-eval reported for one metric and filter, as ``(assay metric, value,
    params)`` with the keys of the results file: the mean and its stderr where the
    aggregation is the mean, else the value alone."""
    key, se_key = f"{metric},{f}", f"{metric}_stderr,{f}"
    if not mean:
        return [(metric, reported.get(key), {})], [key]
    want: list[tuple[str, Any, dict[str, Any]]] = [("mean", reported.get(key), {})]
    labels = [key]
    if se_key in reported or key not in reported:
        want.append(("stderr", reported.get(se_key), {}))
        labels.append(se_key)
    return want, labels


def _records(
    rows: list[dict[str, Any]], results: dict[str, Any], task: str
) -> tuple[list[Metric], list[str]]:
    """lm-eval's reported value and stderr of each metric and filter, checked; without
    a results file (or a metric it lacks), assay's mean and stderr."""
    reported = (results.get("results") or {}).get(task) or {}
    out: list[Metric] = []
    notes: list[str] = []
    for f in dict.fromkeys(str(r.get("filter", "none")) for r in rows):
        these = [r for r in rows if str(r.get("filter", "none")) == f]
        for metric in _metric_names(these):
            mean = _aggregation(results, task, metric) == "mean"
            want, labels = _wanted(reported, metric, f, mean)
            scores = _scores(these, metric) if mean else []
            recs, n = reported_records(scores, want, "mean", scorer=metric, labels=labels, filter=f)
            out += recs
            notes += n
    return out, notes


def _prompt(row: dict[str, Any]) -> Any:
    args = row.get("arguments")
    if isinstance(args, dict):
        first = args.get("gen_args_0")
        if isinstance(first, dict) and "arg_0" in first:
            return first["arg_0"]
    return row.get("doc")


def _answer(row: dict[str, Any]) -> str | None:
    f = row.get("filtered_resps")
    if isinstance(f, list) and f and isinstance(f[0], str):
        return f[0]
    return None


def _items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = _metric_names(rows)
    keep = ("target", "doc", "resps", "filtered_resps", "doc_hash", "prompt_hash", "target_hash")
    return [
        {
            "item_id": str(r["doc_id"]),
            "prompt": _prompt(r),
            "ok": True,
            "raw_answer": _answer(r),
            "parsed": {m: r.get(m) for m in names if m in r},
            "params": {"epoch": 1, "filter": str(r.get("filter", "none"))},
            "info": {"doc_id": r["doc_id"], **{k: r[k] for k in keep if k in r}},
        }
        for r in rows
    ]


def _model(results: dict[str, Any]) -> str | None:
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = results.get("config") or {}
    m = re.search(r"(?:pretrained|model)=([^,]+)", str(config.get("model_args") or ""))
    return m.group(1) if m else (config.get("model") or None)


def lm_eval_run(samples: str | Path, results: str | Path | None = None) -> ImportedRun:
    """The run of one samples file (with the results JSON beside it, if any)."""
    p = Path(samples)
    parsed = samples_name(p)
    rows = read_samples(p)
    res_path = Path(results) if results is not None else results_for(p)
    res = _load_results(res_path)
    task = parsed[0] if parsed else p.stem
    records, notes = _records(rows, res, task)
    if res_path is None:
        notes.append("no results_<date>.json beside it: model unknown, assay's numbers kept")
    config = res.get("config") or {}
    params = {
        "task": task,
        "version": (res.get("versions") or {}).get(task),
        "n_shot": (res.get("n-shot") or {}).get(task),
        "lm_eval_model": config.get("model"),
        "model_args": config.get("model_args"),
        "lm_eval_version": res.get("lm_eval_version"),
        "git_hash": res.get("git_hash"),
        "samples": len(rows),
    }
    files = [p] + ([res_path] if res_path is not None else [])
    return ImportedRun(
        format="lm_eval",
        source=str(p),
        sha256=sha256_of(files),
        kind="lm_eval",
        dataset=task,
        model=_model(res),
        parameters={k: v for k, v in params.items() if v is not None},
        metrics=MetricSet(records),
        items=_items(rows),
        notices=notes,
    )
