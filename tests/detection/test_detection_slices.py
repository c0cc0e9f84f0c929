"""Detection slices (``by``): each slice equals pycocotools on that subset of images alone;
the gap's interval equals a Python loop over joint resamples (the slice's and the whole
set's values from the same draw, each re-evaluated on copied images); state, merge and
save -> show -> export keep them."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from dataclasses import replace

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from assay.detection import DetectionEvaluator, evaluate_detection
from assay.detection.io import load_coco
from assay.io.metadata import metadata_from_records
from assay.testing.detection import make_coco
from assay.uncertainty.resampling import resample_counts

IOUS = [0.5, 0.75]


def _pycoco_ap(gt: dict, dt: list[dict], images: set[int]) -> np.ndarray:
    """pycocotools' per-class AP (T, K) at IOUS on the images ``images`` only."""
    g = {
        **gt,
        "images": [i for i in gt["images"] if i["id"] in images],
        "annotations": [a for a in gt["annotations"] if a["image_id"] in images],
    }
    d = [r for r in dt if r["image_id"] in images]
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(g)
        coco.createIndex()
        ev = COCOeval(coco, coco.loadRes(copy.deepcopy(d)), "bbox")
        ev.params.iouThrs = np.array(IOUS)
        ev.evaluate()
        ev.accumulate()
    p = ev.eval["precision"][:, :, :, 0, -1]  # (T, R, K)
    return np.where((p > -1).all(axis=1), p.mean(axis=1), np.nan)


def test_slices_equal_pycocotools_on_each_subset() -> None:
    gt, dt = make_coco(n_images=24, n_categories=4, dets_per_image=12, seed=3)
    data = load_coco(gt, dt)
    site = {i["id"]: "abc"[i["id"] % 3] for i in gt["images"]}
    md = metadata_from_records([{"site": site[int(u)]} for u in data.uids], source="metadata")
    ms = evaluate_detection(replace(data, metadata=md), by=["site"], iou_thresholds=IOUS,
                            metrics=["AP", "mAP"])  # fmt: skip
    cats = {c["name"]: k for k, c in enumerate(sorted(gt["categories"], key=lambda c: c["id"]))}
    checked = 0
    for v in "abc":
        images = {i for i, s in site.items() if s == v}
        want = _pycoco_ap(gt, dt, images)
        got = ms.filter(slice_column="site", slice=v)
        assert {m.parameters["n"] for m in got} == {len(images)}
        for m in got.filter(type="AP"):
            if m.parameters["label_value"] not in cats:  # detections of no category: no AP
                assert m.value is None
                continue
            k, t = cats[m.parameters["label_value"]], IOUS.index(m.parameters["iou_threshold"])
            if np.isnan(want[t, k]):
                assert m.value is None
            else:
                assert m.value == pytest.approx(want[t, k], abs=1e-12)
                checked += 1
        for t, thr in enumerate(IOUS):
            mean = got.get("mAP", iou_threshold=thr).value
            assert mean == pytest.approx(np.nanmean(want[t]), abs=1e-12)
    assert checked >= 12


def _datums(n: int = 18, seed: int = 4) -> tuple[list[dict], list[dict]]:
    """Images with distinct continuous scores, a camera each; owl only on camera b."""
    rng = np.random.default_rng(seed)
    gts, pds = [], []
    for i in range(n):
        cam = "ab"[i % 2]
        g, p = [], []
        for _ in range(int(rng.integers(0, 4))):
            x, y = rng.uniform(0, 80, 2)
            box = [float(x), float(y), float(x + rng.uniform(5, 20)), float(y + rng.uniform(5, 20))]
            lab = str(rng.choice(["cat", "dog", "owl"] if cam == "b" else ["cat", "dog"]))
            g.append({"label": lab, "box": box})
            if rng.random() < 0.8:
                dx, dy = rng.normal(0, 2, 2)
                jit = [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]
                p.append({"label": lab, "box": jit, "score": float(rng.random())})
        for _ in range(int(rng.integers(0, 3))):
            x, y = rng.uniform(0, 80, 2)
            box = [float(x), float(y), float(x + 10), float(y + 10)]
            p.append({"label": str(rng.choice(["cat", "dog"])), "box": box,
                      "score": float(rng.random())})  # fmt: skip
        gts.append({"uid": f"img{i:03d}", "metadata": {"camera": cam}, "annotations": g})
        pds.append({"uid": f"img{i:03d}", "annotations": p})
    return gts, pds


def _copies(datums: list[dict], w: np.ndarray) -> list[dict]:
    return [
        {**d, "uid": f"{d['uid']}#{c}"} for d, k in zip(datums, w.astype(int)) for c in range(k)
    ]


def _key(m) -> tuple:
    p = m.parameters
    return (m.type, p.get("label_value"), p.get("iou_threshold"), p.get("score_threshold"))


def _values(ms) -> dict[tuple, float]:
    return {_key(m): np.nan if m.value is None else m.value for m in ms}


@pytest.mark.parametrize("matching", ["coco", "valor"])
def test_gap_interval_equals_a_loop_over_joint_resamples(matching: str) -> None:
    gts, pds = _datums()
    level, b, seed = 0.9, 25, 3
    types = ["AP", "APAveragedOverIOUs", "mAP", "mAPAveragedOverIOUs", "AR", "mAR"]
    opts = {"iou_thresholds": IOUS, "score_thresholds": [0.0, 0.5], "matching": matching,
            "metrics": types}  # fmt: skip
    ms = evaluate_detection(gts, pds, by=["camera"], ci=level, num_bootstrap=b, seed=seed, **opts)
    checked = 0
    for cam in "ab":
        inside = np.array([g["metadata"]["camera"] == cam for g in gts])
        gaps: dict[tuple, list[float]] = {}
        for w in np.concatenate(list(resample_counts(np.ones(len(gts)), b, seed))):
            whole = _values(evaluate_detection(_copies(gts, w), _copies(pds, w), **opts))
            ws = w * inside
            part = _values(evaluate_detection(_copies(gts, ws), _copies(pds, ws), **opts))
            for m in ms.filter(slice=cam):
                k = _key(m)
                gaps.setdefault(k, []).append(part.get(k, np.nan) - whole.get(k, np.nan))
        for m in ms.filter(slice=cam):
            p = m.parameters
            if matching == "valor" and m.type not in ("AR", "mAR"):
                assert "gap_ci_low" not in p  # AP intervals replay COCO's accumulation only
                continue
            if m.value is None or p["gap"] is None:
                continue
            g = np.array(gaps[_key(m)])
            want = np.quantile(g[~np.isnan(g)], [(1 - level) / 2, (1 + level) / 2])
            assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12), p
            checked += 1
    assert checked >= (12 if matching == "valor" else 30)


def test_gap_interval_seeded_and_independent_of_batches() -> None:
    gts, pds = _datums(seed=6)
    kw = {"by": ["camera"], "ci": 0.9, "num_bootstrap": 30, "iou_thresholds": IOUS}
    one = evaluate_detection(gts, pds, **kw)
    late = DetectionEvaluator(**kw).add_datums(gts[9:], pds[9:])
    early = DetectionEvaluator(**kw).add_datums(gts[:9], pds[:9])
    merged = DetectionEvaluator.from_state(late.merge(early).state()).compute()
    assert merged.to_json() == one.to_json()
    assert one.to_json() != evaluate_detection(gts, pds, **{**kw, "seed": 1}).to_json()
    sl = one.get("mAP", slice="a", iou_threshold=0.5).parameters
    assert sl["gap_ci_low"] <= sl["gap"] <= sl["gap_ci_high"]


def test_slices_and_gap_interval_survive_save_show_export(tmp_path) -> None:
    from typer.testing import CliRunner

    from assay.cli.main import app

    gts, pds = _datums(seed=7)
    g, p, db = tmp_path / "g.jsonl", tmp_path / "p.jsonl", str(tmp_path / "runs.db")
    g.write_text("".join(json.dumps(d) + "\n" for d in gts))
    p.write_text("".join(json.dumps(d) + "\n" for d in pds))
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "mAP,mAR"]
    args += ["--by", "camera", "--ci", "0.9", "--num-bootstrap", "20", "--save", "--db", db]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    assert sum("gap_ci_low" in m["parameters"] for m in printed) >= 4
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed
