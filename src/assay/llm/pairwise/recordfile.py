"""Per-comparison record tables: the original's ``record_{judge}_{nopt}.tsv`` and assay's JSONL.

**The original's format** (tab-separated, every field quoted): ``cmp_index`` (``{index};{A};{B}``),
``question``, ``answer1``, ``answer2``, ``A``, ``B``, ``reference_answer``,
``evaluating_guidance``, ``task`` and one column named after the judge holding its reply,
``EM`` for identical answers (not sent) or ``Failed to obtain answer via API.`` for a
failed call. Non-exact-match rows come first.

**assay's format** (``comparisons.jsonl``): one JSON object per comparison with ``index``,
``model_a``, ``model_b``, ``task``, ``question``, ``answer1``, ``answer2``,
``reference_answer``, ``evaluating_guidance``, ``judge``, ``status`` (``ok``, ``em``,
``failed``, ``unparsed``), ``reply``, ``choice``, ``reason`` (why extraction failed) and
``error`` (why the call failed), plus ``prompt_version``.

Reading either gives the same canonical rows; choices are re-extracted from the replies
with the ``nopt`` given, so a record re-scores under the current rules.

Example:
    >>> rows = pd.DataFrame({"index": ["q"], "model_a": ["a"], "model_b": ["b"], "task": ["t-g"],
    ...     "question": ["Q"], "answer1": ["x"], "answer2": ["y"], "reference_answer": [""],
    ...     "evaluating_guidance": ["g"], "reply": ["Choice: A"], "status": ["ok"],
    ...     "choice": ["A"], "reason": [""], "error": [""], "judge": ["j"]})
    >>> text = original_tsv(rows, judge="j")
    >>> text.splitlines()[0].split("\\t")[-1]
    '"j"'
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd

from assay._validation import show
from assay.errors import InvalidInputError
from assay.io.tables import read_jsonl
from assay.llm.pairwise.length import char_length, word_length
from assay.llm.pairwise.prompts import PROMPT_VERSION, extract_choice

__all__ = [
    "FAIL_MSG",
    "ORIGINAL_COLUMNS",
    "JSONL_FIELDS",
    "read_records",
    "original_tsv",
    "records_jsonl",
    "finish_rows",
]

FAIL_MSG = "Failed to obtain answer via API."
ORIGINAL_COLUMNS = (
    "cmp_index",
    "question",
    "answer1",
    "answer2",
    "A",
    "B",
    "reference_answer",
    "evaluating_guidance",
    "task",
)
_ORIGINAL_REQUIRED = ("cmp_index", "answer1", "answer2", "A", "B", "task")
JSONL_FIELDS = (
    "index",
    "model_a",
    "model_b",
    "task",
    "question",
    "answer1",
    "answer2",
    "reference_answer",
    "evaluating_guidance",
    "judge",
    "status",
    "reply",
    "choice",
    "reason",
    "error",
)
_JSONL_REQUIRED = ("index", "model_a", "model_b", "task", "status", "reply")
#: A comparison's status in assay's record table.
STATUSES = ("ok", "em", "failed", "unparsed")


def finish_rows(rows: pd.DataFrame, *, nopt: int) -> pd.DataFrame:
    """Derive ``status``/``choice``/``reason`` from ``reply`` (unless em/failed) and lengths."""
    rows = rows.copy()
    status, choice, reason = [], [], []
    for st, reply in zip(rows["status"], rows["reply"]):
        c = extract_choice(reply, nopt=nopt) if st not in ("em", "failed") else None
        status.append(st if c is None else "ok" if c.ok else "unparsed")
        choice.append("" if c is None else c.letter or "")
        reason.append("" if c is None else c.reason or "")
    rows["status"], rows["choice"], rows["reason"] = status, choice, reason
    rows["length_a"] = [float(char_length(t)) for t in rows["answer1"]]
    rows["length_b"] = [float(char_length(t)) for t in rows["answer2"]]
    rows["words_a"] = [float(word_length(t)) for t in rows["answer1"]]
    rows["words_b"] = [float(word_length(t)) for t in rows["answer2"]]
    return rows


def _from_original(df: pd.DataFrame, source: str) -> tuple[pd.DataFrame, str]:
    extra = [c for c in df.columns if c not in ORIGINAL_COLUMNS]
    if len(extra) != 1:
        raise InvalidInputError(
            f"expected exactly one judge column besides {', '.join(ORIGINAL_COLUMNS)}; "
            f"found {extra or 'none'}",
            source=source,
        )
    judge = str(extra[0])
    for row, key in enumerate(df["cmp_index"], start=1):
        if str(key).count(";") < 2:
            raise InvalidInputError(
                "expected '{index};{model A};{model B}'",
                source=source,
                record=row,
                field="cmp_index",
            )
    reply = df[judge].astype(str)
    status = ["em" if r == "EM" else "failed" if FAIL_MSG in r else "ok" for r in reply]
    rows = pd.DataFrame(
        {
            "index": [str(k).split(";")[0] for k in df["cmp_index"]],
            "model_a": df["A"].astype(str),
            "model_b": df["B"].astype(str),
            "task": df["task"].astype(str),
            "question": df.get("question", ""),
            "answer1": df["answer1"].astype(str),
            "answer2": df["answer2"].astype(str),
            "reference_answer": df.get("reference_answer", ""),
            "evaluating_guidance": df.get("evaluating_guidance", ""),
            "judge": judge,
            "status": status,
            "reply": [None if s != "ok" else r for s, r in zip(status, reply)],
            "error": ["" if s != "failed" else FAIL_MSG for s in status],
        }
    )
    return rows, judge


def _read_jsonl(path: Path) -> pd.DataFrame:
    items = read_jsonl(path)
    for n, d in enumerate(items, start=1):
        for f in _JSONL_REQUIRED:
            if f not in d:
                raise InvalidInputError("missing", source=str(path), record=n, field=f)
    if not items:
        raise InvalidInputError("no records", source=str(path))
    df = pd.DataFrame(items)
    for f in JSONL_FIELDS:
        if f not in df.columns:
            df[f] = ""
    df = df.astype({c: object for c in df.columns})
    return df.where(df.notna(), "")


def read_records(path: str | Path, *, nopt: int) -> tuple[pd.DataFrame, str]:
    """Read a record table in either format; returns the canonical rows and the judge's name.

    Raises:
        InvalidInputError: the file is in neither format (naming what is missing).
    """
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise InvalidInputError("no such file", source=source)
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(1).lstrip()
    if path.suffix.lower() == ".jsonl" or head == "{":
        df = _read_jsonl(path)
        for row, st in enumerate(df["status"], start=1):
            if st not in STATUSES:
                raise InvalidInputError(
                    f"expected one of {', '.join(STATUSES)}, got {show(st)}",
                    source=source,
                    record=row,
                    field="status",
                )
        _check_unique(df, source, "index")
        judges = sorted({str(j) for j in df["judge"] if str(j)})
        df["status"] = [s if s in ("em", "failed") else "ok" for s in df["status"]]
        return finish_rows(df, nopt=nopt), judges[0] if judges else "judge"
    sep = "," if path.suffix.lower() == ".csv" else "\t"
    try:
        df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as e:
        raise InvalidInputError(f"cannot read the record table: {e}", source=source) from None
    missing = [c for c in _ORIGINAL_REQUIRED if c not in df.columns]
    if missing:
        raise InvalidInputError(
            "not a pairwise record table: neither the original's record_{judge}_{nopt}.tsv "
            f"(missing columns {', '.join(missing)}) nor assay's comparisons.jsonl",
            source=source,
        )
    rows, judge = _from_original(df, source)
    _check_unique(rows, source, "cmp_index")
    return finish_rows(rows, nopt=nopt), judge


def _check_unique(rows: pd.DataFrame, source: str, field: str) -> None:
    """One row per comparison: a repeated (index, model A, model B) would be counted twice.

    A model compared with itself (DevBench's config compares the reference model with every
    model, itself included) is asked in both positions, so its key appears twice: that pair
    of rows is one comparison and its swap, not a duplicate; a third row is.
    """
    seen: dict[tuple[str, str, str], list[int]] = {}
    keys = zip(rows["index"].astype(str), rows["model_a"].astype(str), rows["model_b"].astype(str))
    for row, key in enumerate(keys, start=1):
        rows_of_key = seen.setdefault(key, [])
        if len(rows_of_key) >= (2 if key[1] == key[2] else 1):
            raise InvalidInputError(
                f"comparison {';'.join(key)!r} repeats (first at row {rows_of_key[0]})",
                source=source,
                record=row,
                field=field,
            )
        rows_of_key.append(row)


def _judge_cell(status: str, reply: Any) -> str:
    if status == "em":
        return "EM"
    if status == "failed":
        return FAIL_MSG
    return "" if reply is None else str(reply)


def original_tsv(rows: pd.DataFrame, *, judge: str) -> str:
    """The original's record table (non-exact matches first), as text."""
    order = sorted(range(len(rows)), key=lambda i: rows["status"].iloc[i] == "em")
    r = rows.iloc[order]
    df = pd.DataFrame(
        {
            "cmp_index": [
                f"{q};{a};{b}" for q, a, b in zip(r["index"], r["model_a"], r["model_b"])
            ],
            "question": r["question"],
            "answer1": r["answer1"],
            "answer2": r["answer2"],
            "A": r["model_a"],
            "B": r["model_b"],
            "reference_answer": r["reference_answer"],
            "evaluating_guidance": r["evaluating_guidance"],
            "task": r["task"],
            judge: [_judge_cell(s, t) for s, t in zip(r["status"], r["reply"])],
        }
    )
    buf = io.StringIO()
    df.to_csv(buf, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    return buf.getvalue()


def records_jsonl(rows: pd.DataFrame) -> str:
    """assay's record table: one JSON object per comparison (with the input table's columns
    carried for slices, ``by``, after the fields)."""
    derived = {"length_a", "length_b", "words_a", "words_b", "prompt_version"}
    extra = [c for c in rows.columns if c not in JSONL_FIELDS and c not in derived]
    out = []
    for rec in rows.to_dict("records"):
        d = {f: (None if pd.isna(rec.get(f)) else rec.get(f)) for f in [*JSONL_FIELDS, *extra]}
        d["prompt_version"] = PROMPT_VERSION
        out.append(json.dumps(d, ensure_ascii=False))
    return "\n".join(out) + "\n"
