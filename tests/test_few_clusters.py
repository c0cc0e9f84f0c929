"""A cluster bootstrap over fewer than two clusters gives no interval (issue 36, item 9).

Every resample of one cluster is the data again, so the percentile interval would be
``[value, value]``, as if there were no uncertainty. The engine reports the interval as
undefined with the reason instead, on the whole set and on any slice that lies in one
cluster (the other slices keep theirs), and warns below ``MIN_CLUSTERS`` clusters.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.classification import ClassificationEvaluator
from assay.cli.main import app
from assay.uncertainty.clusters import Clusters
from assay.uncertainty.intervals import MIN_CLUSTERS

N = 80
_rng = np.random.default_rng(5)
_truth = np.where(_rng.random(N) < 0.5, "pos", "neg")
_score = np.round(np.clip(_rng.normal(0.4 + 0.3 * (_truth == "pos"), 0.2), 0, 1), 2)
_site = np.where(np.arange(N) < 40, "a", "b")
# site "a" holds patients p0..p9; site "b" holds one patient only
_patient = np.where(np.arange(N) < 40, np.char.add("p", (np.arange(N) % 10).astype(str)), "q")


def _records(cluster: str, by: tuple[str, ...] = ()) -> list:
    meta = [{"site": s, "patient": p, "one": "x"} for s, p in zip(_site, _patient, strict=True)]
    ev = ClassificationEvaluator(
        metrics=["Accuracy", "ROCAUC"], ci=0.95, cluster=cluster, by=by, num_bootstrap=200
    )
    ev.add_arrays(_truth, _score, labels=["neg", "pos"], metadata=meta)
    return ev.compute()


def test_occupied_counts_clusters_that_hold_a_unit() -> None:
    c = Clusters.of(unit=np.array([0, 1, 2]), codes=np.array([3, 3, 3]), rows=3)
    assert c.size == 4 and c.occupied == 1


def test_one_cluster_on_the_whole_set_is_undefined_with_the_reason() -> None:
    recs = [m for m in _records("one") if m.type in ("Accuracy", "ROCAUC") and m.value is not None]
    assert recs
    for m in recs:
        assert m.parameters["ci_low"] is None and m.parameters["ci_high"] is None
        assert "at least two clusters" in m.parameters["ci_undefined"]
        assert "cluster=one has 1" in m.parameters["ci_undefined"]


def test_a_slice_in_one_cluster_is_undefined_and_the_others_keep_their_interval() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # site "a" has 10 clusters, the whole set 11
        recs = _records("patient", by=("site",))
    acc = {m.parameters.get("slice"): m for m in recs if m.type == "Accuracy"}
    whole, a, b = acc[None], acc["a"], acc["b"]
    assert whole.parameters["ci_low"] < whole.parameters["ci_high"]
    assert a.parameters["ci_low"] < a.parameters["ci_high"]
    assert b.parameters["ci_low"] is None
    assert "cluster=patient has 1" in b.parameters["ci_undefined"]


def test_few_clusters_warn() -> None:
    meta_few = np.where(np.arange(N) % 2 == 0, "u", "v")
    ev = ClassificationEvaluator(metrics=["Accuracy"], ci=0.95, cluster="c", num_bootstrap=50)
    ev.add_arrays(_truth, _score, labels=["neg", "pos"], metadata=[{"c": c} for c in meta_few])
    with pytest.warns(UserWarning, match=f"fewer than {MIN_CLUSTERS} clusters"):
        recs = ev.compute()
    acc = [m for m in recs if m.type == "Accuracy" and m.value is not None]
    assert all(m.parameters["ci_low"] is not None for m in acc)


def test_cli_one_cluster_exits_0_with_the_reason(tmp_path) -> None:
    uids = [f"d{i}" for i in range(N)]
    gt = tmp_path / "gt.csv"
    pd.DataFrame({"uid": uids, "value": _truth, "ward": "w1"}).to_csv(gt, index=False)
    rows = []
    for u, s in zip(uids, _score, strict=True):
        rows += [{"uid": u, "value": "pos", "score": s}, {"uid": u, "value": "neg", "score": 1 - s}]
    pr = tmp_path / "pr.csv"
    pd.DataFrame(rows).to_csv(pr, index=False)
    argv = ["classification", "--groundtruths", str(gt), "--predictions", str(pr)]
    res = CliRunner().invoke(
        app, [*argv, "--metrics", "Accuracy", "--ci", "0.95", "--cluster", "ward"]
    )
    assert res.exit_code == 0, res.output
    acc = [r for r in json.loads(res.stdout) if r["type"] == "Accuracy" and r["value"] is not None]
    assert acc and all(r["parameters"]["ci_low"] is None for r in acc)
    assert all("at least two clusters" in r["parameters"]["ci_undefined"] for r in acc)


def test_cli_few_clusters_warn_in_one_line(tmp_path) -> None:
    uids = [f"d{i}" for i in range(N)]
    gt = tmp_path / "gt.csv"
    pd.DataFrame({"uid": uids, "value": _truth, "site": _site}).to_csv(gt, index=False)
    rows = []
    for u, s in zip(uids, _score, strict=True):
        rows += [{"uid": u, "value": "pos", "score": s}, {"uid": u, "value": "neg", "score": 1 - s}]
    pr = tmp_path / "pr.csv"
    pd.DataFrame(rows).to_csv(pr, index=False)
    argv = ["classification", "--groundtruths", str(gt), "--predictions", str(pr)]
    # a real process: pytest would catch the warning before it reaches stderr
    res = subprocess.run(
        [sys.executable, "-m", "assay", *argv, "--metrics", "Accuracy", "--ci", "0.9",
         "--cluster", "site"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    warned = [x for x in res.stderr.splitlines() if "clusters" in x]
    assert warned == [
        "warning: a cluster bootstrap over fewer than 10 clusters tends to give too narrow "
        "an interval (cluster=site)"
    ], res.stderr
    acc = [r for r in json.loads(res.stdout) if r["type"] == "Accuracy" and r["value"] is not None]
    assert acc and all(r["parameters"]["ci_low"] is not None for r in acc)
