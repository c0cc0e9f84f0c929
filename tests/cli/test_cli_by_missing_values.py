"""``--by`` on a column with missing values: the rows without a value are a slice of their own,
``slice: null``, counted (``slice_n``), listed after the values and equal to those rows
evaluated alone, with ``--ci`` too (issue 36, item 10); in classification and fairness."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.fairness import evaluate_fairness


def _records(argv: list[str]) -> list[dict]:
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture
def classification(tmp_path):
    n = 12
    uids = [f"d{i}" for i in range(n)]
    truth = ["a", "b", "a", "b", "a", "a", "b", "b", "a", "b", "b", "a"]
    site = ["n", "n", "s", "s", None, "s", "n", None, "n", "s", None, "n"]
    rows, rng = [], np.random.default_rng(3)
    for u in uids:
        s = round(float(rng.random()), 2)
        rows += [{"uid": u, "value": "a", "score": s}, {"uid": u, "value": "b", "score": 1 - s}]
    predictions = pd.DataFrame(rows)

    def argv(keep: list[int] | None = None) -> list[str]:
        at = list(range(n)) if keep is None else keep
        name = "all" if keep is None else "part"
        gt, pr = tmp_path / f"gt-{name}.csv", tmp_path / f"pr-{name}.csv"
        pd.DataFrame(
            {
                "uid": [uids[i] for i in at],
                "value": [truth[i] for i in at],
                "site": [site[i] for i in at],
            }  # fmt: skip
        ).to_csv(gt, index=False)
        predictions[predictions["uid"].isin([uids[i] for i in at])].to_csv(pr, index=False)
        return ["classification", "--groundtruths", str(gt), "--predictions", str(pr)]

    return argv, [i for i, s in enumerate(site) if s is None]


def test_classification_missing_values_are_the_null_slice(classification) -> None:
    argv, missing = classification
    metrics = ["--metrics", "Accuracy,Precision"]
    out = _records([*argv(), "--by", "site", *metrics])
    sliced = [r for r in out if r["parameters"].get("slice_column") == "site"]
    assert [r["parameters"]["slice"] for r in sliced][-1] is None  # the missing last
    assert {r["parameters"]["slice"] for r in sliced} == {"n", "s", None}
    null = [r for r in sliced if r["parameters"]["slice"] is None]
    assert null and all(r["parameters"]["slice_n"] == len(missing) for r in null)
    # equal to the rows without a site evaluated alone (their uids' predictions only matter)
    alone = {(r["type"], r["parameters"].get("label_value")): r["value"]
             for r in _records([*argv(missing), *metrics])}  # fmt: skip
    for r in null:
        assert r["value"] == pytest.approx(alone[(r["type"], r["parameters"].get("label_value"))])


def _fairness_frame() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 200
    y = rng.integers(0, 2, n)
    site = rng.choice(["x", "y"], n).astype(object)
    site[rng.random(n) < 0.2] = None
    return pd.DataFrame({"y": y, "yhat": np.where(rng.random(n) < 0.75, y, 1 - y),
                         "sex": rng.choice(["F", "M"], n), "site": site})  # fmt: skip


def test_fairness_missing_values_are_the_null_slice(tmp_path) -> None:
    df = _fairness_frame()
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    args = ["fairness", "--data", str(path), "--label", "y", "--prediction", "yhat",
            "--sensitive", "sex=F", "--group", "sex", "--by", "site",
            "--ci", "0.9", "--num-bootstrap", "50"]  # fmt: skip
    out = _records(args)
    sliced = [r for r in out if r["parameters"].get("slice_column") == "site"]
    order = [r["parameters"]["slice"] for r in sliced]
    assert order.index(None) > max(i for i, v in enumerate(order) if v is not None)
    null = [r for r in sliced if r["parameters"]["slice"] is None]
    n_missing = int(df["site"].isna().sum())
    assert n_missing > 0 and all(r["parameters"]["slice_n"] == n_missing for r in null)
    alone = evaluate_fairness(df[df["site"].isna()], label="y", prediction="yhat",
                              groups=["sex=F"], group_columns=["sex"], ci=0.9,
                              num_bootstrap=50)  # fmt: skip
    want = {(m.type, m.parameters.get("group_column")): m for m in alone}
    for r in null:
        ref = want[(r["type"], r["parameters"]["group_column"])]
        assert r["value"] == pytest.approx(ref.value)
        assert r["parameters"]["ci_low"] == pytest.approx(ref.parameters["ci_low"])
        assert "gap_ci_low" in r["parameters"] or r["value"] is None
    table = CliRunner().invoke(app, [*args, "--format", "table"])
    assert table.exit_code == 0 and "null" in table.stdout


def test_the_null_slice_merges_and_travels_in_state() -> None:
    """Batches, merge and ``state()`` give the one-evaluator null slice (its key ``None``
    travels as JSON ``null``)."""
    from assay.fairness import FairnessEvaluator

    df = _fairness_frame()
    kw = {"groups": ["sex=F"], "group_columns": ["sex"], "by": ["site"], "ci": 0.9,
          "num_bootstrap": 30}  # fmt: skip

    def run(part: pd.DataFrame) -> FairnessEvaluator:
        return FairnessEvaluator(**kw).add(part, label="y", prediction="yhat")

    one = run(df).compute().to_json()
    a, b = run(df.iloc[:70]), run(df.iloc[70:])
    merged = FairnessEvaluator.from_state(b.merge(FairnessEvaluator.from_state(a.state())).state())
    assert merged.compute().to_json() == one
    assert '"slice": null' in one
