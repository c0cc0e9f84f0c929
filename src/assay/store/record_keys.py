"""Records stored by assay 0.1, read in the keys of 0.2.0 (CHANGELOG.md, "Changed").

0.1 wrote some interval keys twice, under an old and a new name; 0.2.0 writes only the new
one. A stored run keeps its rows as written (reading never changes a store), and
:func:`current_parameters` drops or renames the old keys as the run is read, so a run of
0.1 and one of 0.2.0 show, export and compare (:func:`assay.store.comparison.identity`)
alike:

* text and judge aggregates: ``confidence`` -> ``confidence_level``;
* ``BradleyTerryRating``: ``bootstrap_samples`` -> ``num_bootstrap``;
* ``Ci`` and ``CiWilson``: ``level`` -> ``confidence_level``, ``method`` -> ``ci_method``,
  ``num_samples`` -> ``num_bootstrap``.

Example:
    >>> current_parameters("ROUGE", {"confidence": 0.95, "confidence_level": 0.95, "n": 3})
    {'confidence_level': 0.95, 'n': 3}
    >>> current_parameters("Ci", {"level": 0.9, "method": "t", "cluster": None})
    {'confidence_level': 0.9, 'ci_method': 't', 'cluster': None}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["current_parameters"]

#: Old key -> new key, for every record type (the old key is dropped when the new is there).
_EVERY_TYPE = {"confidence": "confidence_level", "bootstrap_samples": "num_bootstrap"}

#: Old key -> new key of the stats interval records, whose factory arguments 0.1 recorded.
_INTERVALS = {"level": "confidence_level", "method": "ci_method", "num_samples": "num_bootstrap"}
_INTERVAL_TYPES = frozenset({"Ci", "CiWilson"})


def current_parameters(type: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``parameters`` of a stored record of ``type`` in 0.2.0's keys: each old key's value
    under its new name (unless the new one is there already: 0.1 wrote both), in the place
    of the old key's. Keys of other types (a fairness ``method``, an agreement ``level``)
    are left alone."""
    renames = dict(_EVERY_TYPE)
    if type in _INTERVAL_TYPES:
        renames |= _INTERVALS
    if not renames.keys() & parameters.keys():
        return dict(parameters)
    out: dict[str, Any] = {}
    for k, v in parameters.items():
        new = renames.get(k)
        if new is None:
            out[k] = v
        elif new not in parameters:
            out.setdefault(new, v)
    if type == "CiWilson" and "confidence_level" in out:
        out.setdefault("ci_method", "wilson")
    return out
