"""Tally contract cases of the LLM suites (``tests/contract/tallies.py``): CAT and the
language exams through :class:`~assay.llm.slicing.SlicedEvaluator`, the evaluator every
suite run scores through (it keeps the items; units: items, named by position)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.llm.slicing import SlicedEvaluator, _key, headline
from assay.llm.suites.cat import OUTCOMES, CATEvaluator
from assay.llm.suites.language import LANGUAGE_OUTCOMES, LanguageEvaluator
from assay.results import Metric
from contract.tallies import TallyCase

N = 28
_rng = np.random.default_rng(21)
COLUMNS = {
    "site": [f"s{i % 6}" for i in range(N)],
    "level": ["ab"[i % 3 == 0] for i in range(N)],
}
CAT_ARGS = {
    "outcomes": np.array(OUTCOMES)[_rng.choice(5, N, p=[0.4, 0.3, 0.15, 0.1, 0.05])],
    "test_types": np.array(["intrasentence", "intersentence"])[_rng.integers(0, 2, N)],
    "bias_types": np.array(["gender", "race", "religion"])[_rng.integers(0, 3, N)],
}
LANGUAGE_ARGS = {
    "languages": np.array(["en", "es"])[_rng.integers(0, 2, N)],
    "outcomes": np.array(LANGUAGE_OUTCOMES)[_rng.choice(4, N, p=[0.5, 0.3, 0.15, 0.05])],
}


def _case(name: str, cls: type, args: Mapping[str, np.ndarray]) -> TallyCase:
    def take(ids: Sequence[Any], opts: Mapping[str, Any]) -> SlicedEvaluator:
        at = np.asarray(ids, dtype=np.intp)
        cols = {c: np.asarray(v)[at] for c, v in COLUMNS.items()}
        ev = SlicedEvaluator(evaluator=cls, **opts)
        return ev.add(cols, **{k: a[at] for k, a in args.items()})

    def key(m: Metric) -> Any:
        return _key(m) if m.type in cls.kinds and headline([m]) else None

    return TallyCase(
        name=name,
        make=lambda opts: take(range(N), opts),
        take=take,
        key=key,
        ids=list(range(N)),
        columns=COLUMNS,
        cluster="site",
        by="level",
    )


TALLY_CASES = [
    _case("suite_cat", CATEvaluator, CAT_ARGS),
    _case("suite_language", LanguageEvaluator, LANGUAGE_ARGS),
]
