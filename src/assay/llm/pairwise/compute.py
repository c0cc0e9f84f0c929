"""Consistency and win rates of judged comparisons, as the original SubEval scripts count them.

Input is a table of judged comparisons, one row per (question, first model, second model)
with the extracted ``choice`` (A-D). Only rows with ``status == "ok"`` take part (exact
matches, failed calls and failed extractions are counted elsewhere).

**Consistency.** A row ``(q, m1, m2)`` and its reverse ``(q, m2, m1)`` are consistent when
the choices are (A, B), (B, A), (C, C) or (D, D): the judge picked the same response, or
the same verdict about both, whichever order it saw them in. A row whose reverse is
absent (random mode, an exact match, a failed extraction) counts as consistent. The
consistency rate is consistent rows / rows.

**Old win rates** (consistent rows only) of model m against the reference r, per column
(all rows, then each design file and each task; a column takes the rows whose task
contains its name): with ``win`` the rows where m's response was chosen, ``lose`` where
r's was, ``both`` the C rows, ``neither`` the D rows and ``tot`` their sum,
``win+bothgood = (win + both) / tot`` and ``win+halfdraw = (win + (both + neither)/2) /
tot``. With 2 options both are ``win / (win + lose)``.

**New win rates** (every extracted row; an inconsistent row is a tie). Per key
``(metric, X, Y)`` (metric = the part of the question index after its last ``-``, so
design files pool): each consistent row adds 1 to ``tot`` of both orders of its pair, 1 to
``cnt`` of the winner-first key for A/B, 1 to ``tie`` of both keys for C; D adds to
``tot`` only; each inconsistent row adds 1 to ``tie`` and ``tot`` of both keys. Then,
for keys that contain the reference model's name: ``with tie = (cnt + tie/2) / tot`` and
``without tie = cnt / (tot - tie)``.

Where a denominator is 0 the original writes 0; here the value is NaN in the returned
tables (``None`` with a reason in the records), and the writers of the original's files
put the original's 0 back.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"index": ["q-g"] * 2, "model_a": ["r", "m"], "model_b": ["m", "r"],
    ...     "task": ["t-g"] * 2, "status": ["ok"] * 2, "choice": ["B", "A"]})
    >>> consistent_mask(rows).tolist()
    [True, True]
    >>> w = new_win_rates(rows, "r")
    >>> w.set_index(["model", "opponent"])["with_tie"].to_dict()
    {('m', 'r'): 1.0, ('r', 'm'): 0.0}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "CONSISTENT_PAIRS",
    "consistent_mask",
    "old_question_counts",
    "old_win_tables",
    "old_table",
    "new_question_counts",
    "new_win_rates",
    "new_table",
    "tasks_of",
]

CONSISTENT_PAIRS = frozenset({("A", "B"), ("B", "A"), ("C", "C"), ("D", "D")})


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["status"] == "ok"]


def consistent_mask(rows: pd.DataFrame) -> np.ndarray:
    """For each row with ``status == "ok"`` (in order), whether it is consistent."""
    ok = _ok(rows)
    keys = list(zip(ok["index"], ok["model_a"], ok["model_b"]))
    choice = dict(zip(keys, ok["choice"]))
    out = np.empty(len(keys), dtype=bool)
    for i, (q, a, b) in enumerate(keys):
        rev = choice.get((q, b, a))
        out[i] = rev is None or (choice[(q, a, b)], rev) in CONSISTENT_PAIRS
    return out


def tasks_of(task_cells: pd.Series) -> tuple[list[str], list[str]]:
    """The design files (``uml_class``) and tasks (``uml_class-general``) of the task column."""
    tasks = sorted({part for cell in task_cells for part in str(cell).split(", ")})
    suptasks = sorted({t.split("-")[0] for t in tasks})
    return suptasks, tasks


def old_question_counts(
    rows: pd.DataFrame, reference_model: str, questions: Sequence[str] | None = None
) -> tuple[list[tuple[str, str]], np.ndarray]:
    """Per question, the old counts of every (model, column) against the reference.

    ``rows`` are the consistent rows. Returns the keys ``(model, column)`` (models in name
    order, columns ``Overall-lang``, ``EN``, the design files, the tasks) and an array
    ``(len(questions), len(keys), 4)`` of ``win``, ``lose``, ``both``, ``neither``
    (``questions``: the question ids in order, by default those of ``rows`` sorted). A row
    of model m against the reference counts for every column its task cell contains.
    """
    rows = _ok(rows)
    a, b = rows["model_a"].to_numpy(str), rows["model_b"].to_numpy(str)
    models = sorted(set(a) | set(b))
    suptasks, tasks = tasks_of(rows["task"])
    names = [*suptasks, *tasks]
    columns = ["Overall-lang", "EN", *names]
    others = [m for m in models if m != reference_model] if reference_model in models else []
    keys = [(m, col) for m in others for col in columns]
    qs = sorted(set(rows["index"])) if questions is None else list(questions)
    counts = np.zeros((len(qs), len(keys), 4))
    fwd = (b == reference_model) & (a != reference_model)
    rev = (a == reference_model) & (b != reference_model)
    valid = fwd | rev
    if not keys or not valid.any():
        return keys, counts
    c = rows["choice"].to_numpy(str)
    cat = np.select([c == "C", c == "D", fwd == (c == "A")], [2, 3, 0], default=1)[valid]
    model = np.where(fwd, a, b)[valid]
    mpos = {m: i for i, m in enumerate(others)}
    qpos = {q: i for i, q in enumerate(qs)}
    cells = [str(t) for t in rows["task"][valid]]
    member = {t: [True, True, *(n in t for n in names)] for t in set(cells)}
    inside = np.array([member[t] for t in cells], dtype=float)  # (rows, columns)
    qi = np.array([qpos[q] for q in rows["index"][valid]])
    ki = np.array([mpos[m] for m in model])[:, None] * len(columns) + np.arange(len(columns))
    np.add.at(counts, (qi[:, None], ki, cat[:, None]), inside)
    return keys, counts


def old_win_tables(rows: pd.DataFrame, reference_model: str) -> pd.DataFrame:
    """Old-version counts and rates of every model against the reference, per column.

    ``rows`` are the consistent rows. Returns one row per (model, column) with ``win``,
    ``lose``, ``both``, ``neither``, ``tot`` and ``win_both_good`` / ``win_half_draw``
    (NaN where ``tot`` is 0). Columns are ``Overall-lang``, ``EN``, the design files and
    the tasks, as in the original's tables. The counts are the sums of
    :func:`old_question_counts` over the questions.
    """
    return old_table(*old_question_counts(rows, reference_model))


def old_table(keys: list[tuple[str, str]], counts: np.ndarray) -> pd.DataFrame:
    """:func:`old_win_tables` from :func:`old_question_counts`' keys and counts."""
    total = counts.sum(axis=0).astype(np.int64)
    out = []
    for (m, col), (win, lose, both, neither) in zip(keys, total.tolist()):
        tot = win + lose + both + neither
        out.append(
            {
                "model": m,
                "column": col,
                "win": win,
                "lose": lose,
                "both": both,
                "neither": neither,
                "tot": tot,
                "win_both_good": (win + both) / tot if tot else np.nan,
                "win_half_draw": (win + (both + neither) / 2) / tot if tot else np.nan,
            }
        )
    cols = ["model", "column", "win", "lose", "both", "neither", "tot"]
    return pd.DataFrame(out, columns=[*cols, "win_both_good", "win_half_draw"])


def _count(rows: pd.DataFrame, consistent: bool) -> tuple[dict, dict, dict]:
    cnt: dict[str, int] = defaultdict(int)
    tie: dict[str, int] = defaultdict(int)
    tot: dict[str, int] = defaultdict(int)
    for q, a, b, c in zip(rows["index"], rows["model_a"], rows["model_b"], rows["choice"]):
        fwd, rev = f"{q};{a};{b}", f"{q};{b};{a}"
        if consistent and c in ("A", "B"):
            cnt[fwd if c == "A" else rev] += 1
        if not consistent or c == "C":
            tie[fwd] += 1
            tie[rev] += 1
        tot[fwd] += 1
        tot[rev] += 1
    return cnt, tie, tot


def _per_task(rows: pd.DataFrame, consistent: bool) -> tuple[dict, dict, dict]:
    """The original's per-task pass: each task's counts *replace* (dict.update) earlier ones."""
    cnt: dict[str, int] = {}
    tie: dict[str, int] = {}
    tot: dict[str, int] = {}
    for task in tasks_of(rows["task"])[1]:
        sub = rows[[task in str(t) for t in rows["task"]]]
        c, t, n = _count(sub, consistent)
        cnt.update(c)
        tie.update(t)
        tot.update(n)
    return cnt, tie, tot


def new_question_counts(
    rows: pd.DataFrame, reference_model: str, questions: Sequence[str] | None = None
) -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """Per question, the new-version counts of every key ``(metric, model, opponent)``.

    Returns the keys whose ``"{metric};{model};{opponent}"`` contains the reference
    model's name, sorted, and an array ``(len(questions), len(keys), 3)`` of ``cnt``,
    ``tie``, ``tot``: the original's counts per ``"{question};{model};{opponent}"``
    (after its per-task pass), each question's under the key of its metric.
    """
    rows = _ok(rows)
    mask = consistent_mask(rows)
    parts = (_per_task(rows[mask], True), _per_task(rows[~mask], False))
    cnt, tie, tot = (_add(parts[0][i], parts[1][i]) for i in range(3))
    per: dict[tuple[str, tuple[str, str, str]], tuple[int, int, int]] = {}
    for key, n in tot.items():
        q, x, y = key.rsplit(";", 2)
        k = (q.rsplit("-", 1)[-1], x, y)
        if reference_model in ";".join(k):
            per[(q, k)] = (cnt.get(key, 0), tie.get(key, 0), n)
    keys = sorted({k for _, k in per})
    qs = sorted(set(rows["index"])) if questions is None else list(questions)
    qpos, kpos = {q: i for i, q in enumerate(qs)}, {k: i for i, k in enumerate(keys)}
    counts = np.zeros((len(qs), len(keys), 3))
    for (q, k), v in per.items():
        counts[qpos[q], kpos[k]] = v
    return keys, counts


def new_win_rates(rows: pd.DataFrame, reference_model: str) -> pd.DataFrame:
    """New-version (inconsistent = tie) counts and rates per (metric, model, opponent).

    Returns columns ``metric``, ``model``, ``opponent``, ``cnt``, ``tie``, ``tot``,
    ``with_tie``, ``without_tie`` (NaN where the denominator is 0), one row per key whose
    ``"{metric};{model};{opponent}"`` contains the reference model's name (the original's
    substring test), sorted by metric, model and opponent. The counts are the sums of
    :func:`new_question_counts` over the questions.
    """
    return new_table(*new_question_counts(rows, reference_model))


def new_table(keys: list[tuple[str, str, str]], counts: np.ndarray) -> pd.DataFrame:
    """:func:`new_win_rates` from :func:`new_question_counts`' keys and counts."""
    out = []
    for key, (c, t, n) in zip(keys, counts.sum(axis=0).astype(np.int64).tolist()):
        out.append(
            {
                "metric": key[0],
                "model": key[1],
                "opponent": key[2],
                "cnt": c,
                "tie": t,
                "tot": n,
                "with_tie": (c + 0.5 * t) / n if n > 0 else np.nan,
                "without_tie": c / (n - t) if n - t > 0 else np.nan,
            }
        )
    cols = ["metric", "model", "opponent", "cnt", "tie", "tot", "with_tie", "without_tie"]
    return pd.DataFrame(out, columns=cols)


def _add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}
