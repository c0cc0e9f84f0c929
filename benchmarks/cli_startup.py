"""How long the ``assay`` command takes to answer ``--help``: cold processes, median of runs.

Every measurement starts a fresh interpreter (``python -m assay ...``), as a shell
does, and times it to exit. Printed per command: the median and the fastest of
``--repeat`` runs (default 7), and the heavy libraries the command imported on the
way (``python -X importtime``). The target is well under 0.5 s for every line.

Run: ``python benchmarks/cli_startup.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("numpy", "pandas", "scipy", "statsmodels", "sqlalchemy", "sklearn", "openai")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def time_once(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "assay", *args],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - t0


def heavy_imports(args: list[str]) -> list[str]:
    res = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "assay", *args],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    names = {ln.rsplit("|", 1)[1].strip() for ln in res.stderr.splitlines() if "|" in ln}
    return sorted(n for n in names if n in HEAVY)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    sys.path.insert(0, SRC)
    from assay.cli.main import COMMANDS

    cases = [["--help"]] + [[name, "--help"] for name in COMMANDS]
    time_once(["--help"])  # warm the file cache once
    print(f"{'command':<28} {'median s':>9} {'min s':>7}  heavy imports")
    print("-" * 72)
    for case in cases:
        times = [time_once(case) for _ in range(args.repeat)]
        label = "assay " + " ".join(case)
        heavy = ", ".join(heavy_imports(case)) or "-"
        print(f"{label:<28} {statistics.median(times):>9.3f} {min(times):>7.3f}  {heavy}")
    bare = [time_once(["--version"]) for _ in range(args.repeat)]
    print(f"{'assay --version':<28} {statistics.median(bare):>9.3f} {min(bare):>7.3f}")
    t = [_time_python() for _ in range(args.repeat)]
    print(f"{'python -c pass (floor)':<28} {statistics.median(t):>9.3f} {min(t):>7.3f}")


def _time_python() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
