"""Runs made elsewhere, read as files: Inspect AI logs, lm-evaluation-harness samples and
Every Eval Ever, in (``assay import``) and out (``assay runs export --format
every-eval-ever``). Neither Inspect AI nor lm-eval is imported: see docs/import.md.

Example:
    >>> from assay.importers import find_runs, read_run   # doctest: +SKIP
    >>> [read_run(s).kind for s in find_runs(["logs/"])]  # doctest: +SKIP
    ['inspect', 'inspect']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports

if TYPE_CHECKING:
    from assay.importers.eee import eee_run
    from assay.importers.eee_write import every_eval_ever_files
    from assay.importers.files import Source, find_runs, read_run
    from assay.importers.inspect_import import inspect_run
    from assay.importers.inspect_log import InspectLog, read_inspect_log, sample_scores
    from assay.importers.lm_eval import lm_eval_run
    from assay.importers.types import ImportedRun

_LAZY = {
    "ImportedRun": "assay.importers.types",
    "InspectLog": "assay.importers.inspect_log",
    "Source": "assay.importers.files",
    "eee_run": "assay.importers.eee",
    "every_eval_ever_files": "assay.importers.eee_write",
    "find_runs": "assay.importers.files",
    "inspect_run": "assay.importers.inspect_import",
    "lm_eval_run": "assay.importers.lm_eval",
    "read_inspect_log": "assay.importers.inspect_log",
    "read_run": "assay.importers.files",
    "sample_scores": "assay.importers.inspect_log",
}

__all__ = [
    "ImportedRun",
    "InspectLog",
    "Source",
    "eee_run",
    "every_eval_ever_files",
    "find_runs",
    "inspect_run",
    "lm_eval_run",
    "read_inspect_log",
    "read_run",
    "sample_scores",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
