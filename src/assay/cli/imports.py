"""``assay import PATH...``: runs made by Inspect AI, lm-evaluation-harness or Every Eval
Ever, stored as assay runs with their samples as units.

Every path is read (and checked) before anything is stored, so one bad file stores
nothing: it is named on one line, exit 2. A run whose files were imported before (the
same bytes: its SHA-256 is in the stored run's ``import_sha256``) is not stored again.
stdout is a JSON list, one entry per run (``id``, ``status``: ``imported``,
``already_imported`` or ``would_import`` with ``--dry-run``; ``source``, ``format``,
``kind``, ``dataset``, ``model``, ``records``, ``items``); stderr has one line per run
and the notices (where assay's recomputation differs from the log's own numbers).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from assay.cli.support import guarded, note

__all__ = ["register"]


def _existing(st: Any, kind: str) -> dict[str, int]:
    """``import_sha256 -> id`` of the stored runs of ``kind``."""
    return {
        str(e.parameters["import_sha256"]): e.id
        for e in st.list(kind=kind)
        if isinstance(e.parameters.get("import_sha256"), str)
    }


def _entry(run: Any, status: str, eid: int | None) -> dict[str, Any]:
    return {
        "id": eid,
        "status": status,
        "source": run.source,
        "format": run.format,
        "kind": run.kind,
        "dataset": run.dataset,
        "model": run.model,
        "records": len(run.metrics),
        "items": len(run.items),
    }


def import_runs(paths: list[str], *, db: str | None, dry_run: bool) -> list[dict[str, Any]]:
    """Read every run the paths hold, then store the new ones; the command's entries."""
    from assay.errors import InvalidInputError
    from assay.importers.files import find_runs, read_run

    sources = find_runs(paths)
    if not sources:
        raise InvalidInputError("no run found to import", source=" ".join(paths))
    runs = [read_run(s) for s in sources]  # every file checked before anything is stored
    for r in runs:
        _check_storable(r)
    if dry_run:
        out = []
        for r in runs:
            note(f"would import {r.source}: {r.kind}, {r.dataset}, {r.model}, "
                 f"{len(r.metrics)} records, {len(r.items)} items")  # fmt: skip
            for n in r.notices:
                note(f"  {n}")
            out.append(_entry(r, "would_import", None))
        return out
    return _store(runs, db)


def _check_storable(run: Any) -> None:
    """The store's own checks on names and ids (no NUL, valid Unicode), made before
    anything is stored; errors name the file and the item."""
    from assay.errors import InvalidInputError
    from assay.store.rows import check_text

    try:
        for name in ("kind", "dataset", "model"):
            check_text(getattr(run, name), name)
        for it in run.items:
            check_text(it["item_id"], "item_id", record=f"item {it['item_id']!r}")
    except InvalidInputError as e:
        raise InvalidInputError(
            e.reason, source=run.source, record=e.record, field=e.field
        ) from None


def _row(item: dict[str, Any]) -> Any:
    from assay.store import ItemRecord

    prompt = item.get("prompt")
    return ItemRecord(**{**item, "prompt": "" if prompt is None else prompt})


def _store(runs: list[Any], db: str | None) -> list[dict[str, Any]]:
    from assay.store import Store

    out = []
    with Store(db) as st:
        known: dict[str, dict[str, int]] = {}
        for r in runs:
            seen = known.setdefault(r.kind, _existing(st, r.kind))
            if r.sha256 in seen:
                note(f"{r.source}: already imported as evaluation {seen[r.sha256]}")
                out.append(_entry(r, "already_imported", seen[r.sha256]))
                continue
            eid = st.save(
                r.metrics,
                kind=r.kind,
                dataset=r.dataset,
                model=r.model,
                parameters=r.stored_parameters(),
                items=[_row(it) for it in r.items],
                created=r.created,
            )
            seen[r.sha256] = eid
            note(f"imported {r.source} as evaluation {eid} ({r.kind}, {len(r.items)} items)")
            for n in r.notices:
                note(f"  {n}")
            out.append(_entry(r, "imported", eid))
    return out


def register(app: typer.Typer) -> None:
    @app.command("import")
    @guarded
    def import_command(
        paths: list[str] = typer.Argument(
            ...,
            help="Inspect logs (.eval, .json), lm-eval --log_samples output "
            "(samples_<task>_<date>.jsonl or its results_<date>.json) or Every Eval Ever "
            "aggregates (<uuid>.json); a directory or a glob imports every run in it.",
        ),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="Read and check every run; list them, store nothing."
        ),
        db: str | None = typer.Option(
            None,
            "--db",
            help="Store URL or SQLite file (default: $ASSAY_DATABASE_URL or $ASSAY_HOME/assay.db).",
        ),  # fmt: skip
    ) -> None:
        """Store runs made by Inspect AI, lm-evaluation-harness or Every Eval Ever.

        Each run keeps the harness's own metrics as its records (checked against assay's
        recomputation from the samples; a notice says where they differ) and one item per
        sample and epoch, so runs, compare, report and stats work on it. Importing the
        same files again stores nothing. See docs/import.md.
        """
        entries = import_runs(paths, db=db, dry_run=dry_run)
        sys.stdout.write(json.dumps(entries, indent=2, allow_nan=False) + "\n")


def export_every_eval_ever(st: Any, ids: list[int], out: Any) -> None:
    """``assay runs export ID... --format every-eval-ever --out DIR``: each run's Every
    Eval Ever files written under ``DIR/data/<collection>/<developer>/<model>/``; stdout
    lists the files written."""
    import time
    from pathlib import Path

    from assay.errors import InvalidInputError
    from assay.importers.eee_write import every_eval_ever_files
    from assay.io.files import write_atomic

    with st:
        if not ids:
            raise InvalidInputError("give the evaluation ids to export", source="runs export")
        if out is None:
            raise InvalidInputError(
                "every-eval-ever writes an aggregate and a samples file per run: "
                "give --out DIRECTORY", source="--out",
            )  # fmt: skip
        root = Path(out)
        if root.exists() and not root.is_dir():
            raise InvalidInputError("must be a directory for every-eval-ever", source="--out")
        runs = [st.get(i, items=True) for i in ids]
    written = []
    for ev in runs:
        files = every_eval_ever_files(ev.to_dict(), retrieved=str(int(time.time())))
        left = len(ev.metrics or []) - len(files.aggregate["evaluation_results"])
        if left:
            note(f"evaluation {ev.id}: {left} records without a number (undefined, "
                 f"dicts) have no place in Every Eval Ever and are left out")  # fmt: skip
        folder = root / files.folder
        folder.mkdir(parents=True, exist_ok=True)
        agg = folder / files.aggregate_name
        write_atomic(agg, json.dumps(files.aggregate, indent=2, allow_nan=False) + "\n")
        written.append(str(agg))
        if files.samples:
            samples = folder / files.samples_name
            write_atomic(samples, files.samples_text())
            written.append(str(samples))
    sys.stdout.write(json.dumps(written, indent=2) + "\n")
