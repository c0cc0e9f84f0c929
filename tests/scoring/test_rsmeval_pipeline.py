"""The rsmeval pipeline without rsmtool: trimming, scaling, row names and order, exclusions,
input formats and configuration checks (the cell-by-cell proof against rsmeval itself is
test_rsmeval_vs_rsmtool.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from assay.errors import InvalidInputError
from assay.scoring import RsmevalConfig, rsmeval_tables, run_rsmeval, trim


def _data(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1.2, n)
    return pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(n)],
            "h": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "h2": np.clip(np.rint(t + rng.normal(0, 0.5, n)), 1, 5),
            "m": t * 1.3 - 0.9,  # reaches below 0.5 and above 5.5
            "g": rng.choice(["a", "b", "c"], n),
        }
    )


def _config(tmp_path, df, name="p.csv", **extra):
    path = tmp_path / name
    if name.endswith(".tsv"):
        df.to_csv(path, sep="\t", index=False)
    elif name.endswith(".xlsx"):
        df.to_excel(path, index=False)
    else:
        df.to_csv(path, index=False)
    cfg = {
        "experiment_id": "x",
        "predictions_file": name,
        "system_score_column": "m",
        "human_score_column": "h",
        "id_column": "id",
        "trim_min": 1,
        "trim_max": 5,
        **extra,
    }
    cpath = tmp_path / "c.json"
    cpath.write_text(json.dumps(cfg))
    return cpath


def test_trim_keeps_rounded_scores_on_the_scale():
    v = np.array([-3.0, 0.2, 0.5002, 3.3, 5.6, 9.0])
    t = trim(v, 1, 5)
    assert t.min() == pytest.approx(0.5002) and t.max() == pytest.approx(5.4998)
    assert set(np.rint(t).astype(int)) <= {1, 2, 3, 4, 5}
    assert set(np.rint(v).astype(int)) - {1, 2, 3, 4, 5}  # untrimmed leaves the scale
    assert trim(v, 1, 5, tolerance=0).tolist() == [1, 1, 1, 3.3, 5, 5]


def test_rows_named_and_ordered_as_rsmtool(tmp_path):
    df = _data()
    t = run_rsmeval(_config(tmp_path, df, subgroups=["g"]))
    assert list(t["eval"].index) == ["raw", "raw_trim", "raw_trim_round"]
    assert t["eval"].loc["raw", "sys_min"] < 0.5
    assert t["eval"].loc["raw_trim", "sys_min"] == pytest.approx(0.5002)
    assert t["eval"].loc["raw_trim_round", "sys_max"] == 5
    assert list(t["eval_by_g"].index) == ["All data", "a", "b", "c"]
    assert "MSE" not in t["eval"].columns
    assert [c for c in t["eval_short"].columns if "." in c][0] == "sys_mean.raw_trim"
    t2 = run_rsmeval(_config(tmp_path, df, scale_with="asis"))
    assert list(t2["eval"].index) == ["scale", "scale_trim", "scale_trim_round"]
    np.testing.assert_allclose(t2["eval"].to_numpy(), t["eval"].to_numpy())


def test_scale_with_file_scales_then_trims(tmp_path):
    df = _data()
    scale = pd.DataFrame({"prediction": [1.0, 2.0, 3.0, 6.0], "sc1": [2.0, 3.0, 3.0, 4.0]})
    scale.to_csv(tmp_path / "s.csv", index=False)
    t = run_rsmeval(_config(tmp_path, df, scale_with="s.csv"))
    assert list(t["eval"].index) == [
        "raw",
        "raw_trim",
        "raw_trim_round",
        "scale",
        "scale_trim",
        "scale_trim_round",
    ]
    p = t["pred_processed"]
    expect = (df["m"] - 3.0) / scale["prediction"].std() * scale["sc1"].std() + 3.0
    np.testing.assert_allclose(p["scale"], expect, rtol=1e-14)
    np.testing.assert_allclose(p["scale_trim"], np.clip(expect, 0.5002, 5.4998), rtol=1e-14)
    assert "sys_scale" in t["score_dist"].columns


@pytest.mark.parametrize("exclude", [True, False])
def test_exclude_zero_scores_both_ways(tmp_path, exclude):
    df = _data()
    df["h"] = df["h"].astype(object)
    df.loc[[1, 2, 3], "h"] = 0
    df.loc[4, "h"] = "TD"
    t = run_rsmeval(_config(tmp_path, df, exclude_zero_scores=exclude, subgroups=["g"]))
    n = len(df) - 1 - (3 if exclude else 0)
    assert t["eval"].loc["raw", "N"] == n == len(t["pred_processed"])
    assert len(t["test_excluded_responses"]) == len(df) - n
    comp = t["test_excluded_composition"].set_index("Human/System")
    assert comp.loc["non-numeric human score", "numeric system score"] == 1
    zero = comp.loc["zero human score", "numeric system score"]
    assert (zero == 3) if exclude else np.isnan(zero)
    assert int(t["data_composition"].loc[0, "responses"]) == n
    assert t["data_composition_by_g"]["N responses"].sum() == n


@pytest.mark.parametrize("name", ["p.tsv", "p.xlsx"])
def test_tsv_and_xlsx_give_the_csv_tables(tmp_path, name):
    df = _data(seed=3)
    a = run_rsmeval(_config(tmp_path, df, subgroups=["g"], second_human_score_column="h2"))
    b = run_rsmeval(_config(tmp_path, df, name, subgroups=["g"], second_human_score_column="h2"))
    assert set(a) == set(b) and len(a) > 15
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k], check_dtype=False)


def test_second_rater_tables_and_missing_group_value(tmp_path):
    df = _data(seed=4)
    df["g"] = df["g"].astype(object)
    df.loc[[0, 1], "g"] = None
    t = run_rsmeval(_config(tmp_path, df, subgroups=["g"], second_human_score_column="h2"))
    assert "No info" in t["eval_by_g"].index
    assert t["confMatrix_h1h2"].to_numpy().sum() == len(df)
    assert t["confMatrix"].to_numpy().sum() == len(df)
    assert list(t["true_score_eval"].index) == ["raw", "raw_trim", "raw_trim_round"]
    est = t["estimates_osa_by_g"]
    assert est.index[0].startswith("Intercept (")
    assert list(est.columns) == ["estimate", "P>[t]", "[0.025", "0.975]"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"trim_max": None}, "missing required key 'trim_max'"),
        ({"bogus": 1}, "unknown configuration keys"),
        ({"flag_column": ["a"]}, "flag_column must be an object"),
        ({"trim_min": "low"}, "trim_min must be a number"),
        ({"trim_min": 6}, "trim_min must not exceed trim_max"),
        ({"file_format": "json"}, "file_format 'json': one of csv, tsv, xlsx"),
        ({"exclude_zero_scores": "yes"}, "true or false"),
        ({"min_items_per_candidate": 3}, "min_items_per_candidate needs candidate_column"),
        ({"candidate_column": "c", "min_items_per_candidate": 2.5}, "whole number"),
        ({"subgroups": ["g"], "min_n_per_group": "10"}, "min_n_per_group must be a whole"),
        ({"subgroups": ["g"], "min_n_per_group": {"h": 5}}, "keys of min_n_per_group"),
        ({"subgroups": ["g"], "min_n_per_group": {"g": True}}, "whole number"),
        ({"experiment_id": "my exp"}, "no spaces"),
        ({"use_thumbnails": "maybe"}, "use_thumbnails must be true or false"),
    ],
)
def test_bad_configuration_is_refused(tmp_path, change, message):
    cfg = {
        "experiment_id": "x",
        "predictions_file": "p.csv",
        "system_score_column": "m",
        "trim_min": 1,
        "trim_max": 5,
        **change,
    }
    cfg = {k: v for k, v in cfg.items() if v is not None}
    with pytest.raises(InvalidInputError, match=message):
        RsmevalConfig.from_dict(cfg, base=tmp_path, source="c.json")


def test_bad_predictions_are_refused(tmp_path):
    df = _data()
    df.loc[1, "id"] = df.loc[0, "id"]
    with pytest.raises(InvalidInputError, match="duplicate response ids"):
        run_rsmeval(_config(tmp_path, df))
    with pytest.raises(InvalidInputError, match="missing column"):
        rsmeval_tables(RsmevalConfig.from_file(_config(tmp_path, _data(), subgroups=["zz"])))


@pytest.mark.parametrize("suffix", [".tsv", ".xlsx"])
def test_plain_mode_reads_tsv_and_xlsx(tmp_path, suffix):
    from assay.scoring import scoring_tables

    df = _data(seed=8)
    path = tmp_path / f"d{suffix}"
    if suffix == ".tsv":
        df.to_csv(path, sep="\t", index=False)
    else:
        df.to_excel(path, index=False)
    a = scoring_tables(df, human="h", system="m", human2="h2", group_columns=["g"])
    b = scoring_tables(path, human="h", system="m", human2="h2", group_columns=["g"])
    assert set(a.tables) == set(b.tables)
    for k in a.tables:
        pd.testing.assert_frame_equal(a[k], b[k])


def test_non_utf8_tsv_names_the_file_and_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_bytes(b"h\tm\n1\t2\n3\tcaf\xe9\n")
    from assay.scoring import scoring_tables

    with pytest.raises(InvalidInputError, match="line 3"):
        scoring_tables(p, human="h", system="m")
