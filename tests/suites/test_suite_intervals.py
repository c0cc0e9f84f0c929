"""Suite intervals over items, from the outcome counts: equal to a Python loop computing the
metric on each resample materialised as a list of outcomes (same counts); Wilson as
statsmodels; seeded; values unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from assay.llm.suites.cat import OUTCOMES, CATEvaluator
from assay.llm.suites.language import LanguageEvaluator
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 40, 3


def _cat(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    outcomes = rng.choice(OUTCOMES, n, p=[0.35, 0.3, 0.2, 0.1, 0.05])
    return outcomes, rng.choice(["intrasentence", "intersentence"], n), rng.choice(["g", "r"], n)


def test_cat_bootstrap_equals_a_loop_over_materialised_items() -> None:
    out, tt, bt = _cat()
    ms = CATEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED).add(out, tt, bt).compute()
    for scope, keep in (("general", np.ones(len(out), bool)), ("g", bt == "g")):
        counts = np.array([np.sum(out[keep] == o) for o in OUTCOMES])
        loops: dict[str, list[float]] = {"LMS": [], "SS": [], "ICAT": []}
        for w in np.concatenate(list(resample_counts(counts, B, SEED))):
            items = [o for o, k in zip(OUTCOMES, w.astype(int)) for _ in range(k)]
            s, a = items.count("stereotype"), items.count("anti-stereotype")
            answered = len(items) - items.count("error")
            lms = 100 * (s + a) / answered
            ss = 100 * s / (s + a)
            loops["LMS"].append(lms)
            loops["SS"].append(ss)
            loops["ICAT"].append(lms * min(ss, 100 - ss) / 50)
        for kind, values in loops.items():
            p = ms.get(kind, scope=scope).parameters
            want = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, abs=1e-12), (kind, scope)


def test_language_rates_bootstrap_and_wilson() -> None:
    rng = np.random.default_rng(1)
    langs = rng.choice(["en", "fr"], 150)
    outs = rng.choice(["correct", "incorrect", "invalid", "error"], 150, p=[0.6, 0.25, 0.1, 0.05])
    boot = LanguageEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED).add(langs, outs).compute()
    wil = LanguageEvaluator(ci=LEVEL, ci_method="wilson").add(langs, outs).compute()
    plain = LanguageEvaluator().add(langs, outs).compute()
    assert [m.value for m in boot] == [m.value for m in plain]
    for lang in ("all", "fr"):
        keep = np.ones(150, bool) if lang == "all" else langs == lang
        o = outs[keep]
        ok, bad, inv = (int(np.sum(o == x)) for x in ("correct", "incorrect", "invalid"))
        lo, hi = proportion_confint(ok, ok + bad + inv, alpha=1 - LEVEL, method="wilson")
        p = wil.get("Accuracy", language=lang).parameters
        assert (p["ci_low"], p["ci_high"], p["ci_method"]) == (
            pytest.approx(lo),
            pytest.approx(hi),
            "wilson",
        )
        counts = np.array([ok, bad, inv, int(np.sum(o == "error"))])
        acc = [w[0] / w[:3].sum() for w in np.concatenate(list(resample_counts(counts, B, SEED)))]
        p = boot.get("Accuracy", language=lang).parameters
        want = np.quantile(acc, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, abs=1e-12)


def _items(cells_items, counts):
    """Columns target, predicted, privileged, counterfactual: ``counts[i]`` copies of item i."""
    rows = [it for it, k in zip(cells_items, counts.astype(int)) for _ in range(k)]
    return {k: np.array([r[i] for r in rows]) for i, k in enumerate(
        ("target", "predicted", "privileged", "counterfactual"))}  # fmt: skip


def test_llm_fairness_bootstrap_equals_re_evaluating_materialised_items() -> None:
    from assay.llm.suites.fairness_metrics import LLMFairnessEvaluator

    rng = np.random.default_rng(4)
    n = 200
    data = {
        "target": rng.integers(0, 2, n),
        "predicted": rng.choice([1, 0, -1, -2], n, p=[0.45, 0.4, 0.1, 0.05]),
        "privileged": rng.integers(0, 2, n),
    }
    cf = np.where(rng.random(n) < 0.8, data["predicted"], rng.choice([1, 0, -1], n))
    data["counterfactual"] = np.where(data["predicted"] == -2, -3, cf)
    ev = LLMFairnessEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED).add(**data)
    ms = ev.compute()
    # the items the evaluator's cells stand for (target, predicted, privileged, cf)
    group_items = [(1, 1, g, 1) for g in (0, 1)] + [(0, 1, g, 1) for g in (0, 1)]
    group_items += [(1, 0, g, 0) for g in (0, 1)] + [(0, 0, g, 0) for g in (0, 1)]
    group_items += [(1, -1, 0, -1), (1, -2, 0, -3)]
    cells = np.concatenate([ev._confusion, ev._responses[1:]])
    # per group: changed, unchanged with a valid answer, two invalid answers; then not compared
    change_items = [(1, 1, g, 0) for g in (0, 1)] + [(1, 1, g, 1) for g in (0, 1)]
    change_items += [(1, -1, g, -1) for g in (0, 1)] + [(1, -2, 0, -3)]
    compared, changed, informative = ev._cf[:2], ev._cf[2:4], ev._cf[4:]
    rest = int(ev._responses.sum() - compared.sum())
    per = [[changed[k], informative[k] - changed[k], compared[k] - informative[k]] for k in (0, 1)]
    change_cells = np.array(
        [per[0][0], per[0][1], per[0][2], per[1][0], per[1][1], per[1][2], rest]
    )
    order = [0, 2, 4, 1, 3, 5, 6]  # the items in the cells' order
    change_items = [change_items[i] for i in order]
    for items, counts, kinds in (
        (group_items, cells, ["StatisticalParityDifference", "DisparateImpact", "Accuracy"]),
        (change_items, change_cells, ["CounterfactualChangeRate"]),
    ):
        loops: dict[tuple, list[float]] = {}
        for w in np.concatenate(list(resample_counts(counts, B, SEED))):
            again = LLMFairnessEvaluator().add(**_items(items, w)).compute()
            for m in again.filter():
                if m.type in kinds:
                    key = (m.type, m.parameters.get("group"))
                    loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
        for (kind, group), values in loops.items():
            v = np.array(values)
            want = np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
            where = {} if group is None else {"group": group}
            got = [m for m in ms.filter(kind, **where) if m.parameters.get("group") == group]
            p = got[0].parameters
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, abs=1e-12), (kind, group)
