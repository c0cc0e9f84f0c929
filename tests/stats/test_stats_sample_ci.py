"""``ci`` on a stats evaluation: every mean-type record (Accuracy, Mean, grouped) gets an
interval in the one spelling. t against scipy's t interval; the bootstrap against a Python
loop over the same resample counts materialised as samples (and clusters); Wilson against
the ``ci_wilson`` metric; the ``Ci`` metric's records carry the same keys; merge, state and
the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

import assay.stats as st
from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 60, 4


def _frame(n: int = 40, seed: int = 0) -> st.ScoreFrame:
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(0.6, 0.3, n), 1)
    docs = rng.integers(0, 9, n)
    topics = np.array([f"t{i % 3}" for i in range(n)], dtype=object)
    return st.ScoreFrame.from_arrays(values, metadata={"doc": docs, "topic": topics})


def test_t_interval_equals_scipy_plain_and_per_group() -> None:
    f = _frame()
    ms = st.evaluate_scores(f, [st.mean(), st.grouped(st.mean(), "topic")], ci=LEVEL, ci_method="t")
    y = f.values
    p = ms[0].parameters
    want = sps.t.interval(LEVEL, len(y) - 1, loc=y.mean(), scale=sps.sem(y))
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(want, rel=1e-12)
    assert (p["confidence_level"], p["ci_method"]) == (LEVEL, "t")
    assert "num_bootstrap" not in p
    topics = f.column("topic")
    for g in ("t0", "t1", "t2"):
        yg = y[topics == g]
        q = ms.get("Mean", group=g).parameters
        want = sps.t.interval(LEVEL, len(yg) - 1, loc=yg.mean(), scale=sps.sem(yg))
        assert (q["ci_low"], q["ci_high"]) == pytest.approx(want, rel=1e-12)


def test_clustered_t_and_wilson_equal_the_inspect_style_metrics() -> None:
    f = _frame(seed=1)
    clipped = st.ScoreFrame.from_arrays(np.clip(f.values, 0, 1), metadata={"doc": f.column("doc")})
    for frame, method, metric in ((f, "t", st.ci), (clipped, "wilson", st.ci_wilson)):
        for cluster in (None, "doc"):
            ms = st.evaluate_scores(frame, [st.mean()], ci=LEVEL, ci_method=method, cluster=cluster)
            p = ms.get("Mean").parameters
            want = metric(LEVEL, cluster=cluster)(frame)
            assert (p["ci_low"], p["ci_high"]) == pytest.approx(
                (want["lower"], want["upper"]), rel=1e-12
            )
            assert p["ci_method"] == method and p.get("cluster") == cluster


def _loop_percentile(units: list[np.ndarray], mult: np.ndarray) -> list[float]:
    """Each resample materialised (unit ``i`` repeated ``w_i`` times), its pooled mean."""
    means = []
    for w in np.concatenate(list(resample_counts(mult, B, SEED))):
        pooled = [v for u, k in zip(units, w.astype(int)) for _ in range(k) for v in u]
        means.append(sum(pooled) / len(pooled))
    return np.quantile(means, [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


def test_bootstrap_equals_a_python_loop_over_materialised_resamples() -> None:
    f = _frame(seed=2)
    y = f.values
    ms = st.evaluate_scores(f, ["accuracy"], ci=LEVEL, num_bootstrap=B, seed=SEED)
    p = ms.get("Accuracy").parameters
    # the units are the distinct values (equal samples collapsed: the same distribution)
    levels = np.unique(y)
    centre = levels[levels.size // 2]
    uniq, mult, _ = collapse(np.column_stack([y - centre, np.ones_like(y)]))
    want = _loop_percentile([np.array([u[0] + centre]) for u in uniq], mult)
    assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert (p["ci_method"], p["num_bootstrap"], p["seed"]) == ("bootstrap", B, SEED)


def test_cluster_bootstrap_equals_a_python_loop_over_whole_clusters() -> None:
    f = _frame(seed=3)
    y, docs = f.values, f.column("doc")
    ms = st.evaluate_scores(f, ["mean"], ci=LEVEL, num_bootstrap=B, seed=SEED, cluster="doc")
    p = ms.get("Mean").parameters
    levels = np.unique(y)
    centre = levels[levels.size // 2]
    codes, keys = st.compute.factorize(docs)
    rows = np.column_stack([np.bincount(codes, weights=y - centre), np.bincount(codes)]).astype(
        float
    )
    uniq, mult, inv = collapse(rows)
    members = [y[codes == np.flatnonzero(inv == i)[0]] for i in range(len(uniq))]
    want = _loop_percentile(members, mult)
    assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert p["cluster"] == "doc"


def test_values_unchanged_undefined_intervals_and_bad_options() -> None:
    f = _frame(seed=4)
    plain = st.evaluate_scores(f, ["mean", "stderr", "accuracy"])
    with_ci = st.evaluate_scores(f, ["mean", "stderr", "accuracy"], ci=0.95)
    assert [m.value for m in plain] == [m.value for m in with_ci]
    assert "ci_low" not in with_ci.get("Stderr").parameters  # not a mean
    one = st.evaluate_scores(st.ScoreFrame.from_arrays([0.5]), ["mean"], ci=0.95, ci_method="t")
    p = one.get("Mean").parameters
    assert p["ci_low"] is None and "2 scores" in p["ci_undefined"]
    boot = st.evaluate_scores(st.ScoreFrame.from_arrays([0.5]), ["mean"], ci=0.95)
    assert boot.get("Mean").parameters["ci_undefined"]
    wide = st.evaluate_scores(
        st.ScoreFrame.from_arrays([0.0, 3.0, 5.0]), ["mean"], ci=0.9, ci_method="wilson"
    )
    assert wide.get("Mean").parameters["ci_method"] == "bootstrap"  # not a proportion
    with pytest.raises(InvalidInputError, match="ci"):
        st.evaluate_scores(f, ["mean"], ci=1.5)
    with pytest.raises(InvalidInputError, match="cluster"):
        st.ScoreEvaluator(["mean"], ci=0.9, cluster="")


def test_ci_metric_records_carry_the_one_spelling_of_every_domain() -> None:
    f = st.ScoreFrame.from_arrays(np.clip(_frame(seed=5).values, 0, 1))
    ms = st.evaluate_scores(
        f, [st.ci(0.9), st.ci(0.8, method="bootstrap", num_samples=50, seed=2), st.ci_wilson()]
    )
    t, boot = ms.filter("Ci")
    assert (
        t.parameters["ci_low"] == t.value["lower"] and t.parameters["ci_high"] == t.value["upper"]
    )
    assert (t.parameters["confidence_level"], t.parameters["ci_method"]) == (0.9, "t")
    q = boot.parameters
    assert (q["num_bootstrap"], q["seed"], q["ci_method"]) == (50, 2, "bootstrap")
    w = ms.get("CiWilson").parameters
    assert (w["ci_method"], w["confidence_level"]) == ("wilson", 0.95)
    assert w["ci_low"] == ms.get("CiWilson").value["lower"]
    # the factories' Inspect-style names (0.1 wrote them too) stay in the spec only
    for r in (t, boot, ms.get("CiWilson")):
        assert not {"level", "method", "num_samples"} & r.parameters.keys()
    assert st.ci(0.8, method="bootstrap", num_samples=50, seed=2).spec["params"]["level"] == 0.8


def test_an_undefined_ci_record_keeps_its_level_and_method() -> None:
    ms = st.evaluate_scores(st.ScoreFrame.from_arrays([1.0]), [st.ci(0.9)])
    (r,) = ms.filter("Ci")
    assert r.value is None and "requires at least 2" in r.parameters["undefined"]
    assert (r.parameters["confidence_level"], r.parameters["ci_method"]) == (0.9, "t")
    assert "ci_low" not in r.parameters and "level" not in r.parameters


def test_merge_and_state_keep_the_intervals() -> None:
    f = _frame(seed=6)
    kw = {"ci": 0.9, "num_bootstrap": 80, "seed": 1, "cluster": "doc"}
    one = st.ScoreEvaluator(["mean", st.grouped(st.accuracy(), "topic")], **kw).add(f).compute()
    a = st.ScoreEvaluator(["mean", st.grouped(st.accuracy(), "topic")], **kw).add(
        f.take(np.arange(15))
    )
    b = st.ScoreEvaluator(["mean", st.grouped(st.accuracy(), "topic")], **kw)
    b.add(f.take(np.arange(15, len(f))))
    merged = st.ScoreEvaluator.from_state(a.merge(b).state())
    assert merged.config() == a.config() and merged.config()["cluster"] == "doc"
    assert merged.compute().to_json() == one.to_json()
    with pytest.raises(InvalidInputError, match="configured differently"):
        a.merge(st.ScoreEvaluator(["mean", st.grouped(st.accuracy(), "topic")]))


def test_cli_ci(tmp_path) -> None:
    f = _frame(seed=7)
    rows = [
        {"sample_id": i, "value": float(v), "sample_metadata": {"doc": int(d)}}
        for i, (v, d) in enumerate(zip(f.values, f.column("doc")))
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["stats", "--scores", str(path), "--metric", "mean", "--ci", "0.9", "--cluster", "doc"]
    res = CliRunner().invoke(app, [*args, "--ci-method", "t"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)[0]["parameters"]
    want = st.evaluate_scores(f, ["mean"], ci=0.9, ci_method="t", cluster="doc").get("Mean")
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(
        (want.parameters["ci_low"], want.parameters["ci_high"]), rel=1e-12
    )
    res = CliRunner().invoke(app, [*args, "--num-bootstrap", "1"])
    assert res.exit_code == 2 and "--num-bootstrap" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["stats", "--scores", str(path), "--cluster", "doc"])
    assert res.exit_code == 2 and "--cluster" in res.output


def test_bca_equals_scipy_on_the_same_resamples() -> None:
    """Distinct values in ascending order (how the bootstrap numbers its units): both draw
    the same indices from the same seed."""
    rng = np.random.default_rng(11)
    y = np.sort(np.round(rng.exponential(1.0, 35), 6))  # skewed: BCa moves the ends
    assert len(np.unique(y)) == y.size
    ms = st.evaluate_scores(
        st.ScoreFrame.from_arrays(y),
        ["mean"],
        ci=LEVEL,
        ci_method="bca",
        num_bootstrap=B,
        seed=SEED,
    )
    p = ms.get("Mean").parameters
    res = sps.bootstrap(
        (y,),
        np.mean,
        n_resamples=B,
        confidence_level=LEVEL,
        method="BCa",
        rng=np.random.default_rng(SEED),
    )
    want = (res.confidence_interval.low, res.confidence_interval.high)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(want, rel=1e-10)
    assert (p["ci_method"], p["num_bootstrap"]) == ("bca", B)
    clustered = st.evaluate_scores(
        _frame(seed=9), ["mean"], ci=LEVEL, ci_method="bca", cluster="doc"
    )
    q = clustered.get("Mean").parameters
    assert q["ci_method"] == "bca" and q["ci_low"] < clustered.get("Mean").value < q["ci_high"]
