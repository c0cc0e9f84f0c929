"""One contract test over every evaluator (see ``tests/contract/__init__.py``).

Cases come from ``tests/contract/cases_*.py``; each file holds a list ``CASES``. The last
tests show that the checks catch a broken evaluator: one whose merge drops a batch, one
that merges whatever it is given, one that loses state on the round trip.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

import numpy as np
import pytest

import contract
from assay.evaluator import Evaluator
from assay.results import Metric, MetricSet
from contract import CHECKS, ContractCase


def _cases() -> list[ContractCase]:
    out: list[ContractCase] = []
    for info in pkgutil.iter_modules(contract.__path__):
        if info.name.startswith("cases_"):
            out.extend(importlib.import_module(f"contract.{info.name}").CASES)
    return out


CASES = _cases()


def test_every_domain_registers_cases() -> None:
    assert len(CASES) >= 1
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_contract(case: ContractCase, check: str) -> None:
    CHECKS[check](case)


#: Evaluators that still write their state by hand (``_merge``, ``_state``, ``_load_state``),
#: and why. Every other evaluator declares its accumulators (``Evaluator.add_state``), so
#: merge, state and from_state are the base class's, the same code for all of them.
HAND_WRITTEN = {
    "FairnessEvaluator": "its state is being folded back into it (issue 29, point 4)",
}


def test_state_is_declared() -> None:
    seen = set()
    for case in CASES:
        cls = type(case.make())
        seen.add(cls.__name__)
        own = {
            hook
            for klass in cls.__mro__[: cls.__mro__.index(Evaluator)]
            for hook in ("_merge", "_state", "_load_state")
            if hook in vars(klass)
        }
        if cls.__name__ not in HAND_WRITTEN:
            assert not own, f"{cls.__name__} writes {sorted(own)} by hand; declare its state"
    assert len(seen) >= 10, sorted(seen)


class _EveryRule(Evaluator):
    """A toy evaluator declaring one accumulator per merge rule, a per-key child evaluator
    among them (its values: integers; ``by_parity``: a child per parity)."""

    def __init__(self, *, by_parity: bool = True) -> None:
        self.by_parity = by_parity
        self.add_state("_n", 0, "sum")
        self.add_state("_counts", {}, "sum")  # (kind, value) -> how many
        self.add_state("_values", [], "cat")  # array chunks
        self.add_state("_names", {"text": []}, "cat")  # a dict of chunk lists
        self.add_state("_top", np.full(2, -np.inf), "max")  # largest, minus the smallest
        self.add_state("_seen", {}, "first")  # value -> first batch size it arrived in
        self.add_state("_parity", {}, "children", child=_EveryRule)

    def config(self) -> dict:
        return {"by_parity": self.by_parity}

    def add(self, values):  # type: ignore[override]
        a = np.asarray(values, dtype=np.int64)
        self._n += a.size
        for v in a.tolist():
            self._counts = self._counts | {("v", v): self._counts.get(("v", v), 0) + 1}
            self._seen.setdefault(v, 1)
        self._values.append(a)
        self._names["text"].append(a.astype(str))
        if a.size:
            self._top = np.maximum(self._top, [a.max(), -a.min()])
        for p in sorted({v % 2 for v in a.tolist()}) if self.by_parity else []:
            child = self._parity.setdefault(str(p), _EveryRule(by_parity=False))
            child.add(a[a % 2 == p])
        return self

    def _compute(self) -> MetricSet:
        values = np.concatenate(self._values)
        out = [
            Metric("N", self._n, {}),
            Metric("Sum", int(values.sum()), {}),
            Metric("Counts", {f"{k}:{v}": c for (k, v), c in sorted(self._counts.items())}, {}),
            Metric("Names", sorted(np.concatenate(self._names["text"]).tolist()), {}),
            Metric("Top", self._top.tolist(), {}),
            Metric("Seen", sorted(self._seen), {}),
        ]
        for p, child in sorted(self._parity.items()):
            out += [Metric(f"Parity{m.type}", m.value, {"slice": p}) for m in child.compute()]
        return MetricSet(out)


def test_every_rule_meets_the_contract() -> None:
    case = ContractCase(
        name="every-rule",
        make=_EveryRule,
        make_other=lambda: _EveryRule(by_parity=False),
        batches=[[1, 2, 2], [3], [], [4, 5, 6, 7], [9]],
        concat=lambda bs: [x for b in bs for x in b],
    )
    for check in CHECKS.values():
        check(case)
    ev = _EveryRule().add([1, 2])
    assert _EveryRule().is_empty and not ev.is_empty
    state = ev.state()
    assert {"n", "counts.keys", "values", "top", "parity.keys", "parity.0.n"} <= set(state)
    twin = _EveryRule.from_state(state)
    twin.add([3])  # a rebuilt evaluator shares nothing with the original
    assert ev.compute().get("N").value == 2 and twin.compute().get("N").value == 3


# ---------------------------------------------------------------- the checks catch faults


class _Sum(Evaluator):
    """A tiny evaluator: sum and count of values; ``fault`` breaks one part of the contract."""

    def __init__(self, *, scale: float = 1.0, fault: str = "") -> None:
        self.scale, self.fault = scale, fault
        self._sum, self._n = 0.0, 0

    def config(self) -> dict:
        return {"scale": self.scale, "fault": self.fault}

    def add(self, values):  # type: ignore[override]
        a = np.asarray(values, dtype=float)
        self._sum += float(a.sum())
        self._n += a.size
        return self

    @property
    def is_empty(self) -> bool:
        return self._n == 0

    def merge(self, other):  # type: ignore[override]
        if self.fault == "merge_anything":
            self._merge(other)
            return self
        return super().merge(other)

    def _merge(self, other: _Sum) -> None:
        if self.fault == "drop_batch":
            return  # the other side's state is lost
        self._sum += other._sum
        self._n += other._n

    def _compute(self) -> MetricSet:
        return MetricSet([Metric("Sum", self.scale * self._sum, {}), Metric("N", self._n, {})])

    def _state(self) -> dict[str, np.ndarray]:
        return {"sum": np.array(self._sum), "n": np.array(self._n)}

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        self._sum = 0.0 if self.fault == "lose_state" else float(state["sum"])
        self._n = int(state["n"])


def _sum_case(fault: str = "") -> ContractCase:
    return ContractCase(
        name=f"sum-{fault or 'ok'}",
        make=lambda: _Sum(fault=fault),
        make_other=lambda: _Sum(scale=2.0, fault=fault),
        batches=[[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]],
        concat=lambda bs: [x for b in bs for x in b],
    )


def test_checks_pass_on_a_correct_evaluator() -> None:
    case = _sum_case()
    for check in CHECKS.values():
        check(case)


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("drop_batch", "split_equals_one_batch"),
        ("merge_anything", "merge_refuses_other_config"),
        ("lose_state", "state_round_trip"),
        ("drop_batch", "any_split_any_order"),
        ("lose_state", "any_split_any_order"),
    ],
)
def test_checks_catch_a_broken_evaluator(fault: str, check: str) -> None:
    with pytest.raises(AssertionError):
        CHECKS[check](_sum_case(fault))


# ------------------------------------------- LLM tasks: resume through the one driver


@pytest.mark.parametrize("name", ["suite", "judge", "pairwise"])
def test_llm_task_resumes_after_an_interrupt_with_no_repeated_call(name: str, tmp_path) -> None:
    """SIGINT mid-run (raised by the scripted model itself), then the same task again with
    the same cache: no answered call is made twice, and the records equal an uninterrupted
    run's."""
    import signal

    from assay.llm import RunOptions, evaluate
    from assay.llm.driver import EvaluationInterrupted
    from assay.testing.llm_resume import ctrl_c_ready
    from contract import assert_same_metrics
    from contract.llm_tasks import Scripted, tasks

    opts = RunOptions(cache=tmp_path / "cache.sqlite", concurrency=2)
    first = Scripted(interrupt_after=5)
    # Ctrl-C as in a fresh process: a library an earlier test ran in this worker may have
    # left SIGINT ignored or blocked (seen once in a clean-clone run: no interrupt).
    with ctrl_c_ready(), pytest.raises(EvaluationInterrupted) as stop:
        evaluate(tasks()[name], first, opts)
    assert stop.value.signum == signal.SIGINT
    kinds = [c.record.error_kind for c in stop.value.run.calls]
    assert "interrupted" in kinds and stop.value.run.status == "failed"
    answered = set(first.asked)
    assert len(answered) >= 5

    second = Scripted()
    run = evaluate(tasks()[name], second, opts)
    assert run.status == "finished" and not answered & set(second.asked)

    whole = Scripted()
    reference = evaluate(tasks()[name], whole, RunOptions(cache=False))
    assert sum(second.asked.values()) + sum(first.asked.values()) == sum(whole.asked.values())
    assert assert_same_metrics(run.metrics, reference.metrics) > 0
