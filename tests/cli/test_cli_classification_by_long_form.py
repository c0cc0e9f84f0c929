"""``--by`` (and ``--cluster``) on long-form classification input take a column of the
ground-truth file without repeating it in ``--metadata-columns``; a column that is nowhere is
still refused in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app


@pytest.fixture
def files(tmp_path):
    uids = [f"d{i}" for i in range(8)]
    truth = ["a", "b", "a", "b", "a", "a", "b", "b"]
    site = ["n", "n", "s", "s", "n", "s", "n", "s"]
    gt = tmp_path / "gt.csv"
    pd.DataFrame({"uid": uids, "value": truth, "site": site}).to_csv(gt, index=False)
    rows = []
    for i, u in enumerate(uids):
        s = (i * 37 % 100) / 100
        rows += [{"uid": u, "value": "a", "score": s}, {"uid": u, "value": "b", "score": 1 - s}]
    pr = tmp_path / "pr.csv"
    pd.DataFrame(rows).to_csv(pr, index=False)
    return ["classification", "--groundtruths", str(gt), "--predictions", str(pr)]


def _records(argv):
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_by_takes_the_column_from_the_ground_truth_file(files):
    ours = _records([*files, "--by", "site", "--metrics", "Accuracy,Precision"])
    explicit = _records(
        [*files, "--by", "site", "--metadata-columns", "site", "--metrics", "Accuracy,Precision"]
    )
    assert ours == explicit
    sliced = [r for r in ours if r["parameters"].get("slice_column") == "site"]
    assert {r["parameters"]["slice"] for r in sliced} == {"n", "s"}


def test_cluster_takes_the_column_from_the_ground_truth_file(files):
    argv = [*files, "--metrics", "Accuracy", "--ci", "0.9", "--num-bootstrap", "200"]
    ours = _records([*argv, "--cluster", "site"])
    assert ours == _records([*argv, "--cluster", "site", "--metadata-columns", "site"])


def test_a_column_that_is_nowhere_is_still_refused(files):
    res = CliRunner().invoke(app, [*files, "--by", "region"])
    assert res.exit_code == 2
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "region" in lines[0] and "Traceback" not in res.output
