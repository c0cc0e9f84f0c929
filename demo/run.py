"""`make demo`: real end-to-end evaluations on data that ships with installed packages.

Each domain contributes one section, a module in this folder with
``run(out_dir: Path, console: rich.console.Console) -> None``. Results are printed as
tables and written as JSON under ``demo-output/``.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

from rich.console import Console

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "demo-output"

# Sections, in order. Each is a module in demo/ with run(out_dir, console).
SECTIONS: tuple[str, ...] = (
    "classification",
    "stats",
    "detection",
    "scoring",
    "llm",
    "text",
    "suites",
)


def main() -> int:
    console = Console()
    OUT.mkdir(exist_ok=True)
    sys.path.insert(0, str(HERE))
    for name in SECTIONS:
        t0 = time.perf_counter()
        console.rule(f"[bold]{name}")
        importlib.import_module(name).run(OUT, console)
        console.print(f"[dim]{name}: {time.perf_counter() - t0:.1f} s[/]")
    console.print(f"\nAll results written under [bold]{OUT}[/]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
