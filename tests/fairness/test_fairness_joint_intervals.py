"""Fairness intervals drawn from classes of interchangeable datums: the mean over privileged-
group definitions and everything with sample weights (records, slices and gaps, clusters).

Each interval equals a naive loop that draws the same multinomial counts over the classes
(rows equal in outcome, privileged bit under every definition, group in every group column
and weight; sorted by those columns), materialises every resample as rows (each class's
representative row copied as often as drawn, with its weight) and runs the point-estimate
evaluator on them; one resample's materialised rows are checked against fairlearn's
MetricFrame with ``sample_weight``; seeds, merge and state (the classes of any batching
add up to one batch's), an old state, the CLI.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame
from fairlearnkit import AGGREGATES, RATES
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.fairness import FairnessEvaluator, PrivilegedGroup
from assay.fairness.tally import mapped, stacked, transposed
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 30, 3
GROUPS = ["sex=F", "age:40:invert"]
CONFIG = {"groups": GROUPS, "group_columns": ["race"]}
WHERE = ("group_column", "group", "privileged", "average_over", "method", "agg", "slice")


def _df(n: int = 300, seed: int = 0, grid: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    w = rng.choice([0.5, 1.0, 2.25, 3.0], n) if grid else rng.uniform(0.1, 3.0, n)
    return pd.DataFrame({
        "y": y, "yhat": np.where(rng.random(n) < 0.75, y, 1 - y), "w": w,
        "sex": rng.choice(["F", "M"], n), "age": rng.integers(20, 60, n),
        "race": rng.choice(["a", "b", "c"], n), "site": rng.choice(["x", "y"], n),
    })  # fmt: skip


def _classes(df: pd.DataFrame, weighted: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each class's representative row and its datums, classes sorted by (outcome, bits,
    group code among the rows' own sorted groups, weight)."""
    outcome = 2 * (df["yhat"].to_numpy() != 1) + (df["y"].to_numpy() != 1)
    bits = [PrivilegedGroup.coerce(g) for g in GROUPS]
    masks = [
        np.isin(df[g.group_column].astype(str), g.values)
        if g.values
        else g.privileged(df[g.group_column].to_numpy())
        for g in bits
    ]
    code = np.unique(df["race"].to_numpy(), return_inverse=True)[1]
    w = df["w"].to_numpy(float) if weighted else np.ones(len(df))
    keys = np.column_stack([outcome, *masks, code, w.view(np.int64)]).astype(np.int64)
    _, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    return first, counts


def _key(m) -> tuple:
    return (m.type, *(json.dumps(m.parameters.get(k)) for k in WHERE))


def _values(df: pd.DataFrame, weighted: bool, **kw) -> dict[tuple, float]:
    """Every number record by key; with ``by``, per slice record its gap under ``("gap",
    ...)`` too."""
    ev = FairnessEvaluator(**CONFIG, **kw)
    ms = ev.add(df, label="y", prediction="yhat", sample_weight="w" if weighted else None)
    out = {_key(m): np.nan if m.value is None else float(m.value) for m in ms.compute()
           if not isinstance(m.value, dict)}  # fmt: skip
    for key in [k for k in out if k[-1] != "null"]:
        out[("gap", *key)] = out[key] - out.get((*key[:-1], "null"), np.nan)
    return out


def _q(values: list[float]) -> list[float]:
    v = np.asarray(values, dtype=float)
    return np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


def _loop(df: pd.DataFrame, weighted: bool) -> dict[tuple, list[float]]:
    first, counts = _classes(df, weighted)
    out: dict[tuple, list[float]] = {}
    for k in np.concatenate(list(resample_counts(counts, B, SEED))):
        rows = df.iloc[np.repeat(first, k.astype(int))]
        for key, v in _values(rows, weighted).items():
            out.setdefault(key, []).append(v)
    return out


def _check(ms, loops: dict[tuple, list[float]], only_means: bool = False) -> int:
    n = 0
    for m in ms:
        p = m.parameters
        if p.get("ci_low") is None or "slice" in p or (only_means and "average_over" not in p):
            continue
        assert p["ci_method"] == "bootstrap" and p["seed"] == SEED
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(_q(loops[_key(m)]), abs=1e-12), m
        n += 1
    return n


@pytest.mark.parametrize("weighted", [False, True])
def test_intervals_equal_a_loop_over_materialised_classes(weighted: bool) -> None:
    df = _df()
    ev = FairnessEvaluator(**CONFIG, ci=LEVEL, num_bootstrap=B, seed=SEED)
    ms = ev.add(df, label="y", prediction="yhat", sample_weight="w" if weighted else None)
    ms = ms.compute()
    means = [m for m in ms if "average_over" in m.parameters and m.value is not None]
    assert len(means) == 4 and all(m.parameters["ci_low"] is not None for m in means)
    # without weights only the mean is drawn from the classes (the rest: each family's cells)
    checked = _check(ms, _loop(df, weighted), only_means=not weighted)
    assert checked >= (4 + 8 + 12 + 4 + 3 if weighted else 4), checked


def test_weighted_slice_and_gap_intervals_equal_a_loop() -> None:
    """A slice's records draw the slice's classes; its gaps draw the slice's classes (keyed by
    the slice's groups) then the other rows' (keyed by the whole set's), jointly."""
    df = _df(seed=1)
    kw = {"ci": LEVEL, "num_bootstrap": B, "seed": SEED}
    ms = (
        FairnessEvaluator(**CONFIG, by=["site"], **kw)
        .add(df, label="y", prediction="yhat", sample_weight="w")
        .compute()
    )
    inside = (df["site"] == "x").to_numpy()
    part, rest = df[inside], df[~inside]
    own = _loop(part, True)
    (fs, cs), (fr, cr) = _classes(part, True), _classes(rest, True)
    gaps: dict[tuple, list[float]] = {}
    for k in np.concatenate(list(resample_counts(np.concatenate([cs, cr]), B, SEED))):
        s = part.iloc[np.repeat(fs, k[: len(cs)].astype(int))]
        r = rest.iloc[np.repeat(fr, k[len(cs) :].astype(int))]
        mine, whole = _values(s, True), _values(pd.concat([s, r]), True)
        for key, v in mine.items():
            gaps.setdefault(key, []).append(v - whole.get(key, np.nan))
    n = 0
    for m in ms.filter(slice="x"):
        p, key = m.parameters, _key(m)[:-1] + ("null",)
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(_q(own[key]), abs=1e-12)
        assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(_q(gaps[key]), abs=1e-12)
        n += 1
    assert n == 12, n


@pytest.mark.parametrize("weighted", [False, True])
def test_cluster_intervals_with_weights_and_the_mean(weighted: bool) -> None:
    """Whole clusters drawn: every interval (the mean's too) and, with ``by``, each slice's
    own and gap intervals, with the weights' sums drawn per cluster."""
    df = _df(seed=2)
    df["pid"] = np.repeat([f"p{i:02d}" for i in range(20)], 15)
    kw = {"ci": LEVEL, "num_bootstrap": B, "seed": SEED, "cluster": "pid"}
    sw = "w" if weighted else None
    ev = FairnessEvaluator(**CONFIG, by=["site"], **kw)
    ms = ev.add(df, label="y", prediction="yhat", sample_weight=sw).compute()
    names = sorted(df["pid"].unique())
    loops: dict[tuple, list[float]] = {}
    for k in np.concatenate(list(resample_counts(np.ones(len(names), np.int64), B, SEED))):
        idx = np.concatenate(
            [np.flatnonzero(df["pid"] == g).repeat(c) for g, c in zip(names, k.astype(int))]
        )
        for key, v in _values(df.iloc[np.sort(idx)], weighted, by=["site"]).items():
            loops.setdefault(key, []).append(v)
    assert _check(ms, loops) >= 31
    gaps = 0
    for m in ms:
        p = m.parameters
        if "slice" in p and p.get("ci_low") is not None:
            assert [p["ci_low"], p["ci_high"]] == pytest.approx(_q(loops[_key(m)]), abs=1e-12)
            want = _q(loops[("gap", *_key(m))])
            assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12)
            gaps += 1
    assert gaps == 24, gaps


def test_one_resample_against_fairlearn_with_sample_weight() -> None:
    """The per-group rates and aggregates assay computes from one resample's class counts
    equal fairlearn's MetricFrame (``sample_weight``) on that resample's materialised rows."""
    df = _df(seed=4, grid=False)  # continuous weights: the classes are the datums
    ev = FairnessEvaluator(**CONFIG, ci=LEVEL, num_bootstrap=B, seed=SEED)
    ev.add(df, label="y", prediction="yhat", sample_weight="w")
    tally = ev.stats()
    assert tally.units is not None and len(tally.units.counts) == len(df)
    first, counts = _classes(df, True)
    k = next(iter(resample_counts(counts, B, SEED)))[0]
    rows = df.iloc[np.repeat(first, k.astype(int))]
    fams = tally.families
    flat = mapped(transposed(stacked(fams, tally.units)), k[None, :])[0]
    at = sum(f.width for f in fams[:3])  # two definitions and their mean, then the table
    got = {_key(m): m.value for m in fams[3].rebuilt(flat[at : at + fams[3].width])}
    sw = rows["w"].to_numpy()
    mf = MetricFrame(metrics=RATES, y_true=rows["y"], y_pred=rows["yhat"],
                     sensitive_features=rows["race"],
                     sample_params={n: {"sample_weight": sw} for n in RATES})  # fmt: skip
    n = 0
    for (name, grp), v in mf.by_group.stack().items():
        m = [x for x in fams[3].records if x.type == grp and x.parameters.get("group") == name]
        assert got[_key(m[0])] == pytest.approx(v, abs=1e-12), (name, grp)
        n += 1
    for name, fn in AGGREGATES.items():
        want = fn(rows["y"], rows["yhat"], sensitive_features=rows["race"], sample_weight=sw)
        m = [x for x in fams[3].records if x.type == name]
        assert got[_key(m[0])] == pytest.approx(want, abs=1e-12), name
        n += 1
    assert n == 16


def test_seeded_merge_and_state() -> None:
    df = _df(seed=5, grid=False)
    kw = {"ci": 0.95, "num_bootstrap": 25, "seed": 1, "by": ["site"]}

    def run(part: pd.DataFrame, **extra) -> FairnessEvaluator:
        ev = FairnessEvaluator(**CONFIG, **{**kw, **extra})
        return ev.add(part, label="y", prediction="yhat", sample_weight="w")

    one = run(df).compute()
    assert one.to_json() == run(df).compute().to_json()
    assert one.to_json() != run(df, seed=2).compute().to_json()
    a, b = run(df.iloc[:120]), run(df.iloc[120:])
    merged = FairnessEvaluator.from_state(b.merge(FairnessEvaluator.from_state(a.state())).state())
    for x, y in zip(one, merged.compute()):
        assert x.type == y.type and x.parameters.keys() == y.parameters.keys()
        for k in ("ci_low", "ci_high", "gap_ci_low", "gap_ci_high"):
            if x.parameters.get(k) is not None:
                assert y.parameters[k] == pytest.approx(x.parameters[k], abs=1e-12), (x, k)


def test_a_state_without_classes_says_why_not() -> None:
    """A state saved before the classes were kept: the records that need them say why they
    have no interval; the others keep theirs."""
    df = _df(seed=6)
    ev = FairnessEvaluator(**CONFIG, ci=LEVEL, num_bootstrap=B, seed=SEED)
    ev.add(df, label="y", prediction="yhat")
    old = {k: v for k, v in ev.state().items() if not k.startswith("units.")}
    ms = FairnessEvaluator.from_state(old).compute()
    mean = [m for m in ms if "average_over" in m.parameters and m.value is not None]
    assert mean and all("older version" in m.parameters["ci_undefined"] for m in mean)
    spd = ms.filter("StatisticalParityDifference")[0].parameters
    assert (
        spd["ci_low"] == ev.compute().filter("StatisticalParityDifference")[0].parameters["ci_low"]
    )
    # merged with a new evaluator either way: no interval from part of the data
    for a, b in ((ev, FairnessEvaluator.from_state(old)), (FairnessEvaluator.from_state(old), ev)):
        merged = FairnessEvaluator.from_state(a.state()).merge(b).compute()
        mean = [m for m in merged if "average_over" in m.parameters and m.value is not None]
        assert mean and all("older version" in m.parameters["ci_undefined"] for m in mean)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=4), st.booleans())
def test_property_classes_of_batches_add_up_to_one_batch(cuts: list[int], weighted: bool) -> None:
    df = _df(n=120, seed=sum(cuts), grid=False)
    sw = "w" if weighted else None
    whole = FairnessEvaluator(**CONFIG, ci=LEVEL).add(
        df, label="y", prediction="yhat", sample_weight=sw
    )
    parts, at = [], 0
    for c in [*cuts, len(df)]:
        if at < len(df):
            part = FairnessEvaluator(**CONFIG, ci=LEVEL)
            parts.append(
                part.add(df.iloc[at : at + c], label="y", prediction="yhat", sample_weight=sw)
            )
            at += c
    merged = parts[-1]
    for p in parts[-2::-1]:
        merged.merge(FairnessEvaluator.from_state(p.state()))
    a, b = whole.stats().units, merged.stats().units
    assert a is not None and b is not None and int(a.counts.sum()) == len(df)
    assert [x.tolist() for x in a.names] == [x.tolist() for x in b.names]
    assert a.keys.tolist() == b.keys.tolist() and a.counts.tolist() == b.counts.tolist()
    assert a.weights.tolist() == b.weights.tolist()


def test_cli_weights_and_the_mean_with_ci(tmp_path) -> None:
    from typer.testing import CliRunner

    from assay.cli.main import app
    from assay.fairness import evaluate_fairness

    df = _df(seed=7)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    args = ["fairness", "--data", str(path), "--label", "y", "--prediction", "yhat",
            "--sensitive", "sex=F", "--sensitive", "age:40:invert", "--group", "race",
            "--sample-weight", "w", "--ci", "0.9", "--num-bootstrap", "25"]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    got = [x for x in json.loads(r.stdout) if "average_over" in x["parameters"]]
    want = evaluate_fairness(df, label="y", prediction="yhat", groups=GROUPS,
                             group_columns=["race"], sample_weight="w", ci=0.9,
                             num_bootstrap=25)  # fmt: skip
    means = [m for m in want if "average_over" in m.parameters]
    assert len(got) == len(means) == 4
    for x, m in zip(got, means):
        assert x["parameters"]["ci_low"] == m.parameters["ci_low"] is not None
