"""Tally contract cases of the pairwise evaluator (``tests/contract/tallies.py``): units are
questions (named by their id), every comparison of a drawn question copied with it; the
rates, the Bradley-Terry ratings and the length-controlled win rates come from one tally.

The comparisons carry no lengths, so the length-controlled fit has no slope (its scale is
the data's spread of length differences, which a resample would change) and the length
coefficient is undefined on every resample, as on the records. Every question compares
every model with the reference, so no resample loses a model (a lost model is left out of
a fresh fit's centring, but kept in the tally's). A slice's interval is read from the whole
set's draws (today's records), so the slice check compares values and gaps only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.llm.pairwise import PairwiseEvaluator
from assay.llm.pairwise.ratings import ELO_SCALE
from assay.llm.pairwise.tally import ident
from assay.results import Metric
from contract.tallies import TallyCase

MODELS = ("m1", "m2", "m3")
TASKS = ("uml_class-general", "architecture_design-faithfulness")
QUESTIONS = [f"p{q}_{TASKS[q % 2]}" for q in range(20)]
_rng = np.random.default_rng(8)


def _rows() -> dict[str, dict[str, list[Any]]]:
    """Per question, its comparisons (columns of the evaluator's batch)."""
    out = {}
    for i, q in enumerate(QUESTIONS):
        cols: dict[str, list[Any]] = {k: [] for k in ("model_a", "model_b", "status", "choice")}
        for m in MODELS:
            for a, b in (("ref", m), (m, "ref")):
                status = str(_rng.choice(["ok"] * 9 + ["failed"]))
                cols["model_a"].append(a)
                cols["model_b"].append(b)
                cols["status"].append(status)
                cols["choice"].append(str(_rng.choice(list("ABC"))) if status == "ok" else "")
        n = len(cols["model_a"])
        cols |= {"task": [TASKS[i % 2]] * n, "topic": ["xyz"[i % 3]] * n}
        cols["site"] = [f"s{i % 7}"] * n
        out[q] = cols
    return out


ROWS = _rows()


def _take(ids: Sequence[Any], opts: Mapping[str, Any]) -> PairwiseEvaluator:
    batch: dict[str, list[Any]] = {}
    seen: Counter[str] = Counter()
    for q in ids:
        cols = ROWS[q]
        n = len(cols["status"])
        copy = f"c{seen[q]}{q}" if seen[q] else q  # a copy of a question: its own id
        batch.setdefault("index", []).extend([copy] * n)
        seen[q] += 1
        for k, v in cols.items():
            batch.setdefault(k, []).extend(v)
    opts = {"by": [], **opts}
    ev = PairwiseEvaluator(reference_model="ref", nopt=3, **opts)
    return ev.add(batch) if batch else ev


def _key(m: Metric) -> Any:
    if "slice" in m.parameters and m.type == "BradleyTerryRating":
        return None
    return ident(m) if isinstance(m.value, (int, float)) or m.value is None else None


def _log_strength(m: Metric) -> Metric:
    """A rating record on the log-strength scale of its tally."""
    if m.type != "BradleyTerryRating":
        return m

    def back(v: Any) -> Any:
        return None if v is None else (float(v) - 1000.0) / ELO_SCALE

    p = m.parameters | {k: back(m.parameters.get(k)) for k in ("ci_low", "ci_high")}
    return Metric(m.type, back(m.value), p)


TALLY_CASES = [
    TallyCase(
        name="pairwise",
        make=lambda opts: _take(QUESTIONS, opts),
        take=_take,
        key=_key,
        ids=sorted(QUESTIONS),
        columns={
            "site": [ROWS[q]["site"][0] for q in sorted(QUESTIONS)],
            "topic": [ROWS[q]["topic"][0] for q in sorted(QUESTIONS)],
        },
        cluster="site",
        by="topic",
        rel=1e-7,
        as_tallied=_log_strength,
        slice_intervals=False,
    )
]
