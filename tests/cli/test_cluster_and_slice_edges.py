"""A cluster bootstrap over one cluster is refused, and warns below MIN_CLUSTERS (issue 36,
item 9)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.clusters import MIN_CLUSTERS, Clusters, resample_weights
from assay.errors import InvalidInputError

runner = CliRunner()


def _data(tmp_path, site):
    rng = np.random.default_rng(0)
    n = len(site)
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"y": y, "score": np.round(rng.random(n), 3), "site": site})
    df.to_csv(tmp_path / "d.csv", index=False)
    return ["classification", "--data", str(tmp_path / "d.csv"), "--y-true", "y",
            "--y-score", "score", "--metadata-columns", "site",
            "--pr-curve-max-examples", "0"]  # fmt: skip


def test_one_cluster_is_refused_in_one_line(tmp_path):
    base = _data(tmp_path, ["only"] * 200)
    r = runner.invoke(app, [*base, "--ci", "0.95", "--cluster", "site", "--num-bootstrap", "50"])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert "at least two clusters" in line and "has 1 value" in line


def test_few_clusters_warn_and_two_is_the_least():
    c1 = Clusters.of(np.arange(4), np.zeros(4, np.intp), 4)
    with pytest.raises(InvalidInputError, match="at least two clusters"):
        next(resample_weights(c1, 10, 0))
    c3 = Clusters.of(np.arange(6), np.array([0, 0, 1, 1, 2, 2]), 6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        next(resample_weights(c3, 10, 0))
    assert any(f"fewer than {MIN_CLUSTERS}" in str(w.message) for w in caught)
