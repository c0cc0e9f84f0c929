"""``JudgeEvaluator``: accumulates per-datum judge records and computes the aggregates.

The judge run (:func:`assay.llm.judge.judge`) produces one record per datum and metric;
this evaluator folds such records in batches (or from other processes, via ``merge`` or
``state``), and ``compute()`` gives them back with one aggregate record per metric
(mean, stderr, bootstrap interval, counts of errors and undefined values).

Example:
    >>> from assay.stats.means import datum_record
    >>> ev = JudgeEvaluator(metrics=["bias"])
    >>> ev.add([datum_record("Bias", "d1", 0.5), datum_record("Bias", "d2", None, reason="x")])
    ... # doctest: +ELLIPSIS
    <...JudgeEvaluator object at ...>
    >>> agg = ev.compute().get("Bias", aggregate="mean")
    >>> agg.value, agg.parameters["n"], agg.parameters["n_undefined"]
    (0.5, 1, 1)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.llm.judge.prompts import PROMPT_VERSION
from assay.llm.judge.types import get_metric
from assay.results import Metric, MetricSet, to_jsonable
from assay.stats.means import NUM_BOOTSTRAP, mean_record

__all__ = ["JudgeEvaluator", "ERROR_PREFIX"]

ERROR_PREFIX = "judge error: "


class JudgeEvaluator(Evaluator):
    """Per-datum judge records in, the same records plus one aggregate per metric out.

    Args:
        metrics: judge metric names (their record types are accepted by :meth:`add`).
        num_bootstrap, seed: the aggregates' bootstrap interval.
    """

    def __init__(
        self, *, metrics: Sequence[str], num_bootstrap: int = NUM_BOOTSTRAP, seed: int = 0
    ) -> None:
        self.metrics = tuple(dict.fromkeys(metrics))
        self.types = tuple(get_metric(m).type for m in self.metrics)
        self.num_bootstrap = int(num_bootstrap)
        self.seed = int(seed)
        self._rows: list[tuple[str, str, float, str]] = []

    def config(self) -> dict[str, Any]:
        return {
            "metrics": list(self.metrics),
            "num_bootstrap": self.num_bootstrap,
            "seed": self.seed,
        }

    def add(self, records: Iterable[Metric]) -> JudgeEvaluator:  # type: ignore[override]
        """Fold per-datum records (``parameters["datum_uid"]``) of this evaluator's metrics."""
        rows = []
        for i, m in enumerate(records):
            if m.type not in self.types:
                raise InvalidInputError(
                    f"record type {m.type!r} is not one of {self.types}", record=i, field="type"
                )
            uid = m.parameters.get("datum_uid")
            if uid is None:
                raise InvalidInputError("missing", record=i, field="datum_uid")
            value = np.nan if m.value is None else float(m.value)
            params = json.dumps(to_jsonable(m.parameters), sort_keys=True)
            rows.append((m.type, str(uid), value, params))
        self._rows += rows
        return self

    @property
    def is_empty(self) -> bool:
        return not self._rows

    def _merge(self, other: JudgeEvaluator) -> None:
        self._rows += other._rows

    def _compute(self) -> MetricSet:
        rows = sorted(self._rows, key=lambda r: (self.types.index(r[0]), r[1]))
        per = [Metric(t, None if np.isnan(v) else v, json.loads(p)) for t, _, v, p in rows]
        agg = []
        for t in self.types:
            mine = [m for m in per if m.type == t]
            if not mine:
                continue
            ok = [m for m in mine if m.value is not None]
            errors = sum(
                str(m.parameters.get("undefined", "")).startswith(ERROR_PREFIX) for m in mine
            )
            agg.append(
                mean_record(
                    t,
                    [m.value for m in ok],
                    [m.parameters["datum_uid"] for m in ok],
                    {"prompt_version": PROMPT_VERSION},
                    errors=errors,
                    undefined=len(mine) - len(ok) - errors,
                    num_bootstrap=self.num_bootstrap,
                    seed=self.seed,
                )
            )
        return MetricSet(per + agg)

    def _state(self) -> dict[str, np.ndarray]:
        cols = list(zip(*self._rows, strict=True)) if self._rows else [(), (), (), ()]
        return {
            "type": np.array(cols[0], dtype=str),
            "uid": np.array(cols[1], dtype=str),
            "value": np.array(cols[2], dtype=np.float64),
            "parameters": np.array(cols[3], dtype=str),
        }

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        self._rows = [
            (str(t), str(u), float(v), str(p))
            for t, u, v, p in zip(
                state["type"], state["uid"], state["value"], state["parameters"], strict=True
            )
        ]
