"""The tally contract over every evaluator with a ``tally()`` (see ``tests/contract/tallies.py``).

Cases come from ``tests/contract/tally_cases_*.py``; each file holds a list ``TALLY_CASES``.
The last test shows that the brute force catches a tally whose formulas are wrong.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace

import pytest

import contract
from assay.uncertainty.tally import Tallied
from contract.tallies import TALLY_CHECKS, TallyCase


def _cases() -> list[TallyCase]:
    out: list[TallyCase] = []
    for info in pkgutil.iter_modules(contract.__path__):
        if info.name.startswith("tally_cases_"):
            out.extend(importlib.import_module(f"contract.{info.name}").TALLY_CASES)
    return out


CASES = _cases()


def test_cases_are_registered() -> None:
    assert len(CASES) >= 2
    for case in CASES:
        assert isinstance(case.make({}), Tallied), case.name
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("check", sorted(TALLY_CHECKS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tally_contract(case: TallyCase, check: str) -> None:
    if check in case.skip:
        pytest.skip(f"{case.name}: {case.skip[check]}")
    TALLY_CHECKS[check](case)


def test_the_brute_force_catches_wrong_formulas() -> None:
    """A tally whose values are off (here: every value halved) fails the check."""
    case = CASES[0]

    def make(opts):  # type: ignore[no-untyped-def]
        ev = case.make(opts)
        tallies = ev.tally()

        def halved():  # type: ignore[no-untyped-def]
            ready = [t.ready() for t in tallies]
            return [replace(t, values=lambda w, f=t.values: 0.5 * f(w)) for t in ready]

        ev.tally = halved
        return ev

    bad = replace(case, make=make, key=case.key)
    with pytest.raises(AssertionError):
        TALLY_CHECKS["percentile"](bad)
