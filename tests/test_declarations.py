"""Options declared once, metrics in one table (issue 35, items 3 and 4).

For every evaluator that declares its options (:mod:`assay.options`): the signature of
``__init__`` is the declaration (names and defaults), every rule's bad values are refused
with an ``InvalidInputError`` naming the option (scikit-learn's
``generate_invalid_param_val`` idea), a misspelt option gets a hint, and ``config()`` is a
fixed point. For every metric table (:mod:`assay.metric_table`): each registered type is
documented in docs/records.md, and every type an evaluator emits on the contract cases is
registered in its table.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import contract
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.metric_table import MetricTable
from assay.options import REQUIRED, Options
from contract import ContractCase

ROOT = Path(__file__).resolve().parents[1]


def _cases() -> list[ContractCase]:
    out: list[ContractCase] = []
    for info in pkgutil.iter_modules(contract.__path__):
        if info.name.startswith("cases_"):
            out.extend(importlib.import_module(f"contract.{info.name}").CASES)
    return out


CASES = _cases()


def _evaluators() -> list[type[Evaluator]]:
    seen: list[type[Evaluator]] = []
    todo = list(Evaluator.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls not in seen and cls.__module__.startswith("assay."):
            seen.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(seen, key=lambda c: c.__qualname__)


#: Evaluators whose options are not declared yet, and why; the list only shrinks.
NOT_DECLARED = {
    "TalliedEvaluator": "an abstract base of the LLM evaluators",
}

#: The evaluators that declare their options and can be built (an abstract base, such as
#: the LLM suites' ``CountsEvaluator``, is checked through its concrete subclasses).
DECLARED = [c for c in _evaluators() if c.OPTIONS is not None and not inspect.isabstract(c)]


def test_every_evaluator_declares_or_is_listed() -> None:
    names = {c.__name__ for c in _evaluators()}
    undeclared = {c.__name__ for c in _evaluators() if c.OPTIONS is None}
    assert undeclared <= set(NOT_DECLARED), (
        f"declare the options of {undeclared - set(NOT_DECLARED)}"
    )
    stale = {n for n in NOT_DECLARED if n in names and n not in undeclared}
    assert not stale, f"{stale} declare their options now: take them off NOT_DECLARED"
    assert DECLARED, "no evaluator declares its options"


def _required(options: Options) -> dict[str, Any]:
    """A valid value of each option that needs one (no default, or a default the
    cross-checks refuse alone): its declared example."""
    return {o.name: o.example for o in options if o.default is REQUIRED or o.example is not None}


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


@pytest.mark.parametrize("cls", DECLARED, ids=lambda c: c.__name__)
def test_signature_is_the_declaration(cls: type[Evaluator]) -> None:
    assert cls.OPTIONS is not None
    params = inspect.signature(cls.__init__).parameters
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    keywords = {n: p for n, p in params.items() if p.kind in named and n != "self"}
    assert list(keywords) == list(cls.OPTIONS.names)
    for o in cls.OPTIONS:
        default = keywords[o.name].default
        expected = o.default
        if default is inspect.Parameter.empty:
            assert expected is REQUIRED, o.name
        else:
            assert _plain(default) == _plain(expected), o.name


@pytest.mark.parametrize(
    ("cls", "name", "bad"),
    [(c, o.name, b) for c in DECLARED for o in c.OPTIONS or () for b in o.rule.bad],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v),
)
def test_every_rule_refuses_its_bad_values(cls: type[Evaluator], name: str, bad: Any) -> None:
    assert cls.OPTIONS is not None
    with pytest.raises(InvalidInputError) as e:
        cls(**(_required(cls.OPTIONS) | {name: bad}))
    assert e.value.source == name, str(e.value)


@pytest.mark.parametrize("cls", DECLARED, ids=lambda c: c.__name__)
def test_config_is_a_fixed_point(cls: type[Evaluator]) -> None:
    assert cls.OPTIONS is not None
    ev = cls(**_required(cls.OPTIONS))
    again = cls(**ev.config())
    assert again.config() == ev.config()
    with pytest.raises(InvalidInputError, match="did you mean"):
        cls(**(_required(cls.OPTIONS) | {cls.OPTIONS.names[0] + "s": 1}))


def test_a_derived_config_holds_the_stored_options() -> None:
    from assay.segmentation import SegmentationEvaluator

    assert SegmentationEvaluator().config() == {"zero_division": None}
    ev = SegmentationEvaluator(ci=0.9, by=["site"], cluster="ward", zero_division=0)
    assert ev.config() == {
        "zero_division": 0.0,
        "by": ["site"],
        "ci": 0.9,
        "ci_method": "bootstrap",
        "num_bootstrap": 1000,
        "seed": 0,
        "cluster": "ward",
    }


# ------------------------------------------------------------------ metric tables


def _tables() -> list[MetricTable]:
    out = []
    for cls in _evaluators():
        table = getattr(cls, "METRICS", None)
        if isinstance(table, MetricTable) and table not in out:
            out.append(table)
    return out


TABLES = _tables()
_SECTION = (ROOT / "docs" / "records.md").read_text().split("\n## Metric types\n")[-1]
#: The types named in docs/records.md's "Metric types" section, by domain heading.
DOCUMENTED = {
    part.split("\n", 1)[0].strip().lower(): set(re.findall(r"^\| `([^`]+)` \|", part, re.M))
    for part in _SECTION.split("\n### ")[1:]
}


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.domain)
def test_every_registered_type_is_documented(table: MetricTable) -> None:
    missing = [t for t in table.types if t not in DOCUMENTED.get(table.domain, set())]
    assert not missing, f"list {missing} in docs/records.md, Metric types, under {table.domain}"


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if isinstance(getattr(type(c.make()), "METRICS", None), MetricTable)],
    ids=lambda c: c.name,
)
def test_every_emitted_type_is_registered(case: ContractCase) -> None:
    ev = case.make()
    for batch in case.batches:
        case.add(ev, batch)
    table = type(ev).METRICS
    emitted = {m.type for m in ev.compute()}
    assert emitted <= set(table.types), f"register {emitted - set(table.types)} in {table.domain}"


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.domain)
def test_every_builder_resolves(table: MetricTable) -> None:
    for entry in table:  # a function, or an object that builds (a judge metric's definition)
        assert table.builder(entry.type) is not None, f"{table.domain}: {entry.builder}"
