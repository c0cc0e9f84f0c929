"""The evaluation store: every evaluation persisted (SQLite by default, PostgreSQL for teams).

Example:
    >>> from assay.store import Store          # doctest: +SKIP
    >>> Store().latest(kind="llm_fairness", dataset="pisa")  # doctest: +SKIP
"""

from assay.store.config import assay_home, default_cache_path, default_database_url
from assay.store.store import Evaluation, EvaluationHandle, ItemRecord, Store, StoreError
from assay.store.tables import STATUSES

__all__ = [
    "STATUSES",
    "Evaluation",
    "EvaluationHandle",
    "ItemRecord",
    "Store",
    "StoreError",
    "assay_home",
    "default_cache_path",
    "default_database_url",
]
