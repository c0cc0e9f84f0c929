"""Long-form classification files on ``--scheduler``: ground truths and predictions joined by
uid on a real Dask scheduler (LocalCluster on 127.0.0.1, worker processes), records identical
to the single-process run; multi-key, metadata, slices and intervals included."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:  # fmt: skip
        yield cluster.scheduler_address


def _files(tmp_path, fmt: str):
    rng = np.random.default_rng(7)
    n = 300
    uids = rng.permutation(n) + 1000  # ints, not in order
    labels = {"class": ["cat", "dog", "owl"], "size": ["s", "l"]}
    gts, preds = [], []
    for u in uids:
        site = ["north", "south", "west"][u % 3]
        for key, values in labels.items():
            if key == "size" and u % 4 == 0:
                continue  # some datums have one key only
            gts.append({"uid": int(u), "key": key, "value": values[u % len(values)], "site": site})
            s = rng.dirichlet(np.ones(len(values)))
            for v, sc in zip(values, s):
                if not (u % 11 == 0 and v == values[0]):  # some predictions missing
                    preds.append(
                        {"uid": int(u), "key": key, "value": v, "score": round(float(sc), 4)}
                    )
    gts.append({"uid": 99999, "key": "class", "value": "cat", "site": "north"})  # no prediction
    g, p = pd.DataFrame(gts), pd.DataFrame(preds)
    if fmt == "parquet":
        gp, pp = tmp_path / "g.parquet", tmp_path / "p.parquet"
        g.to_parquet(gp, row_group_size=97)
        p.to_parquet(pp, row_group_size=101)
    else:
        gp, pp = tmp_path / "g.csv", tmp_path / "p.csv"
        g.to_csv(gp, index=False)
        p.to_csv(pp, index=False)
    return gp, pp


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize(
    "extra",
    [
        [],
        [
            "--by",
            "site",
            "--ci",
            "0.9",
            "--num-bootstrap",
            "50",
            "--metrics",
            "Counts,Precision,Recall,F1,Accuracy,ROCAUC",
        ],
    ],  # fmt: skip
)
def test_long_form_on_the_cluster_equals_one_process(tmp_path, scheduler, fmt, extra):
    gp, pp = _files(tmp_path, fmt)
    argv = ["classification", "--groundtruths", str(gp), "--predictions", str(pp), *extra]
    here = CliRunner().invoke(app, argv)
    assert here.exit_code == 0, here.output
    there = CliRunner().invoke(app, [*argv, "--scheduler", scheduler])
    assert there.exit_code == 0, there.output
    ours, theirs = json.loads(here.stdout), json.loads(there.stdout)
    assert len(ours) > 20
    assert theirs == ours


def test_a_prediction_without_ground_truth_is_refused_on_the_cluster(tmp_path, scheduler):
    gp, pp = _files(tmp_path, "csv")
    p = pd.read_csv(pp)
    pd.concat([p, pd.DataFrame([{"uid": 5, "key": "class", "value": "cat", "score": 0.5}])]).to_csv(
        pp, index=False
    )
    argv = ["classification", "--groundtruths", str(gp), "--predictions", str(pp)]
    for extra in ([], ["--scheduler", scheduler]):
        res = CliRunner().invoke(app, [*argv, *extra])
        assert res.exit_code == 2, res.output
        assert "Traceback" not in res.output and "p.csv" in res.output
