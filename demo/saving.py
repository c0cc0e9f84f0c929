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


def fresh_store(out_dir: Path) -> int:
    """Remove the store of an earlier demo run, so that each run's store holds its own runs
    only; returns how many runs it held (0 when there was none)."""
    path = out_dir / "assay.db"
    if not path.exists():
        return 0
    with store(out_dir) as st:
        n = len(st.list(limit=100_000))
    for p in (path, path.with_name("assay.db-wal"), path.with_name("assay.db-shm")):
        p.unlink(missing_ok=True)
    return n


def write_report(out_dir: Path, console: Console) -> Path:
    """The report of every run in the demo's store (this demo's runs)."""
    from assay.report.page import write_report as write

    with store(out_dir) as st:
        runs = [st.get(e.id, items=True) for e in reversed(st.list(limit=1000))]
    path = write(runs, out_dir / "report.html", title="assay demo report")
    kinds = sorted({r.kind for r in runs})
    console.print(
        f"HTML report of {len(runs)} runs ({', '.join(kinds)}): [bold]{path}[/] "
        f"({path.stat().st_size / 1e6:.1f} MB, self-contained)"
    )
    return path
