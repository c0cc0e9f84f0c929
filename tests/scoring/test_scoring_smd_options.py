"""RSMTool's SMD options: method names in any case (as RSMTool's ``method.lower()``), and the
evaluator's ``smd_method``, ``use_diff_std_means`` and population means/sds (checked against
rsmtool itself in test_scoring_options_vs_rsmtool.py)."""

import numpy as np
import pandas as pd
import pytest

from assay.errors import InvalidInputError
from assay.scoring import ScoringEvaluator, scoring_tables, standardized_mean_difference

H = [1.0, 2.0, 3.0, 4.0, 2.0]
M = [1.5, 2.0, 3.5, 3.5, 3.0]
POP = {"population_human_sd": 1.2, "population_system_sd": 0.8}


@pytest.mark.parametrize(
    ("given", "method"),
    [
        ("UNPOOLED", "unpooled"),
        ("Pooled", "pooled"),
        ("Johnson", "johnson"),
        ("WILLIAMSON", "williamson"),
    ],
)
def test_smd_method_names_are_case_insensitive(given, method):
    assert standardized_mean_difference(H, M, given, **POP) == standardized_mean_difference(
        H, M, method, **POP
    )


def test_unknown_smd_method_is_refused_naming_it():
    with pytest.raises(InvalidInputError, match="'cohen'"):
        standardized_mean_difference(H, M, "cohen")  # type: ignore[arg-type]


# --- the evaluator's SMD options (RSMTool's compute_metrics options) ------------------------


def _df(n=200, seed=3):
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5)
    h2 = np.where(rng.random(n) < 0.4, np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5), np.nan)
    return pd.DataFrame({"h": h, "h2": h2, "m": t + 0.2, "g": rng.choice(["a", "b"], n)})


def test_williamson_smd_is_the_formula_and_its_records_say_the_method():
    df = _df()
    sds = {"h": 1.1, "m": 0.9, "m_round": 1.0}
    t = scoring_tables(df, human="h", system="m", smd_method="Williamson", population_sds=sds)
    expected = (df["m"].mean() - df["h"].mean()) / np.sqrt((1.1**2 + 0.9**2) / 2)
    assert t["eval"].loc["m", "SMD"] == pytest.approx(expected, rel=1e-12)
    rec = t.metrics.get("SMD", table="eval", score="m")
    assert rec.parameters == {"table": "eval", "score": "m", "smd_method": "williamson"}
    # the default keeps the records as they were (no smd_method parameter)
    plain = scoring_tables(df, human="h", system="m")
    assert "smd_method" not in plain.metrics.get("SMD", table="eval", score="m").parameters


def test_dsm_column_replaces_smd_in_eval_eval_short_and_consistency_not_degradation():
    df = _df()
    t = scoring_tables(df, human="h", system="m", human2="h2", use_diff_std_means=True)
    assert "DSM" in t["eval"].columns and "SMD" not in t["eval"].columns
    assert "DSM.m" in t["eval_short"].columns and "DSM.m_round" in t["eval_short"].columns
    assert "DSM" in t["consistency"].columns
    plain = scoring_tables(df, human="h", system="m", human2="h2")
    pd.testing.assert_frame_equal(t["degradation"], plain["degradation"])
    # no population given: each score standardised with its own mean and sd, DSM = 0
    assert t["eval"]["DSM"].abs().max() < 1e-12
    assert t.metrics.get("DSM", table="eval", score="m").value == pytest.approx(0, abs=1e-12)


def test_options_travel_with_the_state_and_refuse_a_merge_with_other_options():
    kw = {"human": "h", "system": "m", "smd_method": "johnson", "population_sds": {"h": 1.3}}
    ev = ScoringEvaluator(**kw).add(_df())
    again = ScoringEvaluator.from_state(ev.state())
    assert again.compute() == ev.compute()
    with pytest.raises(InvalidInputError, match="configured differently"):
        ev.merge(ScoringEvaluator(human="h", system="m").add(_df()))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"smd_method": "cohen"}, "smd_method: method must be"),
        ({"smd_method": "johnson"}, r"requires population_sds for \['h'\]"),
        ({"smd_method": "williamson", "population_sds": {"h": 1}}, r"\['m', 'm_round'\]"),
        ({"population_sds": {"x": 1.0}}, "field 'x': unknown score column"),
        ({"population_sds": {"h": -1.0}}, "field 'h': must be a finite number >= 0"),
        ({"population_means": {"m": float("nan")}}, "field 'm': must be a finite number"),
        ({"population_sds": {"h": "wide"}}, "population_sds: field 'h'"),
        (
            {"use_diff_std_means": True, "population_means": {"h": 3.0}},
            r"give both population_means\['h'\] and population_sds\['h'\]",
        ),
    ],
)
def test_bad_options_are_refused_naming_option_and_column(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        ScoringEvaluator(human="h", system="m", **kw)
