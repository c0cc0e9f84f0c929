"""Segmentation intervals over images: the vectorised bootstrap equals a Python loop that
re-evaluates each resample materialised as copied images (same counts); seeded; state, merge
and batch order carry the per-image rows."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InvalidInputError
from assay.segmentation import SegmentationEvaluator
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 30, 4
LABELS = ["road", "car", "sky"]


def _maps(n: int = 15, seed: int = 0) -> list[tuple[str, np.ndarray, np.ndarray, list[str]]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        labels = LABELS if i % 4 else LABELS[:2]  # some images know fewer labels
        g = rng.integers(0, len(labels) + 1, (6, 7))
        p = np.where(rng.random(g.shape) < 0.7, g, rng.integers(0, len(labels) + 1, g.shape))
        out.append((f"im{i:02d}", g, p, labels))
    return out


def _evaluate(maps, w=None, **kw) -> object:
    ev = SegmentationEvaluator(**kw)
    for i, (uid, g, p, labels) in enumerate(maps):
        for c in range(1 if w is None else int(w[i])):
            ev.add_label_maps(f"{uid}#{c}", g, p, labels=labels)
    return ev


def test_bootstrap_equals_reevaluating_copied_images() -> None:
    maps = _maps()
    ms = _evaluate(maps, ci=LEVEL, num_bootstrap=B, seed=SEED).compute()
    loops: dict[tuple, list[float]] = {}
    for w in np.concatenate(list(resample_counts(np.ones(len(maps)), B, SEED))):
        for m in _evaluate(maps, w).compute():
            if m.type != "ConfusionMatrix":
                key = (m.type, m.parameters.get("label_value"))
                loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
    checked = 0
    for m in ms:
        if m.type == "ConfusionMatrix":
            assert "ci_low" not in m.parameters
            continue
        v = np.array(loops[(m.type, m.parameters.get("label_value"))])
        want = np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        got = [m.parameters["ci_low"], m.parameters["ci_high"]]
        assert got == pytest.approx(want, abs=1e-12), (m.type, m.parameters)
        checked += 1
    assert checked == 4 * len(LABELS) + 2


def test_seeded_merge_state_and_order() -> None:
    maps = _maps(seed=1)
    kw = {"ci": 0.95, "num_bootstrap": 80, "seed": 5}
    one = _evaluate(maps, **kw).compute()
    assert one.to_json() == _evaluate(maps, **kw).compute().to_json()
    assert one.to_json() != _evaluate(maps, **{**kw, "seed": 6}).compute().to_json()
    plain = _evaluate(maps).compute()
    assert [m.value for m in one] == [m.value for m in plain]
    late = _evaluate(maps[7:], **kw)
    early = SegmentationEvaluator.from_state(_evaluate(maps[:7], **kw).state())
    merged = SegmentationEvaluator.from_state(late.merge(early).state()).compute()
    assert merged.to_json() == one.to_json()


def test_bad_option() -> None:
    with pytest.raises(InvalidInputError, match="ci"):
        SegmentationEvaluator(ci=95)


def test_cli_ci(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    road = {"label": "road", "box": [0, 0, 2, 1]}
    gts = [{"uid": f"u{i}", "height": 2, "width": 3, "annotations": [road]} for i in range(6)]
    pds = [
        {"uid": f"u{i}", "annotations": [{"label": "road", "box": [0, 0, 1 + i % 3, 2]}]}
        for i in range(6)
    ]
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text("".join(json.dumps(d) + "\n" for d in gts))
    p.write_text("".join(json.dumps(d) + "\n" for d in pds))
    args = ["segmentation", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "mIOU"]
    r = CliRunner().invoke(app, [*args, "--ci", "0.8", "--num-bootstrap", "50"])
    assert r.exit_code == 0, r.output
    (rec,) = json.loads(r.stdout)
    ev = SegmentationEvaluator(ci=0.8, num_bootstrap=50).add(gts, pds).compute()
    assert rec["parameters"]["ci_low"] == ev.get("mIOU").parameters["ci_low"]
    r = CliRunner().invoke(app, [*args, "--ci", "0.8", "--seed", "-2"])
    assert r.exit_code == 2 and "--seed" in r.output


def test_cluster_bootstrap_equals_reevaluating_drawn_clusters() -> None:
    """``cluster="site"``: every image of a drawn site copied as often as the site was
    drawn; re-evaluating the copies gives the same intervals."""
    maps = _maps(n=16, seed=3)
    sites = [f"s{i % 5}" for i in range(len(maps))]
    ev = SegmentationEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED, cluster="site")
    for (uid, g, p, labels), site in zip(maps, sites):
        ev.add_label_maps(uid, g, p, labels=labels, metadata={"site": site})
    ms = ev.compute()
    names = sorted(set(sites))
    code = np.array([names.index(v) for v in sites])
    loops: dict[tuple, list[float]] = {}
    for k in np.concatenate(list(resample_counts(np.ones(len(names)), B, SEED))):
        for m in _evaluate(maps, k[code]).compute():
            if m.type != "ConfusionMatrix":
                key = (m.type, m.parameters.get("label_value"))
                loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
    checked = 0
    for m in ms:
        if m.type == "ConfusionMatrix":
            continue
        assert m.parameters["cluster"] == "site"
        v = np.array(loops[(m.type, m.parameters.get("label_value"))])
        want = np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [m.parameters["ci_low"], m.parameters["ci_high"]] == pytest.approx(want, abs=1e-12)
        checked += 1
    assert checked == 4 * len(LABELS) + 2
