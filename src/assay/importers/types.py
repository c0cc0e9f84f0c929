"""What an importer hands back: :class:`ImportedRun`, one run made by another harness.

An imported run is what ``assay import`` stores: the run's fields (kind, dataset, model,
parameters, when it ran), its metric records and its units, one item per sample and
epoch. Items are plain mappings of :class:`assay.store.ItemRecord`'s fields (the CLI
builds the store's rows from them; importers sit below the store), with these meanings:

* ``item_id``: the sample's id as text (``doc_id`` for lm-eval); ``params["epoch"]``:
  its epoch (1 where the harness has none), so a unit is ``(item_id, params["epoch"])``
  (and ``params["filter"]`` for lm-eval, whose filters score one document several ways);
* ``prompt``: the sample's input; ``raw_answer``: the model's answer;
* ``parsed``: the per-sample score of every scorer (metric, for lm-eval) by name, as the
  harness wrote it (``"C"``, ``0.25``, ``true``), ``None`` where the sample failed;
* ``ok``/``error``: whether the sample ran; a failed sample is kept, never dropped;
* ``info``: everything else the harness kept about the sample (target, each score's
  answer, explanation and metadata, the sample's metadata).

Example:
    >>> from assay.results import MetricSet
    >>> r = ImportedRun("inspect", "x.eval", "ab" * 32, "inspect", "t", "m", {}, MetricSet(), [])
    >>> r.short_hash
    'abababababab'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assay.results import MetricSet

__all__ = ["ImportedRun", "sha256_of"]


@dataclass(frozen=True)
class ImportedRun:
    """One run read from another harness's files, ready to store."""

    #: ``inspect``, ``lm_eval`` or ``every_eval_ever``
    format: str
    #: the file the run was read from (the log, the results JSON, the aggregate)
    source: str
    #: SHA-256 of the bytes read (every file of the run): the same log imported twice
    #: has the same hash
    sha256: str
    kind: str
    dataset: str | None
    model: str | None
    parameters: dict[str, Any]
    metrics: MetricSet
    items: list[dict[str, Any]]
    created: datetime | None = None
    #: what the reader noticed (metrics assay recomputes differently, metrics it cannot)
    notices: list[str] = field(default_factory=list)

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    def stored_parameters(self) -> dict[str, Any]:
        """The run's parameters as stored: the importer's, with the source and its hash."""
        return {
            **self.parameters,
            "import_format": self.format,
            "import_source": self.source,
            "import_sha256": self.sha256,
        }


def sha256_of(paths: list[Any]) -> str:
    """SHA-256 of the files' bytes, in order (the identity of an imported run).

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "a")
        >>> _ = open(p, "wb").write(b"abc")
        >>> sha256_of([p])[:12]
        'ba7816bf8f01'
    """
    import hashlib

    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()
