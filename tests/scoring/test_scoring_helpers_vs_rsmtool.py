"""The rsmtool helpers users call directly, against rsmtool 12 itself (one subprocess).

SMD with every method and ddof, DSM with and without population statistics,
``partial_correlations``, disattenuated correlations, number of human scores per response and
``convert_to_ordered_category``: assay must give the same numbers (1e-12) or, where rsmtool
returns NaN/None, ``None`` with a reason (UndefinedMetricError) or NaN.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assay.errors import UndefinedMetricError
from assay.scoring import (
    convert_to_ordered_category,
    difference_of_standardized_means,
    disattenuated_correlations,
    n_human_scores,
    partial_correlations,
    standardized_mean_difference,
)

RSM_PY = os.environ.get("ASSAY_RSMTOOL_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not RSM_PY, reason="set ASSAY_RSMTOOL_PYTHON (rsmtool)"),
]
HERE = Path(__file__).parent


def _cases() -> dict:
    rng = np.random.default_rng(11)
    smd, dsm = [], []
    for k in range(6):
        h = rng.normal(3, 1, 30 + k).tolist()
        m = rng.normal(3.2, 0.8, 30 + k).tolist()
        for ddof in (0, 1):
            smd.append({"h": h, "m": m, "method": "unpooled", "ddof": ddof})
            smd.append({"h": h, "m": m, "method": "pooled", "ddof": ddof})
            smd.append({"h": h, "m": m, "method": "johnson", "ddof": ddof, "phsd": 0.9 + k})
            smd.append(
                {"h": h, "m": m, "method": "williamson", "ddof": ddof, "phsd": 1.1, "pmsd": 0.7}
            )
            dsm.append({"h": h, "m": m, "ddof": ddof})
            dsm.append({"h": h, "m": m, "ddof": ddof, "phm": 3.0, "phsd": 1.2})
            dsm.append({"h": h, "m": m, "ddof": ddof, "pmm": 2.9, "pmsd": 0.8})
            dsm.append({"h": h, "m": m, "ddof": ddof, "phm": 3, "phsd": 1, "pmm": 3, "pmsd": 2})
    smd.append({"h": [2.0, 2.0, 2.0], "m": [1.0, 2.0, 3.0], "method": "unpooled", "ddof": 1})
    # method names in any case, as rsmtool lower-cases them
    h, m = rng.normal(3, 1, 25).tolist(), rng.normal(3.3, 0.9, 25).tolist()
    for method in ("UNPOOLED", "Pooled", "Johnson", "WilliamSon"):
        smd.append({"h": h, "m": m, "method": method, "ddof": 1, "phsd": 1.05, "pmsd": 0.85})
    x = rng.normal(size=(40, 4))
    x[:, 1] += x[:, 0]
    pcor = [
        {f"f{i}": x[:, i].tolist() for i in range(4)},
        {"a": [1.0, 2.0, 3.0], "b": [2.0, 1.0, 0.5], "c": [1, 2, 2.5], "d": [0, 1, 3.0]},
        {"a": [1.0, 2, 3, 4, 5], "b": [2.0, 4, 6, 8, 10.0], "c": [1.0, 0, 1, 0, 3]},
    ]
    dis = [
        {"hm": {"raw": 0.7, "raw_trim": 0.72, "raw_trim_round": 0.65}, "hh": {"": 0.8}},
        {
            "hm": {"All data": 0.5, "a": 0.4, "b": 0.6, "c": 0.3},
            "hh": {"All data": 0.7, "a": -0.1, "b": 0.9},
        },
    ]
    nh = [[[1, 2], [3, np.nan], [np.nan, np.nan]], [[1, 2, 3, 4]]]
    nh = [[[None if v != v else v for v in row] for row in case] for case in nh]
    cat = [
        {"values": ["b", "a", "b", "c", "a", "d"]},
        {"values": ["b", "a", "b", "c", "a", "d"], "base": "d"},
        {"values": ["x"] * 3 + ["y"] * 5 + ["z"] * 5},
    ]
    return {"smd": smd, "dsm": dsm, "pcor": pcor, "dis": dis, "nh": nh, "cat": cat}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    cases = _cases()
    path = tmp_path_factory.mktemp("helpers") / "cases.json"
    path.write_text(json.dumps(cases))
    proc = subprocess.run(
        [RSM_PY, str(HERE / "rsmtool_helpers_reference.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return cases, json.loads(proc.stdout)


def _or_none(f, *a, **kw):
    try:
        return f(*a, **kw)
    except UndefinedMetricError:
        return None


def test_smd_every_method_and_ddof(answers):
    cases, theirs = answers
    n = 0
    for c, t in zip(cases["smd"], theirs["smd"]):
        mine = _or_none(
            standardized_mean_difference,
            c["h"],
            c["m"],
            c["method"],
            population_human_sd=c.get("phsd"),
            population_system_sd=c.get("pmsd"),
            ddof=c["ddof"],
        )
        if t is None:
            assert mine is None
        else:
            assert mine == pytest.approx(t, rel=1e-12, abs=1e-14)
        n += 1
    assert n == len(cases["smd"]) > 40
    assert sum(c["method"] != c["method"].lower() for c in cases["smd"]) == 4


def test_dsm_with_and_without_population_statistics(answers):
    cases, theirs = answers
    for c, t in zip(cases["dsm"], theirs["dsm"]):
        mine = difference_of_standardized_means(
            c["h"],
            c["m"],
            c.get("phm"),
            c.get("phsd"),
            c.get("pmm"),
            c.get("pmsd"),
            ddof=c["ddof"],
        )
        assert mine == pytest.approx(t, rel=1e-10, abs=1e-12)
    assert len(cases["dsm"]) == 48


def test_partial_correlations(answers):
    cases, theirs = answers
    for c, t in zip(cases["pcor"], theirs["pcor"]):
        with pytest.warns(UserWarning) if len(c) == 3 and len(c["a"]) == 5 else nullcontext():
            mine = partial_correlations(pd.DataFrame(c)).to_numpy()
        np.testing.assert_allclose(mine, np.array(t, dtype=float), rtol=1e-9, atol=1e-12)


def test_disattenuated_correlations(answers):
    cases, theirs = answers
    for c, t in zip(cases["dis"], theirs["dis"]):
        ref = pd.read_json(io.StringIO(t), orient="split")
        mine = disattenuated_correlations(pd.Series(c["hm"]), pd.Series(c["hh"]))
        assert list(mine.index) == [str(i) for i in ref.index]
        assert list(mine.columns) == list(ref.columns)
        np.testing.assert_allclose(mine.to_numpy(float), ref.to_numpy(float), rtol=1e-12)


def test_n_human_scores_and_ordered_category(answers):
    cases, theirs = answers
    for c, t in zip(cases["nh"], theirs["nh"]):
        a = np.array([[np.nan if v is None else v for v in row] for row in c], dtype=float)
        assert n_human_scores(a).tolist() == t
    for c, t in zip(cases["cat"], theirs["cat"]):
        s = convert_to_ordered_category(pd.Series(c["values"]), base_group=c.get("base"))
        assert [str(v) for v in s.cat.categories] == t
        assert s.cat.ordered
