"""The run folder: the original's files (log, record table, length stats, win tables) and assay's.

A run folder is ``{out_dir}/{stem}_record{i}_{judge}_{nopt}`` with ``i`` the first free
number; it is created exclusively (``mkdir`` fails if it exists), so a run never
overwrites an earlier one, and its files appear together (written atomically).

Files: ``log.txt``; ``record_{judge}_{nopt}.tsv`` (the original's format) and
``comparisons.jsonl`` (assay's); ``length_stats.csv``; ``win+halfdraw.csv`` and
``win+bothgood.csv`` (``.xlsx`` too with ``xlsx=True``); ``win_rate_with_tie.csv`` and
``win_rate_without_tie.csv``; ``consistent_cmp.tsv`` and ``inconsistent_cmp.tsv`` when some
pair is inconsistent; and beyond the original ``pairwise_win_rates.csv``, ``ratings.csv``,
``length_controlled.csv`` and ``metrics.json``.

The original's win tables are computed as the original does (float32 ratios, 0 where a
model has no consistent comparison in a column, rounded to 4 places, best first).

Example:
    >>> old = pd.DataFrame({"model": ["m", "m"], "column": ["Overall-lang", "EN"], "win": [1, 1],
    ...     "lose": [2, 2], "both": [0, 0], "neither": [0, 0], "tot": [3, 3]})
    >>> t = original_win_table(old, "win+bothgood")
    >>> t.columns.tolist(), t["EN"].dtype, round(float(t["EN"][0]), 6)
    (['model', 'Overall-lang', 'EN'], dtype('float32'), 0.3333)
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from assay.io.files import safe_filename, write_files_atomic
from assay.io.xlsx import write_xlsx
from assay.llm.pairwise.analysis import Analysis
from assay.llm.pairwise.length import LENGTH_UNIT, length_stats
from assay.llm.pairwise.recordfile import original_tsv, records_jsonl

__all__ = ["original_win_table", "log_text", "run_files", "new_run_folder"]


def original_win_table(old: pd.DataFrame, kind: str) -> pd.DataFrame:
    """One of the original's tables (``win+bothgood`` or ``win+halfdraw``): model x column."""
    f32 = np.float32
    tot = old["tot"].to_numpy(f32)
    safe = np.where(tot > 0, tot, f32(1))
    wr = np.where(tot > 0, old["win"].to_numpy(f32) / safe, f32(0))
    wff = np.where(tot > 0, old["both"].to_numpy(f32) / safe, f32(0))
    lff = np.where(tot > 0, old["neither"].to_numpy(f32) / safe, f32(0))
    value = wr + wff if kind == "win+bothgood" else wr + (wff + lff) / f32(2.0)
    long = pd.DataFrame({"model": old["model"], "column": old["column"], "v": value.astype(f32)})
    columns = list(dict.fromkeys(old["column"]))
    if long.empty:
        return pd.DataFrame(columns=["model", *columns])
    wide = long.pivot(index="model", columns="column", values="v")[columns].reset_index()
    wide.columns.name = None
    wide = wide.sort_values(["Overall-lang", "model"], ascending=[False, True])
    return wide.round(4).reset_index(drop=True)


def _table(df: pd.DataFrame) -> str:
    return df.to_string(index=False) if len(df) else "(none)"


def _csv(df: pd.DataFrame, **kw: object) -> str:
    buf = io.StringIO()
    df.to_csv(buf, index=False, **kw)  # type: ignore[arg-type]
    return buf.getvalue()


def _new_csv(a: Analysis, col: str, name: str) -> pd.DataFrame:
    keys = [f"{m};{x};{y}" for m, x, y in zip(a.new["metric"], a.new["model"], a.new["opponent"])]
    return pd.DataFrame({"Metric;Model": keys, name: a.new[col].fillna(0.0).to_numpy()})


def log_text(a: Analysis, rows: pd.DataFrame, reference_model: str) -> str:
    """The log: length stats, totals, failures, extraction, consistency, win tables."""
    c = a.counts
    lines = [
        f"Response length (in {LENGTH_UNIT} and words; the original counts cl100k_base tokens)",
        _table(length_stats(rows)),
        f"Total comparisons: {c['total']}. Failed to response: {c['failed']}",
        f"Total comparisons: {c['total']}. Non exact matches:  {c['non_em']}",
    ]
    rate = 100.0 * c["extracted"] / c["non_em"] if c["non_em"] else float("nan")
    lines.append(
        f"Extracted {c['extracted']} answers from the responses "
        f"(extraction success rate {rate:.2f}%)"
    )
    if c["consistent"] != c["extracted"]:
        pct = 100.0 * c["consistent"] / c["extracted"]
        lines.append(
            f"{c['consistent']} out of {c['extracted']} answers are consistent. "
            f"(A vs. B <-> B vs. A) The consistent rate is {pct:.2f}%"
        )
    for title, kind in (
        ("(Win + Draw / 2)", "win+halfdraw"),
        ("(Win + Both Good)", "win+bothgood"),
    ):
        lines += [f"{title} w. {reference_model}: ", _table(original_win_table(a.old, kind))]
    lines += [
        "New win rates (inconsistent pairs count as ties), per metric:",
        _table(a.new[["metric", "model", "opponent", "with_tie", "without_tie"]]),
        "Bradley-Terry ratings (position-debiased outcomes):",
        _table(a.ratings.table() if a.ratings is not None else pd.DataFrame()),
    ]
    return "\n".join(lines) + "\n"


def run_files(
    a: Analysis,
    rows: pd.DataFrame,
    *,
    reference_model: str,
    judge: str,
    nopt: int,
    metrics_json: str,
    xlsx: bool = False,
) -> dict[str, str | bytes]:
    """Every file of the run folder, by name."""
    files: dict[str, str | bytes] = {
        "log.txt": log_text(a, rows, reference_model),
        safe_filename(f"record_{judge}_{nopt}.tsv"): original_tsv(rows, judge=judge),
        "comparisons.jsonl": records_jsonl(rows),
        "length_stats.csv": _csv(length_stats(rows)),
        "win_rate_with_tie.csv": _csv(_new_csv(a, "with_tie", "WinRateWithTie")),
        "win_rate_without_tie.csv": _csv(_new_csv(a, "without_tie", "WinRateWithoutTie")),
        "pairwise_win_rates.csv": _csv(a.pairwise),
        "metrics.json": metrics_json,
    }
    for kind in ("win+halfdraw", "win+bothgood"):
        table = original_win_table(a.old, kind)
        files[f"{kind}.csv"] = _csv(table)
        if xlsx:
            files[f"{kind}.xlsx"] = write_xlsx(table)  # data text never becomes a formula
    if a.ratings is not None:
        files["ratings.csv"] = _csv(a.ratings.table())
    lc = pd.DataFrame([lc.__dict__ for lc in a.length_controlled])
    files["length_controlled.csv"] = _csv(lc)
    if len(a.inconsistent):
        files["consistent_cmp.tsv"] = original_tsv(_full(rows, a.consistent), judge=judge)
        files["inconsistent_cmp.tsv"] = original_tsv(_full(rows, a.inconsistent), judge=judge)
    return files


def _full(rows: pd.DataFrame, subset: pd.DataFrame) -> pd.DataFrame:
    return rows.loc[subset.index]


def new_run_folder(out_dir: str | Path, stem: str) -> Path:
    """Create ``{out_dir}/{stem}{i}`` with the first free ``i`` (exclusively) and return it."""
    base = Path(out_dir)
    base.mkdir(parents=True, exist_ok=True)
    i = 0
    while True:
        path = base / f"{safe_filename(stem.replace('{i}', str(i)))}"
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            i += 1


def write_run(folder: Path, files: dict[str, str | bytes]) -> list[Path]:
    """Write the files into the (new, empty) run folder, all together."""
    return write_files_atomic(folder, files)
