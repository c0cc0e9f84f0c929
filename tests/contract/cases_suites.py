"""Contract cases of the LLM suite evaluators (metrics over parsed answers)."""

from __future__ import annotations

import numpy as np

from assay.llm.suites import CATEvaluator, LanguageEvaluator, LLMFairnessEvaluator
from contract import ContractCase

_rng = np.random.default_rng(12)


def _cat_batches() -> list[tuple[list[str], list[str], list[str]]]:
    outcomes = ["stereotype", "anti-stereotype", "unrelated", "other", "error"]
    out = []
    for n, biases in ((40, ["gender", "race"]), (25, ["race", "religion"]), (9, ["profession"])):
        out.append(
            (
                [outcomes[i] for i in _rng.integers(0, 5, n)],
                [("intrasentence", "intersentence")[i] for i in _rng.integers(0, 2, n)],
                [biases[i] for i in _rng.integers(0, len(biases), n)],
            )
        )
    return out


def _concat(batches):
    return tuple(sum((list(b[k]) for b in batches), []) for k in range(len(batches[0])))


def _fair_batches() -> list[dict[str, list[int]]]:
    out = []
    for n in (50, 31, 12):
        out.append(
            {
                "target": _rng.integers(0, 2, n).tolist(),
                "predicted": _rng.integers(-2, 2, n).tolist(),
                "privileged": _rng.integers(0, 2, n).tolist(),
                "counterfactual": _rng.integers(-3, 2, n).tolist(),
            }
        )
    return out


def _fair_concat(batches):
    return {k: sum((b[k] for b in batches), []) for k in batches[0]}


def _lang_batches() -> list[tuple[list[str], list[str]]]:
    outs = ["correct", "incorrect", "invalid", "error"]
    out = []
    for n, langs in ((30, ["en", "es"]), (17, ["es", "fr"]), (5, ["de"])):
        out.append(
            (
                [langs[i] for i in _rng.integers(0, len(langs), n)],
                [outs[i] for i in _rng.integers(0, 4, n)],
            )
        )
    return out


CASES = [
    ContractCase(
        name="suites.cat",
        make=CATEvaluator,
        make_other=lambda: CATEvaluator(dataset="other.json"),
        batches=_cat_batches(),
        concat=_concat,
        add=lambda ev, b: ev.add(*b),
    ),
    ContractCase(
        name="suites.fairness",
        make=lambda: LLMFairnessEvaluator(group_column="male", groups=["0", "1"]),
        make_other=lambda: LLMFairnessEvaluator(group_column="race", groups=["Black", "White"]),
        batches=_fair_batches(),
        concat=_fair_concat,
        add=lambda ev, b: ev.add(**b),
    ),
    ContractCase(
        name="suites.language",
        make=LanguageEvaluator,
        make_other=lambda: LanguageEvaluator(dataset="other.csv"),
        batches=_lang_batches(),
        concat=_concat,
        add=lambda ev, b: ev.add(*b),
    ),
    ContractCase(
        name="suites.cat-ci",
        make=lambda: CATEvaluator(ci=0.9, num_bootstrap=30),
        make_other=lambda: CATEvaluator(ci=0.9, num_bootstrap=30, seed=1),
        batches=_cat_batches(),
        concat=_concat,
        add=lambda ev, b: ev.add(*b),
    ),
    ContractCase(
        name="suites.fairness-ci",
        make=lambda: LLMFairnessEvaluator(
            group_column="male", groups=["0", "1"], ci=0.9, num_bootstrap=30
        ),
        make_other=lambda: LLMFairnessEvaluator(group_column="male", groups=["0", "1"], ci=0.8),
        batches=_fair_batches(),
        concat=_fair_concat,
        add=lambda ev, b: ev.add(**b),
    ),
    ContractCase(
        name="suites.language-ci-wilson",
        make=lambda: LanguageEvaluator(ci=0.9, ci_method="wilson"),
        make_other=lambda: LanguageEvaluator(ci=0.9),
        batches=_lang_batches(),
        concat=_concat,
        add=lambda ev, b: ev.add(*b),
    ),
]
