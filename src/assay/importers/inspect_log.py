"""Inspect AI logs read as files: ``.eval`` (a zip of JSON members) and ``.json``.

An Inspect log holds the evaluation's spec (``eval``: task, model, dataset, config with
its epochs, the scorers and their metrics), its ``results`` (per scorer and reducer, the
metrics Inspect computed) and its ``samples``, one per sample and epoch, each with its
``scores`` by scorer (``value``, ``answer``, ``explanation``, ``metadata``) or an ``error``.
A ``.eval`` archive keeps the spec and results in ``header.json`` and each sample in
``samples/<id>_epoch_<n>.json``; a ``.json`` log is one object with all of them. Nothing
of Inspect AI is imported: the files are read as JSON (zstd members by
:mod:`assay.importers.evalzip`).

:func:`read_inspect_log` reads either form into an :class:`InspectLog`;
:func:`sample_scores` gives one scorer's scores as :class:`~assay.stats.SampleScore`
(an errored sample's score is ``None``: a failed score, counted in ``n_failed``).

Example:
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "log.json")
    >>> sample = {"id": 1, "epoch": 1, "input": "q", "target": "a",
    ...           "scores": {"match": {"value": "C"}}}
    >>> _ = open(p, "w").write(json.dumps({"version": 2, "status": "success",
    ...     "eval": {"task": "t", "model": "m"}, "samples": [sample]}))
    >>> log = read_inspect_log(p)
    >>> log.scorers, [s.score.value for s in sample_scores(log, "match")]
    (['match'], ['C'])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.importers.evalzip import EvalZip
from assay.stats.score import SampleScore, Score

__all__ = ["InspectLog", "read_inspect_log", "sample_scores", "is_inspect_json", "ScorerScores",
           "scorer_scores", "reported_metrics"]  # fmt: skip


@dataclass(frozen=True)
class InspectLog:
    """An Inspect log's parts: the header (``version``, ``status``, ``eval``, ``plan``,
    ``results``, ``stats``), the samples, and the scorer names in the log's order."""

    path: str
    header: dict[str, Any]
    samples: list[dict[str, Any]]
    scorers: list[str]

    @property
    def eval(self) -> dict[str, Any]:
        return self.header.get("eval") or {}

    @property
    def results(self) -> dict[str, Any]:
        return self.header.get("results") or {}


def is_inspect_json(obj: Any) -> bool:
    """Whether a parsed JSON object is an Inspect log (its ``eval`` spec names a task)."""
    return isinstance(obj, dict) and isinstance(obj.get("eval"), dict) and "task" in obj["eval"]


def _load_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except UnicodeDecodeError:
        raise InvalidInputError("not UTF-8 text (expected a JSON log)", source=str(path)) from None
    except json.JSONDecodeError as e:
        raise InvalidInputError(
            f"invalid JSON at line {e.lineno}: {e.msg}", source=str(path)
        ) from None


def _sample_order(header: dict[str, Any]) -> dict[Any, int]:
    ids = ((header.get("eval") or {}).get("dataset") or {}).get("sample_ids") or []
    return {json.dumps(i): n for n, i in enumerate(ids)}


def _read_eval(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with EvalZip(path) as z:
        names = z.names()
        if "header.json" in names:
            header = z.json("header.json")
        elif "_journal/start.json" in names:  # a run that has not finished
            header = z.json("_journal/start.json")
        else:
            raise InvalidInputError(
                "a zip archive but not an Inspect log (no header.json)", source=str(path)
            )
        samples = [z.json(n) for n in names if n.startswith("samples/") and n.endswith(".json")]
    return header, samples


def _scorer_names(header: dict[str, Any], samples: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for s in (header.get("eval") or {}).get("scorers") or []:
        if isinstance(s, dict) and isinstance(s.get("name"), str):
            names[s["name"]] = None
    for s in (header.get("results") or {}).get("scores") or []:
        name = (s.get("scorer") or s.get("name")) if isinstance(s, dict) else None
        if isinstance(name, str):
            names[name] = None
    for smp in samples:
        names.update(dict.fromkeys(smp.get("scores") or {}))
    return list(names)


def _check_samples(path: Path, samples: list[Any]) -> None:
    for n, s in enumerate(samples, 1):
        if not isinstance(s, dict) or "id" not in s:
            raise InvalidInputError("not an Inspect sample (no 'id')", source=str(path), record=n)
        if not isinstance(s.get("scores") or {}, dict):
            raise InvalidInputError(
                "must be an object of scores by scorer", source=str(path),
                record=f"sample {s['id']!r}", field="scores",
            )  # fmt: skip


def read_inspect_log(path: str | Path) -> InspectLog:
    """An Inspect log, ``.eval`` or ``.json``, with its samples in the dataset's order
    (then by epoch). Refuses a file that is not an Inspect log and a log without scores."""
    p = Path(path)
    if p.suffix == ".eval":
        header, samples = _read_eval(p)
    else:
        obj = _load_json_file(p)
        if not is_inspect_json(obj):
            raise InvalidInputError("not an Inspect log (no 'eval' with a task)", source=str(p))
        header = {k: v for k, v in obj.items() if k not in ("samples", "reductions")}
        samples = obj.get("samples") or []
    if not is_inspect_json(header):
        raise InvalidInputError("not an Inspect log (no 'eval' with a task)", source=str(p))
    if not isinstance(samples, list):
        raise InvalidInputError("must be a list", source=str(p), field="samples")
    _check_samples(p, samples)
    order = _sample_order(header)
    samples.sort(key=lambda s: (order.get(json.dumps(s["id"]), len(order)), s.get("epoch", 1)))
    scorers = _scorer_names(header, samples)
    if not samples or not scorers:
        what = "no samples" if not samples else "no scores"
        raise InvalidInputError(f"the log holds {what} (nothing to import)", source=str(p))
    return InspectLog(str(p), header, samples, scorers)


def sample_scores(log: InspectLog, scorer: str) -> list[SampleScore]:
    """One scorer's score of every sample and epoch; ``None`` where the scorer gave none
    (a sample that errored before scoring: a failed score, never dropped)."""
    if scorer not in log.scorers:
        raise InvalidInputError(
            f"no such scorer (the log has: {', '.join(log.scorers)})",
            source=log.path, field="scorer",
        )  # fmt: skip
    out = []
    for s in log.samples:
        sc = (s.get("scores") or {}).get(scorer)
        score = (
            Score(sc.get("value"), sc.get("answer"), sc.get("explanation"), sc.get("metadata"))
            if isinstance(sc, dict)
            else Score(None)
        )
        out.append(SampleScore(score, s["id"], int(s.get("epoch", 1)), s.get("metadata")))
    return out


@dataclass(frozen=True)
class ScorerScores:
    """One scorer of a log, for ``assay stats``: its scores, and the epoch reducer and
    metrics (``(name, params)``) the log's results give it."""

    scorer: str
    scores: list[SampleScore]
    reducer: str | None
    metrics: list[tuple[str, dict[str, Any]]]


def scorer_scores(path: str | Path, scorer: str | None = None) -> ScorerScores:
    """The scores of ``scorer`` (default the log's first) with its reducer and metrics.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "log.json")
        >>> res = {"scores": [{"scorer": "m", "reducer": "max", "metrics": {
        ...     "accuracy": {"name": "accuracy", "value": 1.0, "params": {}}}}]}
        >>> _ = open(p, "w").write(json.dumps({"eval": {"task": "t"}, "results": res,
        ...     "samples": [{"id": 1, "scores": {"m": {"value": "C"}}}]}))
        >>> s = scorer_scores(p)
        >>> s.scorer, s.reducer, s.metrics, len(s.scores)
        ('m', 'max', [('accuracy', {})], 1)
    """
    log = read_inspect_log(path)
    name = scorer or log.scorers[0]
    scores = sample_scores(log, name)
    mine = [
        es
        for es in log.results.get("scores") or []
        if isinstance(es, dict) and (es.get("scorer") or es.get("name")) == name
    ]
    reducer = mine[0].get("reducer") if mine else None
    metrics = [(n, p) for n, _, p in reported_metrics(mine[0])] if mine else []
    return ScorerScores(name, scores, reducer, metrics)


def reported_metrics(score: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
    """``(name, value, params)`` of each metric of one entry of the log's
    ``results.scores`` (a scorer under one epoch reducer)."""
    return [
        (str(m.get("name", key)), m.get("value"), dict(m.get("params") or {}))
        for key, m in (score.get("metrics") or {}).items()
        if isinstance(m, dict)
    ]
