"""Every metric command against its Python API: the same work from the same files.

For each command (classification, fairness, detection, segmentation, scoring, stats, text)
the benchmark writes one input at the size of that domain's benchmark's largest cell (or
``--scale`` times it), then runs, each in a fresh process:

* the command a user types (``python -m assay COMMAND ... --out records.json``);
* a Python script doing the same work through the public API from the same files (reading
  them with the API's own readers, or pandas where the API takes a frame) and writing the
  records with ``MetricSet.to_json``.

Both figures are whole processes (interpreter start, imports, reading, computing, writing
the records): user + system CPU seconds, wall seconds and peak RSS, from ``/usr/bin/time``
when present, else ``getrusage`` (then RSS is not per run). Each side runs ``--repeats``
times, alternating, and the least CPU is kept. A line per command gives CLI / API CPU and
PASS when it is at most 1.2 (issue 33: every command within 1.2x of its API), and whether
the two wrote the same record values. assay is compiled to bytecode first (as an install
does), so neither side compiles sources.

The largest cells: classification 1e8 rows of ``benchmarks/scale.py`` (its own CLI line is
that benchmark's; here 1e7 rows, one Parquet file, by default), fairness 1e6 rows and 6
groups (``benchmarks/fairness.py --sizes 1e6``), detection 20,000 images
(``benchmarks/detection.py``), semantic segmentation 1,000 images of 512 x 512 (no peer
benchmark), scoring 1e6 responses (``benchmarks/scoring.py``), stats 1e6 scores
(``benchmarks/stats.py``), text 10,000 pairs (``benchmarks/text.py``).

Usage: ``python benchmarks/cli_api.py [--only detection,stats] [--scale 0.1] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LIMIT = 1.2


# ---------------------------------------------------------------- inputs, one per command


def _classification(folder: Path, n: int) -> dict[str, Path]:
    import pandas as pd

    rng = np.random.default_rng(0)
    y = (rng.random(n) < 0.3).astype(np.int8)
    score = np.round(np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1), 3)
    path = folder / "scored.parquet"
    pd.DataFrame({"y": y, "score": score}).to_parquet(path, index=False)
    return {"data": path}


def _fairness(folder: Path, n: int) -> dict[str, Path]:
    import pandas as pd

    rng = np.random.default_rng(1)
    g = rng.choice(np.array(["a", "b", "c", "d", "e", "f"]), n)
    y = (rng.random(n) < 0.4).astype(np.int8)
    yhat = np.where(rng.random(n) < 0.8, y, 1 - y).astype(np.int8)
    path = folder / "people.parquet"
    pd.DataFrame({"y": y, "yhat": yhat, "g": g}).to_parquet(path, index=False)
    return {"data": path}


def _detection(folder: Path, n: int) -> dict[str, Path]:
    sys.path.insert(0, str(Path(__file__).parent))
    from detection import generate

    gt, dt = generate(n, segm=False, seed=0)
    paths = {"gt": folder / "gt.json", "dt": folder / "dt.json"}
    paths["gt"].write_text(json.dumps(gt))
    paths["dt"].write_text(json.dumps(dt))
    return paths


def _segmentation(folder: Path, n: int) -> dict[str, Path]:
    """Each image cut into horizontal bands (masks never overlap), one label each; the
    predictions cut the same image at jittered heights."""
    rng = np.random.default_rng(2)
    size, labels = 512, ["road", "car", "sky", "tree", "person"]

    def bands(cuts: list[int]) -> list[dict]:
        edges = [0, *sorted(set(cuts)), size]
        return [
            {"label": labels[i % len(labels)], "box": [0, y0, size, y1]}
            for i, (y0, y1) in enumerate(zip(edges, edges[1:]))
            if y1 > y0
        ]

    gt, pr = [], []
    for i in range(n):
        cuts = np.sort(rng.integers(1, size, 4))
        moved = np.clip(cuts + rng.integers(-20, 21, 4), 1, size - 1)
        image = {"uid": f"i{i}", "height": size, "width": size}
        gt.append({**image, "annotations": bands(cuts.tolist())})
        pr.append({"uid": f"i{i}", "annotations": bands(moved.tolist())})
    paths = {"gt": folder / "gt.jsonl", "pr": folder / "pr.jsonl"}
    paths["gt"].write_text("".join(json.dumps(r) + "\n" for r in gt))
    paths["pr"].write_text("".join(json.dumps(r) + "\n" for r in pr))
    return paths


def _scoring(folder: Path, n: int) -> dict[str, Path]:
    import pandas as pd

    rng = np.random.default_rng(3)
    h1 = rng.integers(1, 7, n)
    system = np.clip(h1 + rng.normal(0, 0.8, n), 0.5, 6.5).round(4)
    path = folder / "scores.csv"
    pd.DataFrame({"id": np.arange(n), "sc1": h1, "score": system}).to_csv(path, index=False)
    return {"data": path}


def _stats(folder: Path, n: int) -> dict[str, Path]:
    rng = np.random.default_rng(4)
    letters = np.where(rng.random(n) < 0.7, "C", "I")
    path = folder / "scores.jsonl"
    with path.open("w") as fh:
        for i, v in enumerate(letters.tolist()):
            fh.write(json.dumps({"sample_id": f"s{i}", "epoch": 1, "value": v}) + "\n")
    return {"data": path}


def _text(folder: Path, n: int) -> dict[str, Path]:
    sys.path.insert(0, str(Path(__file__).parent))
    from text import corpus

    preds, refs = corpus(n)
    path = folder / "pairs.jsonl"
    with path.open("w") as fh:
        for i, (p, r) in enumerate(zip(preds, refs)):
            fh.write(json.dumps({"uid": i, "prediction": p, "groundtruth": r}) + "\n")
    return {"data": path}


# ---------------------------------------------------------------- the two sides of each case


@dataclass
class Case:
    size: int  # the largest cell of the domain's benchmark
    unit: str
    make: Callable[[Path, int], dict[str, Path]]
    cli: Callable[[dict[str, Path]], list[str]]
    api: str  # Python source; {name} fields are the input paths
    out_dir: bool = False  # the command writes a folder (--out-dir), its records metrics.json


CASES: dict[str, Case] = {
    "classification": Case(
        10**7,
        "rows",
        _classification,
        lambda p: (
            ["classification", "--data", str(p["data"]), "--y-true", "y"] + ["--y-score", "score"]
        ),
        "import pandas as pd\n"
        "from assay.classification import ClassificationEvaluator\n"
        "ev = ClassificationEvaluator(score_thresholds=[0.0])\n"
        "ev.add_wide(pd.read_parquet({data!r}), y_true='y', y_score='score', positive_label=1)\n"
        "ms = ev.compute()\n",
    ),
    "fairness": Case(
        10**6,
        "rows",
        _fairness,
        lambda p: (
            ["fairness", "--data", str(p["data"]), "--label", "y"]
            + ["--prediction", "yhat", "--group", "g"]
        ),
        "import pandas as pd\n"
        "from assay.fairness import FairnessEvaluator\n"
        "ev = FairnessEvaluator(group_columns=['g'])\n"
        "ev.add(pd.read_parquet({data!r}), label='y', prediction='yhat')\n"
        "ms = ev.compute()\n",
    ),
    "detection": Case(
        20_000,
        "images",
        _detection,
        lambda p: ["detection", "--groundtruths", str(p["gt"]), "--predictions", str(p["dt"])],
        "from assay.detection import DetectionEvaluator, load_coco\n"
        "ms = DetectionEvaluator().add(load_coco({gt!r}, {dt!r})).compute()\n",
    ),
    "segmentation": Case(
        1_000,
        "images",
        _segmentation,
        lambda p: ["segmentation", "--groundtruths", str(p["gt"]), "--predictions", str(p["pr"])],
        "import json\n"
        "from assay.segmentation import SegmentationEvaluator\n"
        "rows = lambda f: [json.loads(x) for x in open(f) if x.strip()]\n"
        "ms = SegmentationEvaluator().add(rows({gt!r}), rows({pr!r})).compute()\n",
    ),
    "scoring": Case(
        10**6,
        "responses",
        _scoring,
        lambda p: ["scoring", "--data", str(p["data"]), "--human", "sc1", "--system", "score"],
        "import pandas as pd\n"
        "from assay.scoring import ScoringEvaluator\n"
        "ev = ScoringEvaluator(human='sc1', system='score')\n"
        "ms = ev.add(pd.read_csv({data!r})).compute()\n",
        out_dir=True,
    ),
    "stats": Case(
        10**6,
        "scores",
        _stats,
        lambda p: ["stats", "--scores", str(p["data"])],
        "import json\n"
        "import assay.stats as st\n"
        "scores = [st.SampleScore(st.Score(r['value']), r['sample_id'], r['epoch'])\n"
        "          for r in map(json.loads, open({data!r}))]\n"
        "ms = st.ScoreEvaluator([st.mean(), st.stderr()]).add(scores).compute()\n",
    ),
    "text": Case(
        10_000,
        "pairs",
        _text,
        lambda p: ["text", "--data", str(p["data"])],
        "import json\n"
        "from assay.text.evaluator import TextEvaluator\n"
        "rows = [json.loads(x) for x in open({data!r})]\n"
        "ev = TextEvaluator().add([r['prediction'] for r in rows],\n"
        "                         [r['groundtruth'] for r in rows])\n"
        "ms = ev.compute()\n",
    ),
}


# ---------------------------------------------------------------- measuring


def _env() -> dict[str, str]:
    path = os.pathsep.join(x for x in [str(SRC), os.environ.get("PYTHONPATH", "")] if x)
    return {**os.environ, "PYTHONPATH": path}


def _run(argv: list[str]) -> dict[str, float]:
    """One process: CPU (user + sys), wall and peak RSS (MB; nan without /usr/bin/time)."""
    timer = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        cmd = [timer, "-f", "%e %U %S %M", "-o", tf.name, *argv] if timer else argv
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        done = subprocess.run(cmd, env=_env(), capture_output=True, text=True, check=False)
        wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:4])} ...: {done.stderr.strip()[-400:]}")
        if timer:
            e, u, s, m = Path(tf.name).read_text().split()[-4:]
            return {"cpu": float(u) + float(s), "wall": float(e), "rss": int(m) / 1024}
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"cpu": cpu, "wall": wall, "rss": float("nan")}


def _values(path: Path) -> list[str]:
    """The records' types and values, in a canonical order (parameters differ: the CLI
    records its file names)."""
    text = path.read_text()
    try:
        recs = json.loads(text)
    except json.JSONDecodeError:  # JSON lines
        recs = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(recs, dict):  # {"records": [...], ...}
        recs = recs.get("records", recs.get("metrics", []))
    return sorted(json.dumps([r["type"], r["value"]], sort_keys=True) for r in recs)


def measure(name: str, case: Case, scale: float, repeats: int) -> None:
    n = max(1, int(case.size * scale))
    folder = Path(tempfile.mkdtemp(prefix=f"assay-cli-api-{name}-"))
    try:
        t = time.perf_counter()
        paths = case.make(folder, n)
        made = time.perf_counter() - t
        mb = sum(p.stat().st_size for p in paths.values()) / 1e6
        cli_out, api_out = folder / "cli.json", folder / "api.json"
        cli = [sys.executable, "-m", "assay", *case.cli(paths)]
        if case.out_dir:
            cli += ["--out-dir", str(folder / "cli")]
            cli_out = folder / "cli" / "metrics.json"
        else:
            cli += ["--out", str(cli_out)]
        fields = {k: str(v) for k, v in paths.items()}
        code = case.api.format(**fields) + f"open({str(api_out)!r}, 'w').write(ms.to_json())\n"
        api = [sys.executable, "-c", code]
        best: dict[str, dict[str, float]] = {}
        for _ in range(repeats):
            for side, argv in (("cli", cli), ("api", api)):
                r = _run(argv)
                if side not in best or r["cpu"] < best[side]["cpu"]:
                    best[side] = r
        same = _values(cli_out) == _values(api_out)
        c, a = best["cli"], best["api"]
        ratio = c["cpu"] / a["cpu"]
        verdict = "PASS" if ratio <= LIMIT else "FAIL"
        print(f"\n== {name}: {n:,} {case.unit}, {mb:.0f} MB of input (written in {made:.0f} s)")
        for side, r in (("CLI", c), ("API", a)):
            print(
                f"   {side}  {r['cpu']:8.2f} s CPU {r['wall']:8.2f} s wall {r['rss']:7.0f} MB peak"
            )
        print(
            f"   CLI / API: {ratio:.2f}x CPU, {c['wall'] / a['wall']:.2f}x wall, "
            f"{c['rss'] / a['rss']:.2f}x peak RSS: {verdict} (at most {LIMIT}x CPU); "
            f"same record values: {same}",
            flush=True,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _compile_assay() -> None:
    """Bytecode for assay's sources, as an install has (see benchmarks/detection.py)."""
    import compileall

    compileall.compile_dir(SRC / "assay", quiet=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated commands")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each largest cell")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each side (least CPU kept)")
    args = ap.parse_args(argv)
    _compile_assay()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {load} on {os.cpu_count()} CPUs; "
          f"scale {args.scale:g} of each largest cell, best of {args.repeats}")  # fmt: skip
    for name in args.only.split(","):
        try:
            measure(name, CASES[name], args.scale, args.repeats)
        except RuntimeError as e:  # one command's failure does not hide the others'
            print(f"\n== {name}: failed: {e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
