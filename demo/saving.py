"""The demo's store: every section saves its runs in ``demo-output/assay.db``, and the demo
ends with the HTML report of the runs it made (``assay report``, docs/report.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from assay.results import MetricSet
from assay.store import Store


def store(out_dir: Path) -> Store:
    return Store(f"sqlite:///{out_dir / 'assay.db'}")


def save(out_dir: Path, metrics: MetricSet, console: Console, **meta: Any) -> int:
    """Store one finished run (``kind``, ``dataset``, ``model``, ``items``...); its id."""
    with store(out_dir) as st:
        eid = st.save(metrics, **meta)
    console.print(f"[dim]saved evaluation {eid} ({meta['kind']}, {len(metrics)} records)[/]")
    return eid


def last_id(out_dir: Path) -> int:
    """The newest evaluation id in the demo's store (0 when empty)."""
    with store(out_dir) as st:
        found = st.list(limit=1)
    return found[0].id if found else 0


def write_report(out_dir: Path, after: int, console: Console) -> Path:
    """The report of every run saved after evaluation ``after`` (this demo's runs)."""
    from assay.report.page import write_report as write

    with store(out_dir) as st:
        runs = [st.get(e.id, items=True) for e in reversed(st.list(limit=1000)) if e.id > after]
    path = write(runs, out_dir / "report.html", title="assay demo report")
    kinds = sorted({r.kind for r in runs})
    console.print(
        f"HTML report of {len(runs)} runs ({', '.join(kinds)}): [bold]{path}[/] "
        f"({path.stat().st_size / 1e6:.1f} MB, self-contained)"
    )
    return path
