"""Classification intervals: the vectorised bootstrap equals a Python loop that runs
scikit-learn on each resample materialised as datums (same resample counts); Wilson and
DeLong as their kernels; seeded; and a fast coverage check of the ROC AUC bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from assay.classification import ClassificationEvaluator, evaluate_classification
from assay.classification.tally import count_units, score_units
from assay.classification.types import block_from_arrays
from assay.errors import InvalidInputError
from assay.uncertainty.closed_form import delong_interval, wilson
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 60, 5
TYPES = ["Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC"]


def _data(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    labels = [f"c{j}" for j in range(k)]
    y = rng.integers(0, k, n)
    raw = rng.random((n, k)) + 0.8 * (np.arange(k) == y[:, None])
    s = np.round(raw / raw.sum(axis=1, keepdims=True), 1)  # ties
    return np.array(labels)[y], s, labels


def _resampled_datums(inverse: np.ndarray, mult: np.ndarray) -> list[np.ndarray]:
    """Each resample as datum indices: ``w_u`` copies of a representative of unit ``u``."""
    rep = np.unique(inverse, return_index=True)[1]
    return [
        np.repeat(rep, w.astype(np.int64))
        for w in np.concatenate(list(resample_counts(mult, B, SEED)))
    ]


def _q(values: list[float]) -> list[float]:
    v = np.array(values, dtype=float)
    v = v[~np.isnan(v)]
    return np.quantile(v, [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


def _ci(ms, type_, **where) -> list[float]:
    p = ms.get(type_, **where).parameters
    return [p["ci_low"], p["ci_high"]]


@pytest.mark.parametrize("k", [2, 3])
def test_count_metrics_bootstrap_equals_sklearn_on_each_resample(k: int) -> None:
    y, s, labels = _data(80, k, seed=k)
    ms = ClassificationEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED, metrics=TYPES[:4])
    ms = ms.add_arrays(y, s, labels=labels).compute()
    block = block_from_arrays(y, s, labels=labels)
    *_, mult, inverse, _ = count_units(block, 0.0, hardmax=True)
    pred = np.array(labels)[s.argmax(axis=1)]
    loops: dict[tuple[str, str | None], list[float]] = {}
    for idx in _resampled_datums(inverse, mult):
        yt, yp = y[idx], pred[idx]
        loops.setdefault(("Accuracy", None), []).append(accuracy_score(yt, yp))
        for name, fn in (("Precision", precision_score), ("Recall", recall_score)):
            per = fn(yt, yp, labels=labels, average=None, zero_division=np.nan)
            for lab, v in zip(labels, per):
                loops.setdefault((name, lab), []).append(v)
        f1 = f1_score(yt, yp, labels=labels, average=None, zero_division=np.nan)
        for lab, v in zip(labels, f1):
            loops.setdefault(("F1", lab), []).append(v)
    for (name, lab), values in loops.items():
        where = {"score_threshold": 0.0} | ({"label_value": lab} if lab else {})
        assert _ci(ms, name, **where) == pytest.approx(_q(values), abs=1e-12), (name, lab)
        assert ms.get(name, **where).parameters["ci_method"] == "bootstrap"


@pytest.mark.parametrize("k", [2, 3, "binary"])
def test_roc_auc_bootstrap_equals_sklearn_on_each_resample(k: int | str) -> None:
    y, s, labels = _data(70, 2 if k == "binary" else int(k), seed=10 + len(str(k)))
    given = s[:, 1] if k == "binary" else s  # one score column: the binary form
    if k == "binary":
        s = np.column_stack([1 - s[:, 1], s[:, 1]])
    ms = ClassificationEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED, metrics=TYPES[4:])
    ms = ms.add_arrays(y, given, labels=labels).compute()
    *_, mult, inverse, _ = score_units(block_from_arrays(y, given, labels=labels))
    per_label: dict[str, list[float]] = {lab: [] for lab in labels}
    means = []
    for idx in _resampled_datums(inverse, mult):
        aucs = []
        for j, lab in enumerate(labels):
            truth = y[idx] == lab
            auc = roc_auc_score(truth, s[idx, j]) if 0 < truth.sum() < len(idx) else np.nan
            per_label[lab].append(auc)
            aucs.append(auc)
        means.append(np.nanmean(aucs))
    for lab in labels:
        assert _ci(ms, "ROCAUC", label_value=lab) == pytest.approx(_q(per_label[lab]), abs=1e-12)
    assert _ci(ms, "mROCAUC") == pytest.approx(_q(means), abs=1e-12)


def test_hardmax_false_bootstrap_equals_a_loop_over_label_problems() -> None:
    y, s, labels = _data(60, 3, seed=4)
    ev = ClassificationEvaluator(
        ci=LEVEL,
        num_bootstrap=B,
        seed=SEED,
        metrics=["Precision"],
        hardmax=False,
        score_thresholds=[0.3],
    )
    ms = ev.add_arrays(y, s, labels=labels).compute()
    *_, mult, inverse, _ = count_units(block_from_arrays(y, s, labels=labels), 0.3, hardmax=False)
    for j, lab in enumerate(labels):
        values = [
            precision_score(y[i] == lab, s[i, j] >= 0.3, zero_division=np.nan)
            for i in _resampled_datums(inverse, mult)
        ]
        got = _ci(ms, "Precision", label_value=lab, score_threshold=0.3)
        assert got == pytest.approx(_q(values), abs=1e-12)


def test_wilson_and_delong_methods() -> None:
    y, s, labels = _data(90, 2, seed=8)
    ms = evaluate_classification_arrays(y, s, labels, ci=0.95, ci_method="wilson")
    pred = np.array(labels)[s.argmax(axis=1)]
    acc = ms.get("Accuracy")
    assert acc.parameters["ci_method"] == "wilson"
    lo, hi = wilson((pred == y).sum(), len(y), 0.95)
    assert _ci(ms, "Accuracy") == pytest.approx([lo, hi])
    tp = ((pred == "c1") & (y == "c1")).sum()
    lo, hi = wilson(tp, (pred == "c1").sum(), 0.95)
    assert _ci(ms, "Precision", label_value="c1") == pytest.approx([lo, hi])
    assert ms.get("F1", label_value="c1").parameters["ci_method"] == "bootstrap"
    ms = evaluate_classification_arrays(y, s, labels, ci=0.95, ci_method="delong")
    pos, neg = np.sort(s[y == "c1", 1]), np.sort(s[y != "c1", 1])
    assert _ci(ms, "ROCAUC", label_value="c1") == pytest.approx(delong_interval(pos, neg, 0.95))
    assert ms.get("ROCAUC", label_value="c1").parameters["ci_method"] == "delong"


def evaluate_classification_arrays(y, s, labels, **opts):
    return ClassificationEvaluator(metrics=TYPES, **opts).add_arrays(y, s, labels=labels).compute()


def test_seeded_and_off_by_default() -> None:
    y, s, labels = _data(50, 2, seed=1)
    a = evaluate_classification_arrays(y, s, labels, ci=0.9, seed=3)
    b = evaluate_classification_arrays(y, s, labels, ci=0.9, seed=3)
    c = evaluate_classification_arrays(y, s, labels, ci=0.9, seed=4)
    assert a.to_json() == b.to_json() != c.to_json()
    plain = evaluate_classification_arrays(y, s, labels)
    assert not any("ci_low" in m.parameters for m in plain)
    assert [m.value for m in a] == [m.value for m in plain]  # the value is unchanged
    p = a.get("ROCAUC", label_value="c0").parameters
    assert (p["confidence_level"], p["num_bootstrap"], p["seed"]) == (0.9, 1000, 3)


def test_one_call_and_bad_options() -> None:
    ms = evaluate_classification(
        [{"uid": str(i), "value": "ab"[i % 2]} for i in range(20)],
        [{"uid": str(i), "value": "ab"[i % 3 % 2], "score": 0.9} for i in range(20)],
        ci=0.8,
        num_bootstrap=50,
    )
    assert ms.get("Accuracy", score_threshold=0.0).parameters["ci_low"] is not None
    with pytest.raises(InvalidInputError, match="ci_method"):
        ClassificationEvaluator(ci=0.9, ci_method="exact")


def test_roc_auc_bootstrap_coverage() -> None:
    """Seeded: 95% bootstrap intervals of a binormal AUC cover 93-97% of 300 datasets."""
    from scipy.stats import norm

    rng = np.random.default_rng(11)
    truth, hits, reps = norm.cdf(1.0 / np.sqrt(2.0)), 0, 300
    for r in range(reps):
        y = rng.random(150) < 0.4
        score = rng.normal(y.astype(float), 1.0)
        ev = ClassificationEvaluator(ci=0.95, num_bootstrap=400, seed=r, metrics=["ROCAUC"])
        p = ev.add_arrays(np.where(y, "p", "n"), 1 / (1 + np.exp(-score)), labels=["n", "p"])
        p = p.compute().get("ROCAUC", label_value="p").parameters
        hits += p["ci_low"] <= truth <= p["ci_high"]
    assert 0.93 <= hits / reps <= 0.97, hits / reps


def test_cli_ci_options(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    y, s, labels = _data(60, 2, seed=2)
    path = tmp_path / "d.csv"
    path.write_text("y,s\n" + "".join(f"{a},{b}\n" for a, b in zip(y, s[:, 1])))
    base = ["classification", "--data", str(path), "--y-true", "y", "--y-score", "s"]
    base += ["--positive-label", "c1", "--metrics", "ROCAUC,Accuracy"]
    r = CliRunner().invoke(app, [*base, "--ci", "0.9", "--ci-method", "delong", "--seed", "4"])
    assert r.exit_code == 0, r.output
    got = {(d["type"], d["parameters"].get("label_value")): d for d in json.loads(r.stdout)}
    want = evaluate_classification_arrays(
        y, np.column_stack([1 - s[:, 1], s[:, 1]]), labels, ci=0.9, ci_method="delong", seed=4
    )
    auc = want.get("ROCAUC", label_value="c1").parameters
    assert got[("ROCAUC", "c1")]["parameters"]["ci_low"] == pytest.approx(auc["ci_low"])
    assert got[("Accuracy", None)]["parameters"]["seed"] == 4
    r = CliRunner().invoke(app, [*base, "--ci", "0.9", "--ci-method", "exact"])
    assert r.exit_code == 2 and "--ci-method" in r.output and "Traceback" not in r.output


def _members_draw(unit: np.ndarray, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A datum-level resample with these class counts: ``w_c`` datums drawn uniformly with
    replacement among the members of class ``c`` (any such draw is the per-datum bootstrap
    given the class counts)."""
    members = [np.flatnonzero(unit == c) for c in range(len(w))]
    return np.concatenate([rng.choice(m, int(k)) for m, k in zip(members, w) if k])


@pytest.mark.parametrize("decimals", [None, 2, 1])
@pytest.mark.parametrize("scheme", ["balls", "multinomial", "poisson"])
def test_binary_auc_classes_are_exact_for_any_datums_drawn(decimals, scheme) -> None:
    """The binary ROC AUC collapses runs of one label into classes; every resample's AUC
    equals scikit-learn's on datums drawn at random inside the classes (continuous, and
    rounded scores with ties across the labels), under each exact draw scheme."""
    from assay.classification.auc_units import auc, binary_units

    rng = np.random.default_rng(3)
    y = rng.random(200) < 0.4
    s = 1 / (1 + np.exp(-rng.normal(y.astype(float), 1.0)))
    s = s if decimals is None else np.round(s, decimals)
    plan, mult, unit, _ = binary_units(s, y, np.ones(200, np.int64), np.zeros(200, bool))
    assert mult.size < 200 and mult.sum() == 200
    w = np.concatenate(list(resample_counts(mult, 40, seed=1, scheme=scheme)))
    got = auc(w, plan)
    for row, value in zip(w, got):
        idx = _members_draw(unit, row, rng)
        assert value == pytest.approx(roc_auc_score(y[idx], s[idx]), abs=1e-12)


def test_binary_auc_interval_equals_sklearn_on_member_draws() -> None:
    """The evaluator's interval (continuous scores, so nearly every datum its own score)
    equals the percentile interval of scikit-learn on datum-level resamples drawn inside
    the classes with the evaluator's counts."""
    rng = np.random.default_rng(8)
    y = np.where(rng.random(120) < 0.5, "p", "n")
    s = rng.random(120) * 0.5 + 0.3 * (y == "p")
    ev = ClassificationEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED, metrics=["ROCAUC"])
    ms = ev.add_arrays(y, s, labels=["n", "p"]).compute()
    _, mult, unit, _ = score_units(block_from_arrays(y, s, labels=["n", "p"]))
    values = [
        roc_auc_score(y[i] == "p", s[i])
        for i in (
            _members_draw(unit, w, rng)
            for w in np.concatenate(list(resample_counts(mult, B, SEED)))
        )
    ]
    for lab in ("n", "p"):
        assert _ci(ms, "ROCAUC", label_value=lab) == pytest.approx(_q(values), abs=1e-12)


def test_compact_form_intervals_equal_the_plain_form() -> None:
    """A compact evaluator (counts of distinct datums) resamples the datums it stands for:
    the same intervals as the plain form."""
    y, s, labels = _data(90, 2, seed=6)
    plain = evaluate_classification_arrays(y, s, labels, ci=0.9, num_bootstrap=80, seed=2)
    ev = ClassificationEvaluator(
        metrics=TYPES, ci=0.9, num_bootstrap=80, seed=2, compact=True, pr_curve_max_examples=0
    )
    compact = ev.add_arrays(y, s, labels=labels).compute()
    for a, b in zip(plain, compact):
        assert a.type == b.type and a.parameters == pytest.approx(b.parameters, abs=1e-12)


@pytest.mark.parametrize("form", ["binary", "dense"])
def test_cluster_bootstrap_equals_a_loop_over_drawn_clusters(form: str) -> None:
    """``cluster="site"``: each resample draws the sites with replacement and keeps every
    datum of a drawn site as often as the site was drawn; scikit-learn on each materialised
    resample gives the same percentile intervals. Wilson and DeLong give way to it."""
    k = 2 if form == "binary" else 3
    y, s, labels = _data(90, k, seed=21)
    s = np.clip(s + np.random.default_rng(1).random(s.shape) * 1e-3, 0, 1)  # mostly distinct
    sites = np.array([f"s{i % 7}" for i in range(90)])
    md = [{"site": v} for v in sites]
    given = s[:, 1] if form == "binary" else s
    if form == "binary":
        s = np.column_stack([1 - s[:, 1], s[:, 1]])
    for method in ("bootstrap", "wilson", "delong"):
        ev = ClassificationEvaluator(
            ci=LEVEL, num_bootstrap=B, seed=SEED, metrics=TYPES, cluster="site", ci_method=method
        )
        ms = ev.add_arrays(y, given, labels=labels, metadata=md).compute()
        for m in ms:
            if "ci_low" in m.parameters:
                assert (
                    m.parameters["ci_method"] == "bootstrap" and m.parameters["cluster"] == "site"
                )
    names = sorted(set(sites))
    pred = np.array(labels)[s.argmax(axis=1)]
    loops: dict[tuple[str, str | None], list[float]] = {}
    for w in np.concatenate(list(resample_counts(np.ones(len(names), np.int64), B, SEED))):
        idx = np.concatenate(
            [np.flatnonzero(sites == g) for g, c in zip(names, w) for _ in range(int(c))]
        )
        loops.setdefault(("Accuracy", None), []).append(accuracy_score(y[idx], pred[idx]))
        f1 = f1_score(y[idx], pred[idx], labels=labels, average=None, zero_division=np.nan)
        aucs = []
        for j, lab in enumerate(labels):
            loops.setdefault(("F1", lab), []).append(f1[j])
            truth = y[idx] == lab
            auc = roc_auc_score(truth, s[idx, j]) if 0 < truth.sum() < len(idx) else np.nan
            loops.setdefault(("ROCAUC", lab), []).append(auc)
            aucs.append(auc)
        loops.setdefault(("mROCAUC", None), []).append(np.nanmean(aucs))
    for (name, lab), values in loops.items():
        where = {"label_value": lab} if lab else {}
        if name in ("Accuracy", "F1"):
            where["score_threshold"] = 0.0
        assert _ci(ms, name, **where) == pytest.approx(_q(values), abs=1e-12), (name, lab)


def test_cluster_needs_ci_and_a_complete_field() -> None:
    y, s, labels = _data(20, 2, seed=1)
    with pytest.raises(InvalidInputError, match="cluster"):
        ClassificationEvaluator(cluster="site")
    ev = ClassificationEvaluator(ci=0.9, cluster="site", metrics=["Accuracy"])
    md = [{"site": "a"} if i % 2 else {} for i in range(20)]
    with pytest.raises(InvalidInputError, match="10 of the datums"):
        ev.add_arrays(y, s, labels=labels, metadata=md).compute()
    with pytest.raises(InvalidInputError, match="not a metadata field"):
        ClassificationEvaluator(ci=0.9, cluster="zone").add_arrays(y, s, labels=labels).compute()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.booleans(), st.booleans(), st.integers(0, 3)),
        min_size=2,
        max_size=40,
    )
)
def test_any_datum_weights_summed_into_classes_give_the_weighted_auc(rows) -> None:
    """Property: for any datum-level counts (a resample), summing them into the classes of
    :func:`binary_units` gives scikit-learn's weighted AUC of the datums, for the whole set
    and for the slice (the mask is part of the class)."""
    from assay.classification.auc_units import auc, binary_units

    s = np.array([r[0] / 6 for r in rows])
    y, inside = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    wd = np.array([r[3] for r in rows], dtype=float)
    plan, mult, unit, flag = binary_units(s, y, np.ones(len(rows), np.int64), inside)
    assert (np.bincount(unit, minlength=mult.size) == mult).all()
    assert (flag[unit] == inside).all()
    w = np.bincount(unit, weights=wd, minlength=mult.size)[None, :]
    for mask, cells in ((np.ones_like(inside), np.ones_like(flag)), (inside, flag)):
        ww = wd * mask
        got = float(auc(w * cells, plan)[0])
        if ww[y].sum() == 0 or ww[~y].sum() == 0:
            assert np.isnan(got)
        else:
            assert got == pytest.approx(roc_auc_score(y, s, sample_weight=ww), abs=1e-12)


def test_binary_form_delong_of_both_labels_equals_each_computed_alone() -> None:
    """One score column: the other label's DeLong interval (computed once, mirrored) is the
    interval of its own scores 1 - s against the rest."""
    rng = np.random.default_rng(2)
    y = np.where(rng.random(300) < 0.4, "p", "n")
    s = np.round(rng.random(300) * 0.6 + 0.3 * (y == "p"), 2)  # ties
    ev = ClassificationEvaluator(metrics=["ROCAUC"], ci=0.9, ci_method="delong")
    ms = ev.add_arrays(y, s, labels=["n", "p"]).compute()
    for lab, score in (("p", s), ("n", 1 - s)):
        pos, neg = np.sort(score[y == lab]), np.sort(score[y != lab])
        want = delong_interval(pos, neg, 0.9)
        assert _ci(ms, "ROCAUC", label_value=lab) == pytest.approx(want, abs=1e-12), lab


def test_cli_cluster_reads_the_column_and_records_it(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    y, s, labels = _data(60, 2, seed=3)
    sites = [f"s{i % 4}" for i in range(60)]
    path = tmp_path / "d.csv"
    rows = "".join(f"{a},{b},{c}\n" for a, b, c in zip(y, s[:, 1], sites))
    path.write_text("y,s,site\n" + rows)
    base = ["classification", "--data", str(path), "--y-true", "y", "--y-score", "s"]
    base += ["--positive-label", "c1", "--metrics", "ROCAUC,Accuracy", "--num-bootstrap", "40"]
    r = CliRunner().invoke(app, [*base, "--ci", "0.9", "--cluster", "site"])
    assert r.exit_code == 0, r.output
    got = {(d["type"], d["parameters"].get("label_value")): d for d in json.loads(r.stdout)}
    md = [{"site": v} for v in sites]
    ev = ClassificationEvaluator(
        metrics=["ROCAUC", "Accuracy"], ci=0.9, num_bootstrap=40, cluster="site"
    )
    want = ev.add_arrays(y, s[:, 1], labels=labels, metadata=md).compute()
    p = got[("ROCAUC", "c1")]["parameters"]
    assert p["cluster"] == "site"
    assert p["ci_low"] == pytest.approx(want.get("ROCAUC", label_value="c1").parameters["ci_low"])
    r = CliRunner().invoke(app, [*base, "--cluster", "site"])
    assert r.exit_code == 2 and "--cluster" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_classes_without_cross_ties_are_the_runs_of_one_label(weighted) -> None:
    """Without a slice and without a tie across the labels the classes are read off as runs
    (no keys); they equal the keyed classes (forced by a slice holding every datum)."""
    from assay.classification.auc_units import binary_units

    rng = np.random.default_rng(11)
    y = rng.random(500) < 0.3
    s = np.round(rng.random(500) * 0.7 + 0.3 * y, 3)
    s[y] = np.where(np.isin(s[y], s[~y]), s[y] + 1e-4, s[y])  # ties inside one label only
    assert not np.isin(s[y], s[~y]).any() and np.unique(s).size < 500
    w = rng.integers(1, 4, 500) if weighted else np.ones(500, np.int64)
    runs = binary_units(s, y, w, np.zeros(500, bool))
    keyed = binary_units(s, y, w, np.ones(500, bool))
    assert runs[0] == keyed[0] and runs[0].block == 16
    np.testing.assert_array_equal(runs[1], keyed[1])
    np.testing.assert_array_equal(runs[2], keyed[2])
    assert not runs[3].any() and keyed[3][keyed[1] > 0].all()
