"""The evaluator contract in scoring's terms, the tables view, and the old shapes 0.2.0
removed."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from assay.errors import InvalidInputError
from assay.results import MetricSet
from assay.scoring import (
    ScoringData,
    ScoringEvaluator,
    ScoringTables,
    evaluate_scoring,
    scoring_tables,
)


def _frame(seed: int = 0, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    h = np.clip(np.rint(rng.normal(3, 1, n)), 1, 6)
    h2 = np.where(rng.random(n) < 0.3, np.clip(h + rng.integers(-1, 2, n), 1, 6), np.nan)
    return pd.DataFrame(
        {"h": h, "h2": h2, "m": h + rng.normal(0, 0.5, n), "g": rng.choice(list("ab"), n)}
    )


def _config() -> dict:
    return dict(human="h", system="m", human2="h2", group_columns=["g"])


def test_add_returns_self_and_compute_returns_metric_records():
    ev = ScoringEvaluator(**_config())
    assert ev.add(_frame()) is ev
    ms = ev.compute()
    assert isinstance(ms, MetricSet) and len(ms) > 100
    assert ms.get("QWK", table="eval", score="m").value == pytest.approx(
        ev.tables()["eval"].loc["m", "wtkappa"], abs=0
    )
    one = evaluate_scoring(_frame(), **_config())
    assert one.to_list() == ms.to_list()


def test_tables_view_holds_the_same_records():
    ev = ScoringEvaluator(**_config()).add(_frame())
    view = ev.tables()
    assert isinstance(view, ScoringTables)
    assert view.metrics.to_list() == ev.compute().to_list()
    n_cells = sum(int(t.select_dtypes("number").size) for t in view.tables.values())
    assert n_cells > 100


def test_empty_evaluator_refuses_and_survives_a_state_round_trip():
    ev = ScoringEvaluator(**_config())
    with pytest.raises(InvalidInputError, match="no data was added"):
        ev.compute()
    with pytest.raises(InvalidInputError, match="no data was added"):
        ev.tables()
    back = ScoringEvaluator.from_state(ev.state())
    assert back.is_empty and back.config() == ev.config()
    back.add(_frame(1))
    assert (
        back.compute().to_list() == ScoringEvaluator(**_config()).add(_frame(1)).compute().to_list()
    )


def test_state_is_plain_arrays_and_round_trips_through_savez():
    ev = ScoringEvaluator(**_config(), rater_error_variance=0.4, base_groups={"g": "b"})
    ev.add(_frame(2)).add(_frame(3).assign(h=lambda d: d["h"].where(d.index % 7 > 0, "n/a")))
    state = ev.state()
    buf = io.BytesIO()
    np.savez(buf, **state)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        back = ScoringEvaluator.from_state(dict(z))
    assert back.dropped == ev.dropped == {"human_non_numeric": 43}
    assert back.compute().to_list() == ev.compute().to_list()


def test_merge_is_in_place_and_into_an_empty_evaluator():
    a = ScoringEvaluator(**_config())
    b = ScoringEvaluator(**_config()).add(_frame(4))
    assert a.merge(b) is a
    assert a.compute().to_list() == b.compute().to_list()
    b.add(_frame(5))  # b keeps its own state: a is unchanged
    assert a.compute().to_list() != b.compute().to_list()


@pytest.mark.parametrize(
    "other",
    [
        dict(human="h", system="m", human2="h2"),
        dict(human="h", system="m", human2="h2", group_columns=["g"], exclude_zero_scores=False),
        dict(human="h", system="m", human2="h2", group_columns=["g"], base_groups={"g": "a"}),
    ],
)
def test_merge_refuses_another_configuration(other):
    a = ScoringEvaluator(**_config()).add(_frame())
    with pytest.raises(InvalidInputError, match="configured differently"):
        a.merge(ScoringEvaluator(**other).add(_frame()))


def test_add_data_refuses_a_batch_cleaned_for_other_columns():
    d = ScoringData.from_frame(_frame(), human="h", system="m")
    with pytest.raises(InvalidInputError, match="other columns"):
        ScoringEvaluator(**_config()).add_data(d)


def test_bad_batch_leaves_the_evaluator_unchanged():
    ev = ScoringEvaluator(**_config()).add(_frame(6))
    before = ev.compute().to_list()
    with pytest.raises(InvalidInputError, match="out of range"):
        ev.add(_frame(7).assign(m=lambda d: d["m"].where(d.index != 3, 1e300)))
    assert ev.compute().to_list() == before


def test_file_names_are_safe_and_distinct(tmp_path):
    df = _frame().assign(**{"a/b": lambda d: d["g"], "a_b": lambda d: d["g"], "..": "x"})
    view = ScoringEvaluator(human="h", system="m", group_columns=["a/b", "a_b", ".."]).add(df)
    names = view.tables().file_names()
    assert len(set(names.values())) == len(names)
    assert all("/" not in n and not n.startswith(".") for n in names.values())
    written = view.tables().write_csv(tmp_path / "out")
    assert {p.parent for p in written} == {tmp_path / "out"}
    assert len(written) == len(names) + 1


# ---------------------------------------------------------------- removed in 0.2.0


def test_subgroups_keyword_fails_naming_group_columns():
    for call in (
        lambda: evaluate_scoring(_frame(), human="h", system="m", subgroups=["g"]),
        lambda: scoring_tables(_frame(), human="h", system="m", subgroups=["g"]),
        lambda: ScoringEvaluator(human="h", system="m", subgroups=["g"]),
    ):
        with pytest.raises(TypeError, match="subgroups= was renamed; use group_columns="):
            call()
    assert not hasattr(ScoringEvaluator(human="h", system="m", group_columns=["g"]), "subgroups")


def test_the_result_is_a_plain_metric_set_and_the_tables_a_view(tmp_path):
    res = evaluate_scoring(_frame(), **_config())
    assert type(res) is MetricSet
    for old in ("tables", "metrics", "dropped", "undefined", "write_csv"):
        assert not hasattr(res, old), old
    with pytest.raises(TypeError):
        res["eval"]  # noqa: B018  (ScoringEvaluator.tables()["eval"])
    view = ScoringEvaluator(**_config()).add(_frame()).tables()
    assert view.metrics.to_list() == res.to_list()
    pd.testing.assert_frame_equal(view["eval"], scoring_tables(_frame(), **_config())["eval"])
    with pytest.raises(InvalidInputError, match="no data was added"):
        ScoringEvaluator(**_config()).tables()
    import assay.scoring

    with pytest.raises(AttributeError, match="ScoringResult"):
        assay.scoring.ScoringResult  # noqa: B018  (ScoringTables)


def test_every_table_cell_is_a_record():
    import math

    from assay.scoring.columns import METRIC_TYPES

    view = ScoringEvaluator(**_config()).add(_frame(8)).tables()
    checked = 0
    for name in ("eval", "true_score_eval", "eval_by_g", "consistency_by_g", "degradation"):
        table = view[name]
        for row in table.index:
            for col in table.columns:
                base = col.split(".")[0] if name == "eval_by_g" else col
                params = {"table": name}
                if name.endswith("_by_g"):
                    params["group"] = str(row)
                    if "." in col:
                        params["score"] = col.split(".", 1)[1]
                elif name != "consistency":
                    params["score"] = str(row)
                suffix = "Degradation" if name == "degradation" else ""
                found = view.metrics.filter(METRIC_TYPES[base] + suffix, **params)
                assert len(found) == 1, (name, row, col, len(found))
                value = table.loc[row, col]
                if found[0].value is None:
                    assert math.isnan(value), (name, row, col)
                else:
                    assert found[0].value == value, (name, row, col)
                checked += 1
    assert checked > 100
