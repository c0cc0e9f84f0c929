"""Detection intervals: the vectorised bootstrap over images equals a Python loop that
re-evaluates (COCO-exact, as pycocotools) each resample materialised as copied images with
the same counts; seeded; value unchanged; merge order and batches do not matter."""

from __future__ import annotations

import numpy as np
import pytest

from assay.detection import DetectionEvaluator, evaluate_detection
from assay.errors import InvalidInputError
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 25, 7
LABELS = ["cat", "dog", "owl"]
IOUS = [0.5, 0.75]


def _datums(n: int = 24, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Images with [xmin, ymin, xmax, ymax] boxes and noisy scored predictions (continuous
    scores: no ties)."""
    rng = np.random.default_rng(seed)
    gts, pds = [], []
    for i in range(n):
        uid = f"img{i:03d}"
        g, p = [], []
        for _ in range(rng.integers(0, 4)):
            x, y = rng.uniform(0, 80, 2)
            box = [float(x), float(y), float(x + rng.uniform(5, 20)), float(y + rng.uniform(5, 20))]
            lab = str(rng.choice(LABELS[:2] if i % 5 else LABELS))
            g.append({"label": lab, "box": box})
            if rng.random() < 0.8:  # a jittered detection
                dx, dy = rng.normal(0, 2, 2)
                jit = [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]
                p.append({"label": lab, "box": jit, "score": float(rng.random())})
        for _ in range(rng.integers(0, 3)):  # false alarms
            x, y = rng.uniform(0, 80, 2)
            box = [float(x), float(y), float(x + 10), float(y + 10)]
            p.append({"label": str(rng.choice(LABELS)), "box": box, "score": float(rng.random())})
        gts.append({"uid": uid, "annotations": g})
        pds.append({"uid": uid, "annotations": p})
    return gts, pds


def _copies(datums: list[dict], w: np.ndarray) -> list[dict]:
    return [
        {**d, "uid": f"{d['uid']}#{c}"} for d, k in zip(datums, w.astype(int)) for c in range(k)
    ]


def _ci(ms, type_, **where) -> list[float]:
    p = ms.get(type_, **where).parameters
    return [p["ci_low"], p["ci_high"]]


def test_ap_bootstrap_equals_reevaluating_copied_images() -> None:
    gts, pds = _datums()
    types = ["AP", "mAP", "APAveragedOverIOUs", "mAPAveragedOverIOUs"]
    opts = {"iou_thresholds": IOUS, "metrics": types}
    ms = evaluate_detection(gts, pds, ci=LEVEL, num_bootstrap=B, seed=SEED, **opts)
    loops: dict[tuple, list[float]] = {}
    for w in np.concatenate(list(resample_counts(np.ones(len(gts)), B, SEED))):
        rs = evaluate_detection(_copies(gts, w), _copies(pds, w), **opts)
        for m in rs:
            p = m.parameters
            key = (m.type, p.get("label_value"), p.get("iou_threshold"))
            loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
        for lab in LABELS:  # a label absent from a resample: undefined there
            for t in IOUS:
                if len(loops.get(("AP", lab, t), [])) < len(loops[("mAP", None, 0.5)]):
                    loops.setdefault(("AP", lab, t), []).append(np.nan)
    checked = 0
    for m in ms:
        if m.value is None:
            continue
        p = m.parameters
        values = np.array(loops[(m.type, p.get("label_value"), p.get("iou_threshold"))])
        values = values[~np.isnan(values)]
        want = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, abs=1e-12), (m.type, p)
        checked += 1
    assert checked >= 10


def test_seeded_unchanged_and_independent_of_batching() -> None:
    gts, pds = _datums(seed=1)
    kw = {"ci": 0.95, "num_bootstrap": 60, "seed": 2}
    a = evaluate_detection(gts, pds, metrics=["AP", "mAP"], **kw)
    b = evaluate_detection(gts, pds, metrics=["AP", "mAP"], **kw)
    c = evaluate_detection(gts, pds, metrics=["AP", "mAP"], **{**kw, "seed": 3})
    plain = evaluate_detection(gts, pds, metrics=["AP", "mAP"])
    assert a.to_json() == b.to_json() != c.to_json()
    assert [m.value for m in a] == [m.value for m in plain]
    late = DetectionEvaluator(**kw).add_datums(gts[12:], pds[12:])
    early = DetectionEvaluator(**kw).add_datums(gts[:12], pds[:12])
    merged = late.merge(early).compute(["AP", "mAP"])
    assert _ci(merged, "mAP", iou_threshold=0.5) == _ci(a, "mAP", iou_threshold=0.5)


def test_bad_ci_option_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="num_bootstrap"):
        DetectionEvaluator(ci=0.9, num_bootstrap=0)


def test_cli_ci(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    gts, pds = _datums(seed=3)
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text("".join(json.dumps(d) + "\n" for d in gts))
    p.write_text("".join(json.dumps(d) + "\n" for d in pds))
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "mAP"]
    r = CliRunner().invoke(app, [*args, "--ci", "0.9", "--num-bootstrap", "30"])
    assert r.exit_code == 0, r.output
    got = {d["parameters"]["iou_threshold"]: d for d in json.loads(r.stdout)}
    want = evaluate_detection(gts, pds, metrics=["mAP"], ci=0.9, num_bootstrap=30)
    assert (
        got[0.5]["parameters"]["ci_low"] == want.get("mAP", iou_threshold=0.5).parameters["ci_low"]
    )
    r = CliRunner().invoke(app, [*args, "--ci", "0.9", "--ci-method", "nope"])
    assert r.exit_code == 2 and "--ci-method" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("matching", ["coco", "valor"])
def test_ar_bootstrap_equals_reevaluating_copied_images(matching: str) -> None:
    gts, pds = _datums(seed=5)
    opts = {"metrics": ["AR", "mAR"], "score_thresholds": [0.0, 0.5], "matching": matching}
    ms = evaluate_detection(gts, pds, ci=LEVEL, num_bootstrap=B, seed=SEED, **opts)
    loops: dict[tuple, list[float]] = {}
    for w in np.concatenate(list(resample_counts(np.ones(len(gts)), B, SEED))):
        for m in evaluate_detection(_copies(gts, w), _copies(pds, w), **opts):
            key = (m.type, m.parameters.get("label_value"), m.parameters["score_threshold"])
            loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
    checked = 0
    for m in ms:
        if m.value is None:
            continue
        p = m.parameters
        v = np.array(loops[(m.type, p.get("label_value"), p["score_threshold"])])
        want = np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, abs=1e-12), (m.type, p)
        checked += 1
    assert checked >= 6


def test_slices_by_image_metadata_equal_the_subset_alone() -> None:
    gts, pds = _datums(seed=8)
    for i, d in enumerate(gts):
        d["metadata"] = {"camera": "ab"[i % 2], "night": i % 3 == 0}
    opts = {"metrics": ["AP", "mAP", "AR", "mAR"], "iou_thresholds": IOUS}
    ms = evaluate_detection(gts, pds, by=["camera"], **opts)
    whole = evaluate_detection(gts, pds, **opts)
    assert [m for m in ms if "slice" not in m.parameters] == list(whole)
    for cam in "ab":
        keep = [i for i, d in enumerate(gts) if d["metadata"]["camera"] == cam]
        alone = evaluate_detection([gts[i] for i in keep], [pds[i] for i in keep], **opts)
        got = ms.filter(slice_column="camera", slice=cam)
        assert len(got) == len(alone) > 0
        for m in alone:
            where = {k: v for k, v in m.parameters.items() if k != "undefined"}
            sl = got.get(m.type, **where)
            assert sl.value == m.value and sl.parameters["n"] == len(keep)
            ref = [w for w in whole if w.type == m.type and w.parameters == m.parameters]
            if m.value is not None and ref and ref[0].value is not None:
                assert sl.parameters["gap"] == pytest.approx(m.value - ref[0].value, abs=1e-15)
    sliced = DetectionEvaluator(by=["camera"], iou_thresholds=IOUS, ci=0.9, num_bootstrap=20)
    sliced.add_datums(gts[:10], pds[:10]).merge(
        DetectionEvaluator(by=["camera"], iou_thresholds=IOUS, ci=0.9, num_bootstrap=20).add_datums(
            gts[10:], pds[10:]
        )
    )
    one = evaluate_detection(gts, pds, by=["camera"], iou_thresholds=IOUS, ci=0.9, num_bootstrap=20)
    assert sliced.compute().to_json() == one.to_json()
    with pytest.raises(InvalidInputError, match="by.*lens"):
        evaluate_detection(gts, pds, by=["lens"], metrics=["mAP"])


def test_cluster_bootstrap_equals_reevaluating_drawn_clusters() -> None:
    """``cluster="site"``: a resample copies every image of a drawn site as often as the
    site was drawn; re-evaluating the copies gives the same AP/mAP/AR intervals."""
    gts, pds = _datums(n=30, seed=11)
    sites = [f"s{i % 6}" for i in range(len(gts))]
    for d, v in zip(gts, sites):
        d["metadata"] = {"site": v}
    opts = {"iou_thresholds": IOUS, "metrics": ["AP", "mAP", "AR", "mAR"]}
    ms = evaluate_detection(gts, pds, ci=LEVEL, num_bootstrap=B, seed=SEED, cluster="site", **opts)
    names = sorted(set(sites))
    code = np.array([names.index(v) for v in sites])
    loops: dict[tuple, list[float]] = {}
    for k in np.concatenate(list(resample_counts(np.ones(len(names)), B, SEED))):
        w = k[code]
        for m in evaluate_detection(_copies(gts, w), _copies(pds, w), **opts):
            p = m.parameters
            key = (m.type, p.get("label_value"), p.get("iou_threshold"), p.get("score_threshold"))
            loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
    checked = 0
    for m in ms:
        p = m.parameters
        if m.value is None:
            continue
        assert p["cluster"] == "site" and p["ci_method"] == "bootstrap"
        key = (m.type, p.get("label_value"), p.get("iou_threshold"), p.get("score_threshold"))
        v = np.array(loops[key])
        if m.type == "AP" and len(v) < B:  # the label missing from some resamples
            continue
        want = np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(want, abs=1e-12), (m.type, p)
        checked += 1
    assert checked >= 8
    with pytest.raises(InvalidInputError, match="cluster.*lens"):
        evaluate_detection(gts, pds, ci=0.9, cluster="lens", metrics=["mAP"])


def _copied_coco(gt: dict, dt: list[dict], w: np.ndarray) -> tuple[dict, list[dict]]:
    """COCO data with image ``i`` (in id order) copied ``w_i`` times (fresh image ids)."""
    ids = sorted(im["id"] for im in gt["images"])
    new_ids: dict[int, list[int]] = {}
    images = []
    for i, k in zip(ids, w.astype(int)):
        im = next(x for x in gt["images"] if x["id"] == i)
        new_ids[i] = [len(images) + c + 1 for c in range(k)]
        images += [{**im, "id": j} for j in new_ids[i]]
    anns = [
        {**a, "id": n + 1, "image_id": j}
        for n, (a, j) in enumerate(
            (a, j) for a in gt["annotations"] for j in new_ids[a["image_id"]]
        )
    ]
    res = [{**d, "image_id": j} for d in dt for j in new_ids[d["image_id"]]]
    return {**gt, "images": images, "annotations": anns}, res


def test_ap_bootstrap_with_crowds_equals_reevaluating_copied_coco_images() -> None:
    """COCO data with crowd regions (detections ignored at some thresholds) and the other
    awkward cases of ``make_coco``: the bootstrap equals re-evaluating copied images."""
    from assay.detection.io import load_coco
    from assay.testing.detection import make_coco

    gt, dt = make_coco(n_images=16, n_categories=3, seed=4)
    rng = np.random.default_rng(0)
    for d in dt:  # no two detections of one image and label share a score
        d["score"] = float(d["score"]) + float(rng.random()) * 1e-6
    opts = {"iou_thresholds": [0.5, 0.75, 0.9]}
    ids = sorted(im["id"] for im in gt["images"])
    uids = [str(i) for i in ids]
    order = np.argsort(np.array(uids))  # image columns follow the uids as text
    ev = DetectionEvaluator(ci=LEVEL, num_bootstrap=B, seed=SEED, **opts)
    ms = ev.add(load_coco(gt, dt)).compute(["AP"])
    crowd = sum(a.get("iscrowd", 0) for a in gt["annotations"])
    assert crowd > 0
    loops: dict[tuple, list[float]] = {}
    for wc in np.concatenate(list(resample_counts(np.ones(len(ids)), B, SEED))):
        w = np.empty(len(ids))
        w[order] = wc  # the count of each image, in id order
        g2, d2 = _copied_coco(gt, dt, w)
        for m in DetectionEvaluator(**opts).add(load_coco(g2, d2)).compute(["AP"]):
            key = (m.parameters["label_value"], m.parameters["iou_threshold"])
            loops.setdefault(key, []).append(np.nan if m.value is None else m.value)
    checked = 0
    for m in ms:
        key = (m.parameters["label_value"], m.parameters["iou_threshold"])
        if m.value is None or len(loops[key]) < B:
            continue
        v = np.array(loops[key])
        want = np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        assert _ci(ms, "AP", **dict(zip(("label_value", "iou_threshold"), key))) == pytest.approx(
            want, abs=1e-12
        ), key
        checked += 1
    assert checked >= 6


def test_cli_cluster(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from assay.cli.main import app

    gts, pds = _datums(seed=3)
    for i, d in enumerate(gts):
        d["metadata"] = {"site": f"s{i % 5}"}
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text("".join(json.dumps(d) + "\n" for d in gts))
    p.write_text("".join(json.dumps(d) + "\n" for d in pds))
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "mAP"]
    r = CliRunner().invoke(
        app, [*args, "--ci", "0.9", "--num-bootstrap", "30", "--cluster", "site"]
    )
    assert r.exit_code == 0, r.output
    got = {d["parameters"]["iou_threshold"]: d["parameters"] for d in json.loads(r.stdout)}
    want = evaluate_detection(gts, pds, metrics=["mAP"], ci=0.9, num_bootstrap=30, cluster="site")
    assert got[0.5]["cluster"] == "site"
    assert got[0.5]["ci_low"] == want.get("mAP", iou_threshold=0.5).parameters["ci_low"]


def test_slices_with_clusters_draw_the_clusters_for_the_gap() -> None:
    """``by`` with ``cluster``: the slice records and their gaps carry the cluster; the gap
    interval equals re-evaluating, per drawn set of sites, the copied images."""
    gts, pds = _datums(n=30, seed=12)
    for i, d in enumerate(gts):
        d["metadata"] = {"site": f"s{i % 5}", "cam": "ab"[i % 2]}
    opts = {"iou_thresholds": [0.5], "metrics": ["mAP"]}
    ms = evaluate_detection(
        gts, pds, by=["cam"], ci=LEVEL, num_bootstrap=B, seed=SEED, cluster="site", **opts
    )
    code = np.array([int(d["metadata"]["site"][1]) for d in gts])
    inside = np.array([d["metadata"]["cam"] == "a" for d in gts])
    gaps = []
    for k in np.concatenate(list(resample_counts(np.ones(5), B, SEED))):
        w = k[code]
        whole = evaluate_detection(_copies(gts, w), _copies(pds, w), **opts).get("mAP").value
        part = (
            evaluate_detection(_copies(gts, w * inside), _copies(pds, w * inside), **opts)
            .get("mAP")
            .value
        )
        gaps.append(np.nan if whole is None or part is None else part - whole)
    p = ms.get("mAP", slice="a").parameters
    g = np.array(gaps)
    want = np.quantile(g[~np.isnan(g)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    assert p["cluster"] == "site"
    assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12)


def test_no_slice_replicates_without_by(monkeypatch) -> None:
    """Regression: without ``by`` the slices' replicates of the whole set (a second full AP
    bootstrap) were computed anyway; the records are unchanged."""
    import assay.detection.evaluator as evaluator

    calls = []
    real = evaluator.interval_tallies

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(evaluator, "interval_tallies", counted)
    gts, pds = _datums(seed=2)
    evaluate_detection(gts, pds, metrics=["mAP"], ci=0.9, num_bootstrap=20)
    assert calls == []
    for i, d in enumerate(gts):
        d["metadata"] = {"cam": "ab"[i % 2]}
    evaluate_detection(gts, pds, metrics=["mAP"], ci=0.9, num_bootstrap=20, by=["cam"])
    assert calls
