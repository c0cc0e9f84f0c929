"""A fresh clone, then exactly the README's commands, in order.

The repository is cloned into a temporary folder. To avoid a reinstall, the clone's
``.venv`` is a link to the environment running this test (the one ``make test`` built),
and the clone's own sources come first on ``PYTHONPATH``. Then:

1. every ``make`` target the README names exists in the clone's Makefile (``make -n``);
2. the "Getting started" block runs as written, except ``make demo`` (checked in 1):
   ``source .venv/bin/activate`` gives a working ``assay`` command;
3. the "Quick start: CLI" block runs as written, in a folder holding the small input
   files it names (written here), and every command exits 0 with the outputs it promises.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _blocks(readme: str, heading: str) -> list[str]:
    """The ```sh blocks of the section under ``## heading``."""
    section = readme.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.S)


def _write_inputs(folder: Path) -> None:
    pd.DataFrame({"uid": ["a", "b", "c"], "value": ["cat", "dog", "dog"]}).to_csv(
        folder / "gts.csv", index=False
    )
    preds = [("a", "cat", 0.8), ("a", "dog", 0.2), ("b", "dog", 0.9), ("c", "cat", 0.6)]
    (folder / "preds.jsonl").write_text(
        "".join(json.dumps({"uid": u, "value": v, "score": s}) + "\n" for u, v, s in preds)
    )
    rng = np.random.default_rng(0)
    n = 60
    pd.DataFrame(
        {
            "y": rng.integers(0, 2, n),
            "yhat": rng.integers(0, 2, n),
            "sex": rng.integers(0, 2, n),
            "age": rng.integers(18, 80, n),
        }
    ).to_parquet(folder / "people.parquet")
    (folder / "logs").mkdir()
    for part in range(2):  # a Parquet dataset: a glob of files
        pd.DataFrame({"y": rng.integers(0, 2, n), "score": rng.random(n).round(2)}).to_parquet(
            folder / "logs" / f"part-{part}.parquet"
        )
    pd.DataFrame(
        {
            "label": rng.integers(0, 2, n),
            "proba": rng.random(n),
            "site": rng.choice(["north", "south"], n),
        }
    ).to_csv(folder / "scores.csv", index=False)
    images = [{"id": i, "width": 100, "height": 100} for i in (1, 2)]
    anns = [
        {
            "id": 1,
            "image_id": 1,
            "category_id": 1,
            "bbox": [10, 10, 20, 20],
            "area": 400,
            "iscrowd": 0,
        },
        {
            "id": 2,
            "image_id": 2,
            "category_id": 2,
            "bbox": [50, 50, 30, 30],
            "area": 900,
            "iscrowd": 0,
        },
    ]
    cats = [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}]
    (folder / "instances_val.json").write_text(
        json.dumps({"images": images, "annotations": anns, "categories": cats})
    )
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [11, 10, 20, 20], "score": 0.9},
        {"image_id": 2, "category_id": 2, "bbox": [0, 0, 10, 10], "score": 0.4},
    ]
    (folder / "detections.json").write_text(json.dumps(dets))
    sc1 = rng.integers(1, 5, n)
    pd.DataFrame(
        {
            "sc1": sc1,
            "score": sc1 + rng.normal(0, 0.6, n),
            "sc2": np.clip(sc1 + rng.integers(-1, 2, n), 1, 4),
            "L1": rng.choice(["en", "es", "zh"], n),
        }
    ).to_csv(folder / "responses.csv", index=False)


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_fresh_clone_follows_the_readme(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    (clone / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    readme = (clone / "README.md").read_text()
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    env.pop("VIRTUAL_ENV", None)

    targets = sorted(set(re.findall(r"`?make ([a-z][\w-]*)", readme)))
    assert {"demo", "test", "test-fast", "lint", "bench"} <= set(targets)
    for t in targets:
        dry = subprocess.run(["make", "-n", t], cwd=clone, capture_output=True, text=True)
        assert dry.returncode == 0, (t, dry.stderr)

    (start,) = _blocks(readme, "Getting started")
    lines = [ln.split("#", 1)[0].strip() for ln in start.splitlines()]
    commands = [ln for ln in lines if ln and not ln.startswith("make ")]
    assert commands[0] == "source .venv/bin/activate" and "assay --help" in commands
    res = _bash("\n".join(commands), clone, env)
    assert res.returncode == 0, res.stderr
    assert "classification" in res.stdout and "runs" in res.stdout

    work = tmp_path / "work"
    work.mkdir()
    _write_inputs(work)
    (quick,) = _blocks(readme, "Quick start: CLI")
    script = f"source {clone}/.venv/bin/activate\n" + quick
    res = _bash(script, work, env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Traceback" not in res.stderr
    fairness = json.loads((work / "fairness.json").read_text())
    assert {m["type"] for m in fairness} >= {"StatisticalParityDifference", "DisparateImpact"}
    assert any(p.suffix == ".csv" for p in (work / "tables").iterdir())
    assert "Precision" in res.stdout  # the classification table


DEMO_OUTPUTS = (
    "classification.json",
    "fairness.json",
    "stats.json",
    "detection.json",
    "segmentation.json",
    "llm.json",
    "text.json",
    "suites-cat.json",
    "suites-fairness.json",
    "suites-language.json",
)


def test_make_demo_is_the_first_command_of_a_fresh_clone(tmp_path):
    """A new user's first command: ``make demo`` in a fresh clone, with nothing else installed.

    The clone builds its own ``.venv`` from the ``demo`` and ``local`` extras only (pip's wheel
    cache makes this minutes, not the first install's quarter hour), so a demo section that
    imports a package only the ``dev`` extra installs fails here.
    """
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("git and make are needed")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    if not head:
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    subprocess.run(["git", "checkout", "--quiet", head], cwd=clone, check=True, timeout=60)
    assert not (clone / ".venv").exists()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not k.startswith("ASSAY_")
    }
    # The system's python3, not the one running this test (whose venv has every extra).
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(sys.prefix)
    )
    env["ASSAY_HOME"] = str(tmp_path / "home")
    res = subprocess.run(
        ["make", "demo"], cwd=clone, env=env, capture_output=True, text=True, timeout=3000
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Traceback" not in res.stderr
    for name in DEMO_OUTPUTS:
        path = clone / "demo-output" / name
        assert path.is_file() and json.loads(path.read_text()), name
    assert "<html" in (clone / "demo-output" / "report.html").read_text()[:2000].lower()
    # Only the demo's extras went in: the dev tools did not.
    assert not (clone / ".venv" / "bin" / "pytest").exists()
