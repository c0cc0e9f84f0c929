"""Detection benchmark: assay vs pycocotools, faster-coco-eval, valor-lite (and torchmetrics,
if installed).

Every tool does the same work: the full COCOeval evaluation (evaluate + accumulate +
summarize: the precision and recall arrays for every IoU threshold, area range and max-dets,
and the 12 summary numbers), with its default settings, from the same two files; each gets
the same number of runs (``--repeats``, best kept). valor-lite computes its own metric set
(no area ranges or max-dets), reported for reference.

Generates COCO-scale data once (default 5,000 images, ~7 ground truths and 100 detections
per image, 80 categories; plus a 500-image instance-segmentation variant), writes the two
COCO JSON files, then runs each tool end to end (reading the files included) in a fresh
child process, so that each peak RSS belongs to that tool alone (each tool's run function is
in ``benchmarks/peers/detection.py``). Prints wall time, CPU time (reading and
evaluation, in the child), the whole child process's CPU time (user + sys from
``getrusage``: interpreter start and imports included), peak memory, ratios to assay (CPU
time, memory) and of assay to hotcoco single-threaded, and checks that the 12 summary numbers
agree with pycocotools (or hotcoco when pycocotools is not run). ``hotcoco-1thread`` runs
with ``RAYON_NUM_THREADS=1``; ``hotcoco`` with its default threads (its CPU time is that of
all its threads). ``assay-cli`` is ``assay detection --coco`` in a subprocess: its CPU time is
its whole process, and it prints the summary to 3 decimals (so differs by up to 5e-4).

    python benchmarks/detection.py                 # full scale
    python benchmarks/detection.py --images 500    # quicker
    python benchmarks/detection.py --only assay,pycocotools --skip-segm
    python benchmarks/detection.py --images 2000 --segm-images 200 --repeats 1
    python benchmarks/detection.py --confusion-matrix   # ConfusionMatrix, assay vs valor-lite
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from peers.detection import CM_IOUS, CM_SCORES, CM_TOOLS, TOOLS

# ----------------------------------------------------------------------------- data


def generate(
    n_images: int,
    *,
    segm: bool,
    seed: int,
    n_cats: int = 80,
    gt_mean: float = 7.0,
    dets: int = 100,
):
    """COCO annotations + results, vectorised (with the crowd/empty/tie cases of the test
    generator)."""
    from pycocotools import mask as mask_utils

    rng = np.random.default_rng(seed)
    W, H = 640, 480
    n_gt = rng.poisson(gt_mean, n_images)
    n_gt[rng.random(n_images) < 0.05] = 0
    img_of_gt = np.repeat(np.arange(n_images), n_gt)
    G = len(img_of_gt)
    s = np.exp(rng.uniform(np.log(6), np.log(300), G))
    w = np.clip(s * rng.uniform(0.6, 1.6, G), 2, W - 1)
    h = np.clip(s * rng.uniform(0.6, 1.6, G), 2, H - 1)
    x = rng.uniform(0, 1, G) * (W - w)
    y = rng.uniform(0, 1, G) * (H - h)
    gbox = np.round(np.column_stack([x, y, w, h]), 2)
    gcat = rng.integers(1, n_cats + 1, G)
    crowd = (rng.random(G) < 0.01).astype(int)
    # detections: half jittered copies of the image's ground truths, half background boxes
    D = n_images * dets
    img_of_dt = np.repeat(np.arange(n_images), dets)
    first = np.r_[0, np.cumsum(n_gt)[:-1]]
    has = n_gt[img_of_dt] > 0
    copy = has & (rng.random(D) < 0.5)
    src = first[img_of_dt] + (rng.random(D) * np.maximum(n_gt[img_of_dt], 1)).astype(int)
    src = np.where(has, src, 0)
    jit = (
        rng.normal(0, 0.1, (D, 4)) * np.column_stack([gbox[src, 2], gbox[src, 3]] * 2)
        if G
        else np.zeros((D, 4))
    )
    dbox = np.where(copy[:, None], gbox[src] + jit if G else 0, 0.0)
    rs = np.exp(rng.uniform(np.log(4), np.log(250), D))
    rand = np.column_stack(
        [
            rng.uniform(0, W - 4, D),
            rng.uniform(0, H - 4, D),
            rs * rng.uniform(0.6, 1.6, D),
            rs * rng.uniform(0.6, 1.6, D),
        ]
    )
    dbox = np.where(copy[:, None], dbox, rand)
    dbox[:, 2:] = np.maximum(dbox[:, 2:], 1.0)
    dbox[:, 0] = np.clip(dbox[:, 0], 0, W - 2)
    dbox[:, 1] = np.clip(dbox[:, 1], 0, H - 2)
    dbox[:, 2] = np.minimum(dbox[:, 2], W - dbox[:, 0])
    dbox[:, 3] = np.minimum(dbox[:, 3], H - dbox[:, 1])
    dbox = np.round(dbox, 2)
    # a detector's labels: mostly the object's own, else one of the image's labels or any label
    dcat = np.where(
        copy & (rng.random(D) < 0.85),
        gcat[src] if G else 1,
        np.where(
            has & (rng.random(D) < 0.5), gcat[src] if G else 1, rng.integers(1, n_cats + 1, D)
        ),
    )
    score = np.round(np.where(copy, rng.beta(4, 2, D), rng.beta(1.5, 4, D)), 3)
    ids = rng.permutation(n_images) + 1
    images = [{"id": int(i), "width": W, "height": H} for i in ids]
    anns, results = [], []
    gl, dl = gbox.tolist(), dbox.tolist()
    for j in range(G):
        a = {
            "id": j + 1,
            "image_id": int(ids[img_of_gt[j]]),
            "category_id": int(gcat[j]),
            "bbox": gl[j],
            "iscrowd": int(crowd[j]),
            "area": round(gl[j][2] * gl[j][3], 2),
        }
        if segm:
            bx, by, bw, bh = gl[j]
            poly = [
                bx,
                by + bh / 2,
                bx + bw / 2,
                by,
                bx + bw,
                by + bh / 2,
                bx + bw / 2,
                by + bh,
            ]  # a diamond
            r = mask_utils.merge(mask_utils.frPyObjects([poly], H, W))
            a["area"] = float(mask_utils.area(r))
            a["segmentation"] = (
                {"size": [H, W], "counts": r["counts"].decode()} if crowd[j] else [poly]
            )
        anns.append(a)
    sl = score.tolist()
    for j in range(D):
        r = {
            "image_id": int(ids[img_of_dt[j]]),
            "category_id": int(dcat[j]),
            "bbox": dl[j],
            "score": sl[j],
        }
        if segm:
            bx, by, bw, bh = dl[j]
            poly = [bx, by + bh / 2, bx + bw / 2, by, bx + bw, by + bh / 2, bx + bw / 2, by + bh]
            m = mask_utils.merge(mask_utils.frPyObjects([poly], H, W))
            r["segmentation"] = {"size": [H, W], "counts": m["counts"].decode()}
        results.append(r)
    gt = {
        "images": images,
        "annotations": anns,
        "categories": [{"id": c, "name": f"c{c}"} for c in range(1, n_cats + 1)],
    }
    return gt, results


def _peak_mb() -> float:
    """This process's peak RSS (VmHWM). Unlike ru_maxrss it is not inherited across exec,
    so it does not include the parent's memory."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(name, gt_path, dt_path, iou_type, q):
    if name == "hotcoco-1thread":  # read by rayon when its thread pool starts (first use)
        os.environ["RAYON_NUM_THREADS"] = "1"
    try:
        tool = CM_TOOLS[name[3:]] if name.startswith("cm:") else TOOLS[name]
        out = tool(gt_path, dt_path, iou_type)
        out.setdefault("peak_mb", _peak_mb())  # assay-cli: its subprocess's own
        q.put(out)
    except ImportError as e:
        q.put({"skipped": f"not installed ({e.name})"})
    except Exception as e:  # report, do not abort the whole benchmark
        q.put({"skipped": f"failed: {type(e).__name__}: {e}"})


def run_tool(name, gt_path, dt_path, iou_type, repeats=1):
    """Best (least CPU) of ``repeats`` runs, each in a fresh interpreter (the peak RSS is the
    tool's alone); every tool gets the same number of runs."""
    best = None
    for _ in range(repeats):
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=_child, args=(name, gt_path, dt_path, iou_type, q))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p.start()
        out = q.get()
        p.join()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the whole child process (interpreter start, imports, the work): user + sys
        out["proc_cpu"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if "skipped" in out:
            return out
        if best is None or out["cpu"] < best["cpu"]:
            best = out
    return best


def write_files(gt, dt):
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-"))
    gp, dp = tmp / "gt.json", tmp / "dt.json"
    gp.write_text(json.dumps(gt))
    dp.write_text(json.dumps(dt))
    desc = (
        f"{len(gt['images'])} images, {len(gt['annotations'])} ground truths, {len(dt)} detections"
    )
    return tmp, gp, dp, desc


def bench(label, files, iou_type, tools, repeats=1):
    tmp, gp, dp, desc = files
    mb = f"{gp.stat().st_size / 1e6:.0f} + {dp.stat().st_size / 1e6:.0f} MB"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n== {label}: {desc}, {iou_type}; best of {repeats} run(s) per tool; files {mb}")
    print(f"   {time.strftime('%Y-%m-%d %H:%M')}, load average {load} on {os.cpu_count()} CPUs")
    t = time.perf_counter()
    json.loads(dp.read_text()), json.loads(gp.read_text())
    print(f"   reading both files with the json module alone: {time.perf_counter() - t:.2f} s")
    res = {}
    for name in tools:
        if name == "valor-lite" and iou_type != "bbox":
            continue
        res[name] = run_tool(name, str(gp), str(dp), iou_type, repeats)
    a = res.get("assay", {})
    refs = [n for n in ("pycocotools", "hotcoco-1thread") if "stats" in res.get(n, {})]
    ref_name = refs[0] if refs else ""
    ref = res[ref_name]["stats"] if ref_name else None
    head = f"{'tool':<18}{'total s':>9}{'read s':>8}{'eval s':>8}{'CPU s':>7}{'proc CPU':>9}"
    head += f"{'peak MB':>9}"
    print(f"   {head}{'CPU x':>7}{'mem x':>7}  AP     max|stat diff| vs {ref_name}")
    for name, r in res.items():
        if "skipped" in r:
            print(f"   {name:<18} skipped: {r['skipped']}")
            continue
        diff = ""
        if ref is not None:
            pairs = [(x, y) for x, y in zip(r["stats"], ref) if x is not None]
            diff = f"{max(abs(x - y) for x, y in pairs):.1e}" if pairs else ""
        tr = r["cpu"] / a["cpu"] if a.get("cpu") else float("nan")
        mr = r["peak_mb"] / a["peak_mb"] if a.get("peak_mb") else float("nan")
        cols = f"{r['total']:>9.2f}{r['read']:>8.2f}{r['eval']:>8.2f}{r['cpu']:>7.2f}"
        cols += f"{r['proc_cpu']:>9.2f}{r['peak_mb']:>9.0f}{tr:>7.2f}{mr:>7.2f}"
        print(f"   {name:<18}{cols}  {r['stats'][0]:.4f} {diff}")
    h = res.get("hotcoco-1thread", {})
    r = res.get("assay", {})
    if r.get("cpu") and h.get("cpu"):
        print(
            f"   assay (API) / hotcoco single-threaded: CPU from the files "
            f"{r['cpu'] / h['cpu']:.2f} x, whole process CPU "
            f"{r['proc_cpu'] / h['proc_cpu']:.2f} x, "
            f"peak memory {r['peak_mb'] / h['peak_mb']:.2f} x"
        )
    r = res.get("assay-cli", {})
    if r.get("cpu") and h.get("cpu"):
        # the command's CPU ("CPU s") is its whole process (interpreter, imports): like for
        # like, hotcoco's whole child process (interpreter, imports, multiprocessing's start,
        # which flatters hotcoco a little less); against hotcoco's work alone for reference
        print(
            f"   assay detection (CLI) / hotcoco single-threaded: whole process CPU "
            f"{r['cpu'] / h['proc_cpu']:.2f} x (against hotcoco's work alone "
            f"{r['cpu'] / h['cpu']:.2f} x), peak memory {r['peak_mb'] / h['peak_mb']:.2f} x"
        )
    if "iou_only" in a:
        ratio = a["eval"] / a["iou_only"]
        print(
            f"   assay: evaluation after reading {a['eval']:.2f} s = {ratio:.1f} x the time to "
            f"compute all IoUs alone ({a['iou_only']:.2f} s)"
        )
    shutil_rm(tmp)
    return res


def bench_confusion(files, repeats=1):
    """Detection confusion matrix (2 IoU x 2 score thresholds): assay and valor-lite."""
    tmp, gp, dp, desc = files
    print(f"\n== ConfusionMatrix, bbox: {desc}; IoU {CM_IOUS} x score {CM_SCORES}")
    res = {n: run_tool(f"cm:{n}", str(gp), str(dp), "bbox", repeats) for n in CM_TOOLS}
    print(f"   {'tool':<18}{'total s':>9}{'read s':>8}{'eval s':>8}{'CPU s':>7}{'peak MB':>9}")
    for name, r in res.items():
        if "skipped" in r:
            print(f"   {name:<18} skipped: {r['skipped']}")
            continue
        cols = f"{r['total']:>9.2f}{r['read']:>8.2f}{r['eval']:>8.2f}{r['cpu']:>7.2f}"
        cols += f"{r['peak_mb']:>9.0f}"
        print(f"   {name:<18}{cols}")
    a, v = res["assay"].get("stats"), res["valor-lite"].get("stats")
    if a is not None and v is not None:
        print(f"   totals (matched same label, cross label, unmatched gt, unmatched pd): "
              f"assay {a[0]}, valor-lite {v[0]}; all equal: {a == v}")  # fmt: skip
    shutil_rm(tmp)
    return res


def _compile_assay() -> str:
    """Compile assay's sources to bytecode (``__pycache__``, as ``pip install`` does), so
    that neither the API's nor the CLI's child compiles them on every run: a checkout run
    with ``PYTHONDONTWRITEBYTECODE`` would otherwise pay that in each process."""
    import compileall

    import assay

    where = Path(assay.__file__).parent
    ok = compileall.compile_dir(where, quiet=1, force=False)
    return f"{where}: {'ok' if ok else 'some files failed'}"


def shutil_rm(p: Path) -> None:
    import shutil

    shutil.rmtree(p, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--images", default="5000", help="comma-separated sizes, e.g. 500,5000,20000")
    ap.add_argument("--segm-images", default="500", help="comma-separated sizes")
    ap.add_argument("--skip-segm", action="store_true")
    ap.add_argument("--only", default=",".join(TOOLS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--repeats", type=int, default=1, help="runs per tool (best kept), same for all"
    )
    ap.add_argument(
        "--confusion-matrix",
        action="store_true",
        help="only the detection ConfusionMatrix benchmark (assay and valor-lite)",
    )
    args = ap.parse_args(argv)
    tools = [t for t in args.only.split(",") if t in TOOLS]
    sizes = [int(x) for x in args.images.split(",")]
    if args.confusion_matrix:
        for n in sizes:
            bench_confusion(write_files(*generate(n, segm=False, seed=args.seed)), args.repeats)
        return 0
    import gc

    compiled = _compile_assay()
    print(f"assay compiled to bytecode first, as an install does ({compiled})")
    for n in sizes:
        t = time.perf_counter()
        files = write_files(*generate(n, segm=False, seed=args.seed))
        print(f"generated bbox data in {time.perf_counter() - t:.1f} s")
        gc.collect()  # the generated objects are gone: tools start from files only
        bench("bbox", files, "bbox", tools, args.repeats)
    for n in [] if args.skip_segm else [int(x) for x in args.segm_images.split(",")]:
        files = write_files(*generate(n, segm=True, seed=args.seed + 1))
        gc.collect()
        bench("segm", files, "segm", [x for x in tools if x != "valor-lite"], args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
