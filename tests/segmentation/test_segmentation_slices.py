"""Segmentation slices (``by``): each slice equals a fresh evaluator given only its images;
the gap's interval equals a Python loop over joint resamples (the slice's and the whole
set's values from the same draw, each re-evaluated on copied images); merge, state and
save -> show -> export keep them; a bad column is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError
from assay.segmentation import SegmentationEvaluator, evaluate_segmentation
from assay.uncertainty.resampling import resample_counts

LABELS = ["road", "car", "sky"]
TYPES = {"IOU", "mIOU", "Precision", "Recall", "F1", "Accuracy"}


def _maps(n: int = 16, seed: int = 0) -> list[tuple]:
    """Label maps; site "a" (every fourth image) knows road and car only."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        labels = LABELS if i % 4 else LABELS[:2]
        g = rng.integers(0, len(labels) + 1, (5, 6))
        p = np.where(rng.random(g.shape) < 0.7, g, rng.integers(0, len(labels) + 1, g.shape))
        md = {"site": "a" if i % 4 == 0 else "b", "cam": i % 3}
        out.append((f"im{i:02d}", g, p, labels, md))
    return out


def _evaluate(maps, w=None, **kw) -> SegmentationEvaluator:
    ev = SegmentationEvaluator(**kw)
    for i, (uid, g, p, labels, md) in enumerate(maps):
        for c in range(1 if w is None else int(w[i])):
            ev.add_label_maps(f"{uid}#{c}", g, p, labels=labels, metadata=md)
    return ev


def _where(m) -> dict:
    return {k: m.parameters[k] for k in ("label_key", "label_value") if k in m.parameters}


@pytest.mark.parametrize("column", ["site", "cam"])
def test_slices_equal_the_images_evaluated_alone(column: str) -> None:
    maps = _maps()
    ms = _evaluate(maps, by=[column]).compute()
    whole = _evaluate(maps).compute()
    assert [m for m in ms if "slice" not in m.parameters] == list(whole)
    for v in sorted({str(x[4][column]) for x in maps}):
        alone = [x for x in maps if str(x[4][column]) == v]
        want = [m for m in _evaluate(alone).compute() if m.type in TYPES]
        got = ms.filter(slice_column=column, slice=v)
        assert len(got) == len(want) > 0
        for m in want:
            sl = got.get(m.type, **_where(m))
            assert sl.value == m.value and sl.parameters["n"] == len(alone)
            ref = whole.get(m.type, **_where(m)).value
            assert sl.parameters["gap"] == (None if m.value is None else m.value - ref)
    if column == "site":  # slice a never declares sky: no sky record there
        assert not ms.filter(slice="a", label_value="sky")


def test_gap_interval_equals_a_loop_over_joint_resamples() -> None:
    maps = _maps(seed=2)
    level, b, seed = 0.9, 30, 5
    ms = _evaluate(maps, by=["site"], ci=level, num_bootstrap=b, seed=seed).compute()
    checked = 0
    for site in "ab":
        inside = np.array([x[4]["site"] == site for x in maps])
        gaps: dict[tuple, list[float]] = {}
        for w in np.concatenate(list(resample_counts(np.ones(len(maps)), b, seed))):
            values = []
            for weights in (w, w * inside):
                rs = _evaluate(maps, weights).compute() if weights.any() else []
                values.append({(m.type, m.parameters.get("label_value")):
                               np.nan if m.value is None else m.value for m in rs})  # fmt: skip
            for k in {(m.type, m.parameters.get("label_value")) for m in ms.filter(slice=site)}:
                gaps.setdefault(k, []).append(values[1].get(k, np.nan) - values[0][k])
        for m in ms.filter(slice=site):
            p = m.parameters
            g = np.array(gaps[(m.type, p.get("label_value"))])
            want = np.quantile(g[~np.isnan(g)], [(1 - level) / 2, (1 + level) / 2])
            assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12), p
            assert p["ci_low"] <= m.value <= p["ci_high"]  # the slice's own interval
            checked += 1
    assert checked == (2 * 4 + 2) + (3 * 4 + 2)


def test_merge_state_and_batches() -> None:
    maps = _maps(seed=3)
    kw = {"by": ["site", "cam"], "ci": 0.9, "num_bootstrap": 25}
    one = _evaluate(maps, **kw).compute()
    a, b = _evaluate(maps[9:], **kw), _evaluate(maps[:9], **kw)
    merged = SegmentationEvaluator.from_state(a.merge(b).state()).compute()
    assert merged.to_json() == one.to_json()
    with pytest.raises(InvalidInputError, match="by.*zone"):
        _evaluate(maps, by=["zone"]).compute()
    with pytest.raises(InvalidInputError, match="by"):
        SegmentationEvaluator(by="site")


def _jsonl(tmp_path, n: int = 12):
    rng = np.random.default_rng(4)
    gts, prs = [], []
    for i in range(n):
        ann = [{"label": lab, "box": [0, 3 * j, 6, 3 * j + 2]} for j, lab in enumerate(LABELS)]
        sh = [int(rng.integers(0, 2)) for _ in LABELS]
        pann = [{"label": a["label"], "box": [0, a["box"][1] + s, 6, a["box"][3] + s]}
                for a, s in zip(ann, sh)]  # fmt: skip
        md = {"site": "xy"[i % 2]}
        gts.append({"uid": f"d{i}", "height": 10, "width": 6, "annotations": ann, "metadata": md})
        prs.append({"uid": f"d{i}", "annotations": pann})
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text("".join(json.dumps(d) + "\n" for d in gts))
    p.write_text("".join(json.dumps(d) + "\n" for d in prs))
    return gts, prs, g, p


def test_cli_by_survives_save_show_export(tmp_path) -> None:
    from typer.testing import CliRunner

    from assay.cli.main import app

    gts, prs, g, p = _jsonl(tmp_path)
    db = str(tmp_path / "runs.db")
    args = ["segmentation", "--groundtruths", str(g), "--predictions", str(p), "--by", "site"]
    args += ["--ci", "0.9", "--num-bootstrap", "20", "--metrics", "mIOU,IOU"]
    r = CliRunner().invoke(app, [*args, "--save", "--db", db])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    want = evaluate_segmentation(gts, prs, by=["site"], ci=0.9, num_bootstrap=20,
                                 metrics=["mIOU", "IOU"])  # fmt: skip
    assert printed == json.loads(want.to_json())
    assert sum("gap_ci_low" in m["parameters"] for m in printed) == 2 * 4
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**31), st.sampled_from(["a", "b", None]),
                          st.integers(1, 3)), min_size=1, max_size=8),
       st.integers(0, 8))  # fmt: skip
def test_property_slices_are_the_subsets_in_any_batches(images: list, cut: int) -> None:
    maps = []
    for i, (seed, site, k) in enumerate(images):
        rng = np.random.default_rng(seed)
        g = rng.integers(0, k + 1, (3, 4))
        p = np.where(rng.random(g.shape) < 0.6, g, rng.integers(0, k + 1, g.shape))
        maps.append((f"u{i}", g, p, LABELS[:k], {} if site is None else {"site": site}))
    ev = _evaluate(maps[:cut], by=["site"])
    if maps[cut:]:
        ev.merge(_evaluate(maps[cut:], by=["site"]))
    if not maps[:cut]:
        ev = _evaluate(maps, by=["site"])
    if all(not x[4] for x in maps):
        with pytest.raises(InvalidInputError, match="site"):
            ev.compute()
        return
    ms = ev.compute()
    for v in ("a", "b"):
        alone = [x for x in maps if x[4].get("site") == v]
        got = ms.filter(slice=v)
        want = [m for m in _evaluate(alone).compute() if m.type in TYPES] if alone else []
        assert [(m.type, m.value) for m in got] == [(m.type, m.value) for m in want]


def test_gap_interval_with_clusters_equals_a_loop_over_drawn_clusters() -> None:
    """``cluster="cam"`` with ``by=["site"]``: each resample draws the cameras; every image
    of a drawn camera counts as often as it was drawn, for the whole set and the slice."""
    maps = _maps(seed=2)
    level, b, seed = 0.9, 30, 5
    ev = _evaluate(maps, by=["site"], ci=level, num_bootstrap=b, seed=seed, cluster="cam")
    ms = ev.compute()
    code = np.array([x[4]["cam"] for x in maps])  # cameras 0, 1, 2: codes by sorted text
    checked = 0
    for site in "ab":
        inside = np.array([x[4]["site"] == site for x in maps])
        gaps: dict[tuple, list[float]] = {}
        for k in np.concatenate(list(resample_counts(np.ones(3), b, seed))):
            w = k[code]
            values = []
            for weights in (w, w * inside):
                rs = _evaluate(maps, weights).compute() if weights.any() else []
                values.append({(m.type, m.parameters.get("label_value")):
                               np.nan if m.value is None else m.value for m in rs})  # fmt: skip
            for key in {(m.type, m.parameters.get("label_value")) for m in ms.filter(slice=site)}:
                gaps.setdefault(key, []).append(values[1].get(key, np.nan) - values[0][key])
        for m in ms.filter(slice=site):
            p = m.parameters
            g = np.array(gaps[(m.type, p.get("label_value"))])
            want = np.quantile(g[~np.isnan(g)], [(1 - level) / 2, (1 + level) / 2])
            assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12), p
            assert p["cluster"] == "cam"
            checked += 1
    assert checked == (2 * 4 + 2) + (3 * 4 + 2)
