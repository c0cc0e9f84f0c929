"""Slices (``by``): each slice's records equal evaluating that subgroup alone (the evaluator's
own filter, and a fresh evaluator given only those datums); gaps; merge of sliced
evaluators equals one; too-small slices are undefined with the reason; bad columns."""

from __future__ import annotations

import numpy as np
import pytest

from assay.classification import ClassificationEvaluator
from assay.errors import InvalidInputError

TYPES = ["Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC"]


def _data(n: int = 90, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    raw = rng.random((n, 3)) + 0.7 * (np.arange(3) == y[:, None])
    s = np.round(raw / raw.sum(axis=1, keepdims=True), 2)
    site = rng.choice(["north", "south", "west"], n)
    md = [{"site": str(x), "cam": int(c)} for x, c in zip(site, rng.integers(1, 3, n))]
    return np.array(["a", "b", "c"])[y], s, md


def _ev(y, s, md, **kw):
    return ClassificationEvaluator(metrics=TYPES, **kw).add_arrays(
        y, s, labels=["a", "b", "c"], metadata=md
    )


def _where(m) -> dict:
    keep = ("label_value", "score_threshold")
    return {k: m.parameters[k] for k in keep if k in m.parameters}


@pytest.mark.parametrize("column", ["site", "cam"])
def test_slices_equal_the_subgroup_evaluated_alone(column: str) -> None:
    y, s, md = _data()
    ev = _ev(y, s, md, by=[column])
    ms = ev.compute()
    whole = _ev(y, s, md).compute()
    values = sorted({str(d[column]) for d in md})
    for v in values:
        rows = [i for i, d in enumerate(md) if str(d[column]) == v]
        alone = _ev(y[rows], s[rows], [md[i] for i in rows]).compute()
        got = ms.filter(slice_column=column, slice=v)
        assert len(got) == len(alone) > 0
        for m in alone:
            sl = got.get(m.type, **_where(m))
            assert sl.value == m.value and sl.parameters["n"] == len(rows)
            ref = whole.get(m.type, **_where(m)).value
            gap = sl.parameters["gap"]
            assert gap == (None if m.value is None or ref is None else m.value - ref)
    # the whole set's records are there unchanged
    assert [m for m in ms if "slice" not in m.parameters] == list(whole)


def test_slice_too_small_is_undefined_with_reason() -> None:
    y, s, md = _data()
    md[0] = {"site": "tiny", "cam": 1}
    ms = _ev(y, s, md, by=["site"]).compute().filter(slice="tiny")
    auc = ms.get("ROCAUC", label_value=y[0])
    assert auc.value is None and "positive and negative" in auc.parameters["undefined"]
    assert auc.parameters["gap"] is None and auc.parameters["n"] == 1


def test_merge_state_and_ci_slices() -> None:
    y, s, md = _data(seed=1)
    kw = {"by": ["site"], "ci": 0.9, "num_bootstrap": 30}
    one = _ev(y, s, md, **kw).compute()
    a = _ev(y[:40], s[:40], md[:40], **kw)
    b = _ev(y[40:], s[40:], md[40:], **kw)
    merged = ClassificationEvaluator.from_state(a.merge(b).state()).compute()
    assert merged.to_json() == one.to_json()
    sl = one.get("Accuracy", slice="north", score_threshold=0.0).parameters
    assert sl["ci_low"] <= one.get("Accuracy", slice="north").value <= sl["ci_high"]


def test_by_a_missing_column_names_it() -> None:
    y, s, md = _data()
    with pytest.raises(InvalidInputError, match="by.*zone"):
        _ev(y, s, md, by=["zone"]).compute()
    with pytest.raises(InvalidInputError, match="by"):
        ClassificationEvaluator(by="site")


def test_cli_by(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    y, s, md = _data(seed=2)
    path = tmp_path / "d.csv"
    lines = ["truth,a,b,c,site"] + [
        f"{t},{r[0]},{r[1]},{r[2]},{d['site']}" for t, r, d in zip(y, s, md)
    ]
    path.write_text("\n".join(lines) + "\n")
    args = ["classification", "--data", str(path), "--y-true", "truth"]
    args += ["--y-score-columns", "a,b,c", "--metrics", "Accuracy", "--by", "site"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    got = {d["parameters"].get("slice"): d for d in json.loads(r.stdout)}
    ms = _ev(y, s, md, by=["site"]).compute()
    for v in ("north", "south", "west"):
        want = ms.get("Accuracy", slice=v)
        assert (
            got[v]["value"] == want.value and got[v]["parameters"]["gap"] == want.parameters["gap"]
        )
    r = CliRunner().invoke(app, [*args[:-1], "zone"])
    assert r.exit_code == 2 and "zone" in r.output and "Traceback" not in r.output


def test_gap_interval_equals_a_loop_over_joint_resamples() -> None:
    """Each resample draws from all datums; the slice's and the whole set's values come from
    the same draw (scikit-learn on the materialised resample) and their difference gives the
    gap's percentile interval."""
    from sklearn.metrics import accuracy_score, roc_auc_score

    from assay.classification.tally import count_units, score_units
    from assay.classification.types import block_from_arrays
    from assay.uncertainty.resampling import resample_counts

    y, s, md = _data(n=80, seed=5)
    level, b, seed = 0.9, 30, 2
    ms = _ev(y, s, md, by=["site"], ci=level, num_bootstrap=b, seed=seed).compute()
    block = block_from_arrays(y, s, labels=["a", "b", "c"])
    keep = np.array([d["site"] == "north" for d in md])
    pred = np.array(["a", "b", "c"])[s.argmax(axis=1)]
    for what, units in (("Accuracy", count_units(block, 0.0, True, keep)),
                        ("ROCAUC", score_units(block, keep))):  # fmt: skip
        *_, mult, inverse, _ = units
        rep = np.unique(inverse, return_index=True)[1]
        gaps = []
        for w in np.concatenate(list(resample_counts(mult, b, seed))):
            idx = np.repeat(rep, w.astype(int))
            inside = idx[keep[idx]]
            if what == "Accuracy":
                gaps.append(
                    accuracy_score(y[inside], pred[inside]) - accuracy_score(y[idx], pred[idx])
                )
            else:
                auc = lambda i: roc_auc_score(y[i] == "a", s[i, 0])  # noqa: E731
                gaps.append(auc(inside) - auc(idx))
        where = {"label_value": "a"} if what == "ROCAUC" else {"score_threshold": 0.0}
        p = ms.get(what, slice="north", **where).parameters
        want = np.quantile(gaps, [(1 - level) / 2, (1 + level) / 2])
        assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12), what


def test_intervals_and_slices_survive_save_show_export(tmp_path) -> None:
    """classification --ci --by --save, then `runs show` and `runs export` give the same
    records (SQLite store)."""
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    y, s, md = _data(n=60, seed=7)
    path = tmp_path / "d.csv"
    lines = ["truth,a,b,c,site"] + [
        f"{t},{r[0]},{r[1]},{r[2]},{d['site']}" for t, r, d in zip(y, s, md)
    ]
    path.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "runs.db")
    args = ["classification", "--data", str(path), "--y-true", "truth", "--y-score-columns"]
    args += ["a,b,c", "--metrics", "Accuracy,ROCAUC", "--by", "site", "--ci", "0.9"]
    r = CliRunner().invoke(app, [*args, "--num-bootstrap", "40", "--save", "--db", db])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    assert any("gap_ci_low" in m["parameters"] for m in printed)
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed
