"""Human preferences on pairwise judging (``assay pairwise judge --human-labels FILE``).

The file (JSONL, CSV or Parquet) has one row per question and pair: ``id`` (the question's
``index``), ``model`` and ``opponent`` (the pair, in either order) and ``value``, the human's
outcome for ``model``: 1 (``model`` better), 0 (``opponent`` better), 0.5 (a tie); a null
leaves the comparison unlabelled. :func:`read_preferences` refuses, before any call, a
question that is not judged (the first named), a pair not judged on that question, a
comparison given twice (in either order), a value that is not a number in [0, 1], and a file
that labels nothing.

The judge's outcome of a question and pair is its debiased outcome
(:func:`assay.llm.pairwise.ratings.debiased_outcomes`: both orders' verdicts averaged, an
exact match 0.5). :func:`preference_records` gives, per pair with labels, in the order the
labels name it:

* a ``WinRate`` record with ``counting="debiased"`` and ``estimator="ppi"``: the PPI++
  estimate of the human win rate (ties half) from the labelled questions (human outcome,
  judged outcome) and the judged questions without a label, with ``n_labeled``,
  ``n_unlabeled``, ``ppi_lambda`` and the interval (``ppi``, or ``ppi_cluster_bootstrap``
  with ``--cluster``), equal to ``ppi_py`` on the same arrays;
* a ``JudgeAgreement`` record on the labelled questions, the outcomes coded 0 (loss), 1
  (tie), 2 (win) so the share of equal verdicts and Cohen's kappa apply (MAE on that scale),
  each measure with ``measure_ci``; and the **position-swap flip rate**
  ``position_flip_rate``: the share of the pair's questions judged in both orders whose two
  verdicts disagree once the order is undone, with its bootstrap interval over questions
  (whole clusters with ``--cluster``), ``n_both_orders`` the questions it is over; with
  ``judge_caution`` when the agreement is weak (:func:`assay.llm.caution.weak_agreement`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.llm.caution import PARAMETER, weak_agreement
from assay.results import Metric
from assay.uncertainty.intervals import CIOptions, tally_intervals
from assay.uncertainty.tally import Tally

__all__ = ["Preferences", "preference_records", "read_preferences"]

Key = tuple[str, str, str]  # question, model, opponent (model < opponent by name)


@dataclass(frozen=True)
class Preferences:
    """Human outcomes by (question, model, opponent) with ``model < opponent``; ``order``:
    each pair as the file first names it; ``source``: the file."""

    values: dict[Key, float]
    order: dict[tuple[str, str], tuple[str, str]]
    source: str


def _text(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def read_preferences(path: str | Path, judged: Sequence[tuple[str, str, str]]) -> Preferences:
    """The human preferences at ``path`` for the ``judged`` comparisons (question, model_a,
    model_b), checked as the module docstring says."""
    from assay.io.tables import read_table

    source = str(path)
    df = read_table(path)
    for col in ("id", "model", "opponent", "value"):
        if col not in df.columns:
            have = ", ".join(map(str, df.columns)) or "none"
            raise InvalidInputError(f"missing column (columns present: {have})", source=source,
                                    field=col)  # fmt: skip
    pairs: dict[str, set[tuple[str, str]]] = {}
    for q, a, b in judged:
        pairs.setdefault(str(q), set()).add(tuple(sorted((str(a), str(b)))))  # type: ignore[arg-type]
    values: dict[Key, float] = {}
    seen: dict[Key, int] = {}
    order: dict[tuple[str, str], tuple[str, str]] = {}
    rows = zip(df["id"].tolist(), df["model"].tolist(), df["opponent"].tolist(), df["value"])
    for row, (q, m, o, v) in enumerate(rows, start=1):
        q, m, o = _text(q), str(m), str(o)
        if q not in pairs:
            raise InvalidInputError(f"question {q!r} is not judged in this run", source=source,
                                    record=row, field="id")  # fmt: skip
        x, y = sorted((m, o))
        if (x, y) not in pairs[q]:
            raise InvalidInputError(f"the pair {m!r}, {o!r} is not judged on question {q!r}",
                                    source=source, record=row, field="model")  # fmt: skip
        if (q, x, y) in seen:
            raise InvalidInputError(
                f"question {q!r} and pair {x!r}, {y!r} are given twice (rows "
                f"{seen[q, x, y]} and {row})", source=source, record=row, field="id",
            )  # fmt: skip
        seen[q, x, y] = row
        if v is None or (isinstance(v, float) and np.isnan(v)):
            continue
        try:
            value = float(v)
        except (TypeError, ValueError):
            value = float("nan")
        if isinstance(v, str) or not 0.0 <= value <= 1.0:
            raise InvalidInputError(
                f"expected 1 ({m} better), 0 ({o} better) or 0.5 (a tie), got {v!r}",
                source=source, record=row, field="value",
            )  # fmt: skip
        values[q, x, y] = value if m == x else 1.0 - value
        order.setdefault((x, y), (m, o))
    if not values:
        raise InvalidInputError("no judged comparison has a label", source=source, field="value")
    return Preferences(values, order, source)


def _flips(rows: pd.DataFrame, x: str, y: str) -> dict[str, bool]:
    """Question -> whether the two orders' verdicts of pair (x, y) disagree (questions judged
    in both orders only)."""
    from assay.llm.pairwise.compute import CONSISTENT_PAIRS

    ok = rows[rows["status"] == "ok"]
    verdict = {
        (str(q), str(a), str(b)): str(c)
        for q, a, b, c in zip(ok["index"], ok["model_a"], ok["model_b"], ok["choice"])
    }
    return {
        q: (c, verdict[q, y, x]) not in CONSISTENT_PAIRS
        for (q, a, b), c in verdict.items()
        if (a, b) == (x, y) and (q, y, x) in verdict
    }


def _flip_record(
    flips: dict[str, bool], opts: CIOptions, codes: Mapping[str, int] | None
) -> dict[str, Any]:
    qs = list(flips)
    if not qs:
        return {"position_flip_rate": None}
    flipped = np.array([float(flips[q]) for q in qs])

    def values(w: np.ndarray) -> np.ndarray:
        return ((w @ flipped) / w.sum(axis=1))[:, None]

    group = None if codes is None else np.array([codes[q] for q in qs], dtype=np.intp)
    tally = Tally(
        (("JudgeAgreement", "position_flip_rate"),),
        values,
        multiplicity=np.ones(len(qs), dtype=np.int64),
        codes=None if group is None else (lambda _column: group),
    )
    (p,) = tally_intervals(tally, opts).values()
    return {"position_flip_rate": float(flipped.mean()), "ci": [p["ci_low"], p["ci_high"]],
            "n": len(qs)}  # fmt: skip


def preference_records(
    rows: pd.DataFrame,
    prefs: Preferences,
    opts: CIOptions,
    cluster_of: Mapping[str, Any] | None = None,
) -> list[Metric]:
    """The PPI ``WinRate`` and ``JudgeAgreement`` records of each labelled pair (module
    docstring) from the judged ``rows``; ``cluster_of``: question -> its cluster."""
    from assay.llm.pairwise.ratings import debiased_outcomes
    from assay.stats.judge_agreement import agreement_record
    from assay.uncertainty.ppi import ppi_cluster_interval, ppi_mean

    boot = replace(opts, method="bootstrap")
    codes: dict[str, int] | None = None
    if cluster_of is not None and opts.cluster is not None:
        index = {v: j for j, v in enumerate(sorted({str(v) for v in cluster_of.values()}))}
        codes = {str(q): index[str(v)] for q, v in cluster_of.items()}
    outcomes = debiased_outcomes(rows)
    out: list[Metric] = []
    for (x, y), (m, o) in prefs.order.items():
        part = outcomes[(outcomes["model"] == x) & (outcomes["opponent"] == y)]
        judged = dict(zip(part["index"].astype(str), part["outcome"].astype(float)))
        flip = m != x  # the records speak for the model the labels name first

        def turn(v: float, flip: bool = flip) -> float:
            return 1.0 - v if flip else v

        lab = [q for q in judged if (q, x, y) in prefs.values]
        rest = [q for q in judged if (q, x, y) not in prefs.values]
        ctx = {"model": m, "opponent": o, "counting": "debiased"}
        if not lab:
            reason = "no labelled question has a judged outcome (every labelled call failed)"
            out.append(Metric("WinRate", None, ctx | {"estimator": "ppi", "undefined": reason}))
            continue
        h = np.array([turn(prefs.values[q, x, y]) for q in lab])
        j = np.array([turn(judged[q]) for q in lab])
        ju = np.array([turn(judged[q]) for q in rest])
        clustered = codes is not None
        if codes is not None:
            e = ppi_cluster_interval(
                h, j, ju, [codes[q] for q in lab], [codes[q] for q in rest], level=opts.level,
                num_bootstrap=opts.num_bootstrap, seed=opts.seed,
            )  # fmt: skip
        else:
            e = ppi_mean(h, j, ju, level=opts.level)
        params = ctx | {
            "estimator": "ppi", "n_labeled": e.n_labeled, "n_unlabeled": e.n_unlabeled,
            "n": e.n_labeled + e.n_unlabeled, "ppi_lambda": e.lam, "ci_low": e.ci_low,
            "ci_high": e.ci_high, "confidence_level": opts.level,
            "ci_method": "ppi_cluster_bootstrap" if clustered else "ppi",
        }  # fmt: skip
        if clustered:
            params |= {"num_bootstrap": opts.num_bootstrap, "seed": opts.seed,
                       "cluster": opts.cluster}  # fmt: skip
        out.append(Metric("WinRate", e.estimate, params))
        agree_codes = None if codes is None else np.array([codes[q] for q in lab])
        rec = agreement_record(2.0 * h, 2.0 * j, {"model": m, "opponent": o}, boot, agree_codes)
        fl = _flip_record(_flips(rows, x, y), boot, codes)
        rec.value["position_flip_rate"] = fl["position_flip_rate"]
        if "ci" in fl:
            rec.parameters.setdefault("measure_ci", {})["position_flip_rate"] = fl["ci"]
            rec.parameters["n_both_orders"] = fl["n"]
        weak = weak_agreement(rec.value)
        if weak is not None:
            rec.parameters[PARAMETER] = weak
        out.append(rec)
    return out
