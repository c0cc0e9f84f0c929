"""The evaluator contract as reusable checks, and the registry of cases.

Each domain registers its evaluators in ``tests/contract/cases_<domain>.py`` as a list
``CASES`` of :class:`ContractCase`; ``tests/test_evaluator_contract.py`` runs every check
below over every case. A new evaluator joins by adding a case, nothing else.

The checks are plain functions raising ``AssertionError``, so the test file can also show
that they catch a deliberately broken evaluator.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.results import MetricSet

__all__ = ["ContractCase", "CHECKS", "assert_same_metrics"]


@dataclass
class ContractCase:
    """One evaluator configuration with data to feed it.

    Attributes:
        name: test id.
        make: a fresh evaluator.
        make_other: a fresh evaluator configured differently (a merge with it must raise).
        batches: at least two batches of data.
        concat: the batches joined into one batch (for "any split equals one batch").
        add: how one batch is added (default ``ev.add(batch)``).
        rel: relative tolerance for floats (sums in another order differ in the last bits).
    """

    name: str
    make: Callable[[], Evaluator]
    make_other: Callable[[], Evaluator]
    batches: Sequence[Any]
    concat: Callable[[Sequence[Any]], Any]
    add: Callable[[Evaluator, Any], Evaluator] = lambda ev, batch: ev.add(batch)
    rel: float = 1e-9


#: Parameters that are measured numbers (an interval's ends, a slice's gap): compared within
#: the tolerance like the value, since sums in another order differ in the last bits.
MEASURED = frozenset({"ci_low", "ci_high", "gap", "gap_ci_low", "gap_ci_high"})


def _ident(d: dict[str, Any]) -> str:
    """A record as JSON with its measured parameters' numbers blanked."""
    params = {
        k: "<number>" if k in MEASURED and isinstance(v, (int, float)) else v
        for k, v in d["parameters"].items()
    }
    return json.dumps({"type": d["type"], "parameters": params}, sort_keys=True)


def _canon(metrics: MetricSet) -> list[str]:
    return sorted(_ident(d) for d in metrics.to_list())


def _close(a: Any, b: Any, rel: float, where: str) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _close(a[k], b[k], rel, f"{where}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: lengths {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, rel, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=rel, abs_tol=rel), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def assert_same_metrics(a: MetricSet, b: MetricSet, rel: float = 1e-9) -> int:
    """Both sets hold the same records (any order), values equal within ``rel``.

    Returns the number of records compared (callers assert it is non-zero).
    """
    assert _canon(a) == _canon(b), "the two sets hold different records"
    left = sorted(a.to_list(), key=_ident)
    right = sorted(b.to_list(), key=_ident)
    for x, y in zip(left, right):
        where = f"{x['type']} {x['parameters']}"
        _close(x["value"], y["value"], rel, where)
        for k in MEASURED & x["parameters"].keys():
            _close(x["parameters"][k], y["parameters"][k], rel, f"{where} {k}")
    return len(left)


# ---------------------------------------------------------------- the checks


def _fed(case: ContractCase, batches: Sequence[Any]) -> Evaluator:
    ev = case.make()
    for b in batches:
        out = case.add(ev, b)
        assert out is ev, "add() must return self"
    return ev


def check_split_equals_one_batch(case: ContractCase) -> None:
    one = _fed(case, [case.concat(case.batches)]).compute()
    assert len(one) > 0, "compute() returned no records"
    many = _fed(case, case.batches).compute()
    assert_same_metrics(one, many, case.rel)
    merged = _fed(case, case.batches[:1])
    for b in case.batches[1:]:
        out = merged.merge(_fed(case, [b]))
        assert out is merged, "merge() must return self (in place)"
    assert_same_metrics(one, merged.compute(), case.rel)


def check_merge_order(case: ContractCase) -> None:
    parts = [_fed(case, [b]) for b in case.batches]
    fwd = _fed(case, [case.batches[0]])
    for p in parts[1:]:
        fwd.merge(p)
    rev = _fed(case, [case.batches[-1]])
    for p in reversed(parts[:-1]):
        rev.merge(p)
    assert_same_metrics(fwd.compute(), rev.compute(), case.rel)


def check_merge_refuses_other_config(case: ContractCase) -> None:
    a = _fed(case, case.batches[:1])
    b = case.make_other()
    case.add(b, case.batches[0])
    try:
        a.merge(b)
    except InvalidInputError:
        return
    raise AssertionError(
        "merging differently configured evaluators did not raise InvalidInputError"
    )


def check_state_round_trip(case: ContractCase) -> None:
    ev = _fed(case, case.batches)
    state = ev.state()
    for k, v in state.items():
        assert isinstance(v, np.ndarray), f"state[{k!r}] is {type(v).__name__}, not a numpy array"
        assert v.dtype != object, f"state[{k!r}] has dtype object (not plain)"
    buf = io.BytesIO()
    np.savez(buf, **state)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        back = type(ev).from_state(dict(z))
    assert_same_metrics(ev.compute(), back.compute(), 0.0)
    # A rebuilt evaluator keeps accumulating like the original.
    case.add(back, case.batches[0])
    case.add(ev, case.batches[0])
    assert_same_metrics(ev.compute(), back.compute(), case.rel)


def _round_trip(ev: Evaluator) -> Evaluator:
    """``ev`` rebuilt from its state after a trip through ``numpy.savez``."""
    buf = io.BytesIO()
    np.savez(buf, **ev.state())
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        return type(ev).from_state(dict(z))


def check_any_split_any_order(case: ContractCase) -> None:
    """A property (hypothesis): the batches in any order, split among any number of
    evaluators, each of them possibly rebuilt from its state, then merged in any order,
    give the records of one evaluator given all the data as one batch."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    one = _fed(case, [case.concat(case.batches)]).compute()
    n = len(case.batches)
    parts = st.lists(st.integers(0, n - 1), min_size=n, max_size=n)

    @settings(
        max_examples=6,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(order=st.permutations(range(n)), part=parts, trips=st.sets(st.integers(0, n)))
    def prop(order: list[int], part: list[int], trips: set[int]) -> None:
        groups: dict[int, list[Any]] = {}
        for i in order:
            groups.setdefault(part[i], []).append(case.batches[i])
        evs = [_fed(case, groups[g]) for g in sorted(groups)]
        evs = [_round_trip(ev) if j in trips else ev for j, ev in enumerate(evs)]
        merged = evs[0]
        for ev in evs[1:]:
            merged.merge(ev)
        if n in trips:  # the merged one too
            merged = _round_trip(merged)
        assert_same_metrics(one, merged.compute(), case.rel)

    prop()


def check_empty_refuses(case: ContractCase) -> None:
    ev = case.make()
    try:
        ev.compute()
    except InvalidInputError as e:
        assert "no data was added" in str(e), f"unclear message: {e}"
        return
    raise AssertionError("compute() on an empty evaluator did not raise InvalidInputError")


def documented_parameters() -> frozenset[str]:
    """The parameter names of ``docs/records.md``'s vocabulary table (its first column)."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "records.md"
    names: set[str] = set()
    for line in doc.read_text().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return frozenset(names)


def check_parameter_keys_documented(case: ContractCase) -> None:
    known = documented_parameters()
    records = _fed(case, case.batches).compute()
    missing = sorted({k for m in records for k in m.parameters} - known)
    assert not missing, f"parameter names not listed in docs/records.md: {missing}"


CHECKS: dict[str, Callable[[ContractCase], None]] = {
    "split_equals_one_batch": check_split_equals_one_batch,
    "merge_order": check_merge_order,
    "merge_refuses_other_config": check_merge_refuses_other_config,
    "state_round_trip": check_state_round_trip,
    "any_split_any_order": check_any_split_any_order,
    "empty_refuses": check_empty_refuses,
    "parameter_keys_documented": check_parameter_keys_documented,
}
