"""`make demo`: real end-to-end evaluations on data that ships with installed packages.

Each domain contributes one section, a module in this folder with
``run(out_dir: Path, console: rich.console.Console) -> None``. Results are printed as
tables, written as JSON under ``demo-output/`` and saved in its store (``assay.db``, made
afresh by each run: a re-run replaces the runs of the one before and says so); the demo
ends by writing the HTML report of its runs (``demo-output/report.html``) and printing its
path.
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
    "pairwise",
    "suites",
)

#: The sections that call the embedded model (their total time is printed at the end).
LLM_SECTIONS = ("llm", "text", "pairwise", "suites")


def main(sections: list[str] | None = None, out: Path = OUT) -> int:
    """Run ``sections`` (default: every one) into ``out`` with a fresh store."""
    console = Console()
    out.mkdir(exist_ok=True)
    sys.path.insert(0, str(HERE))
    import saving

    replaced = saving.fresh_store(out)
    if replaced:
        console.print(
            f"[dim]replaced the store of an earlier demo run ({replaced} runs): "
            f"{out / 'assay.db'} holds this run's evaluations only[/]"
        )
    times: dict[str, float] = {}
    for name in sections or SECTIONS:  # `python demo/run.py text pairwise`: only those
        t0 = time.perf_counter()
        console.rule(f"[bold]{name}")
        importlib.import_module(name).run(out, console)
        times[name] = time.perf_counter() - t0
        console.print(f"[dim]{name}: {times[name]:.1f} s[/]")
    llm = {k: v for k, v in times.items() if k in LLM_SECTIONS}
    if llm:
        console.print(
            f"\nLLM sections ({', '.join(f'{k} {v:.0f} s' for k, v in llm.items())}): "
            f"{sum(llm.values()):.0f} s in total"
        )
    console.print(f"\nAll results written under [bold]{out}[/]")
    console.rule("[bold]report")
    report = saving.write_report(out, console)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
