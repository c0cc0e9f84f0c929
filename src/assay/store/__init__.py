"""The evaluation store: every evaluation persisted (SQLite by default, PostgreSQL for teams).

Names are imported on first use, so ``assay runs --help`` does not load SQLAlchemy.

Example:
    >>> from assay.store import Store          # doctest: +SKIP
    >>> Store().latest(kind="llm_fairness", dataset="pisa")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports

if TYPE_CHECKING:
    from assay.paths import assay_home, default_cache_path
    from assay.store.comparison import compare
    from assay.store.config import default_database_url
    from assay.store.engine import StoreError
    from assay.store.records import Evaluation, ItemRecord
    from assay.store.store import EvaluationHandle, Store
    from assay.store.tables import STATUSES

#: public name -> the module that defines it
_LAZY = {
    "STATUSES": "assay.store.tables",
    "Evaluation": "assay.store.records",
    "EvaluationHandle": "assay.store.store",
    "ItemRecord": "assay.store.records",
    "Store": "assay.store.store",
    "StoreError": "assay.store.engine",
    "assay_home": "assay.paths",
    "compare": "assay.store.comparison",
    "default_cache_path": "assay.paths",
    "default_database_url": "assay.store.config",
}

__all__ = [
    "STATUSES",
    "Evaluation",
    "EvaluationHandle",
    "ItemRecord",
    "Store",
    "StoreError",
    "assay_home",
    "compare",
    "default_cache_path",
    "default_database_url",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
