"""Which runs a list of paths holds: files, directories and globs, each file's format.

:func:`find_runs` turns the command line's paths into the runs to import, each a
:class:`Source` (its format and its file): a file is taken as given (and refused,
naming it, if it is none of the formats); a directory is searched (recursively) for every
run in it, other files there being passed over; a glob (``logs/*.eval``) is expanded.
An lm-eval run is its ``samples_<task>_<date>.jsonl`` (its ``results_<date>.json`` names
the runs of every task); an Every Eval Ever run is its aggregate ``<uuid>.json`` (its
``_samples.jsonl`` companion comes with it). :func:`read_run` reads one.

Example:
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "notes.txt"), "w").write("x")
    >>> find_runs([d])
    []
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

from assay.errors import InvalidInputError
from assay.importers.types import ImportedRun

__all__ = ["Source", "find_runs", "read_run", "sniff", "FORMATS"]

FORMATS = ("inspect", "lm_eval", "every_eval_ever")
_FIRST_KEY = re.compile(rb'^\s*\{\s*"([^"]{1,40})"')
_WHAT = "an Inspect log (.eval, .json), lm-eval samples or results, or Every Eval Ever JSON"


@dataclass(frozen=True)
class Source:
    """One run to import: its format and the file it is read from."""

    format: str
    path: Path


def _json_kind(path: Path) -> str | None:
    """What a ``.json`` file is, from its first key (the formats write theirs first:
    Inspect ``version``, Every Eval Ever ``schema_version``, lm-eval ``results``); a
    file whose first key says nothing is parsed to see."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    m = _FIRST_KEY.match(head)
    key = m.group(1).decode("utf-8", "replace") if m else None
    if key == "schema_version":
        return "every_eval_ever"
    if key == "results" or re.match(r"results_.+\.json$", path.name):
        return "lm_eval_results"
    if key == "version" or path.stat().st_size < 50_000_000:
        import json

        from assay.importers.eee import is_eee_aggregate
        from assay.importers.inspect_log import is_inspect_json

        try:
            obj = json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError):
            return None
        if is_inspect_json(obj):
            return "inspect"
        if is_eee_aggregate(obj):
            return "every_eval_ever"
        if isinstance(obj, dict) and isinstance(obj.get("results"), dict):
            return "lm_eval_results"
    return None


def _aggregate_of(p: Path) -> Path:
    """``<uuid>.json`` for an Every Eval Ever ``<uuid>_samples.jsonl`` (else ``p``)."""
    suffix = "_samples.jsonl"
    return p.with_name(p.name[: -len(suffix)] + ".json") if p.name.endswith(suffix) else p


def sniff(path: str | Path) -> str | None:
    """The format of one file (``lm_eval_results`` for lm-eval's results JSON,
    ``eee_samples`` for an Every Eval Ever companion), or ``None``."""
    p = Path(path)
    if p.suffix == ".eval":
        return "inspect"
    if p.suffix == ".json":
        return _json_kind(p)
    if p.name.endswith("_samples.jsonl") and _aggregate_of(p).is_file():
        return "eee_samples"
    if p.suffix == ".jsonl":
        return "lm_eval"
    return None


def _sources(p: Path, *, explicit: bool) -> list[Source]:
    from assay.importers.lm_eval import results_for, samples_for

    kind = sniff(p)
    if kind in ("inspect", "every_eval_ever"):
        return [Source(kind, p)]
    if kind == "lm_eval_results":
        found = samples_for(p)
        if not found and explicit:
            raise InvalidInputError(
                "an lm-eval results file without its samples_<task>_<date>.jsonl "
                "(run lm-eval with --log_samples)", source=str(p),
            )  # fmt: skip
        return [Source("lm_eval", s) for s in found]
    if kind == "eee_samples":
        return [Source("every_eval_ever", _aggregate_of(p))] if explicit else []
    if kind == "lm_eval":
        # in a folder, samples with a results file come with it
        if explicit or (results_for(p) is None and p.name.startswith("samples_")):
            return [Source("lm_eval", p)]
        return []
    if explicit:
        raise InvalidInputError(f"not {_WHAT}", source=str(p))
    return []


def _expand(arg: str) -> list[tuple[Path, bool]]:
    """``(path, explicit)`` for one argument: a glob's matches, a folder's files."""
    if glob.has_magic(arg):
        matches = sorted(glob.glob(arg, recursive="**" in arg))
        if not matches:
            raise InvalidInputError("matches no file", source=arg)
        out: list[tuple[Path, bool]] = []
        for m in matches:
            out += _expand(m) if Path(m).is_dir() else [(Path(m), True)]
        return out
    p = Path(arg)
    if not p.exists():
        raise InvalidInputError("no such file or directory", source=arg)
    if p.is_dir():
        return [(f, False) for f in sorted(p.rglob("*")) if f.is_file()]
    return [(p, True)]


def find_runs(paths: list[str]) -> list[Source]:
    """Every run the paths hold, each once, in the order found."""
    seen: dict[Path, Source] = {}
    for arg in paths:
        for p, explicit in _expand(str(arg)):
            for s in _sources(p, explicit=explicit):
                seen.setdefault(s.path.resolve(), s)
    return list(seen.values())


def read_run(source: Source) -> ImportedRun:
    """The run one source holds."""
    if source.format == "inspect":
        from assay.importers.inspect_import import inspect_run

        return inspect_run(source.path)
    if source.format == "lm_eval":
        from assay.importers.lm_eval import lm_eval_run

        return lm_eval_run(source.path)
    from assay.importers.eee import eee_run

    return eee_run(source.path)
