"""LLM suite plots: CAT scores by scope, exam accuracy by language.

Context association tests: the scores (LMS, SS and ICAT, 0-100) per scope (general,
intrasentence, intersentence, each bias type); SS is unbiased at 50, marked. Language exams:
the rates (format-error rate, accuracy, accuracy on valid answers) per language. The types
are read from the suites' tables (:mod:`assay.llm.suites.declared`). The LLM fairness suite's
plots are :mod:`assay.report.fairness`'s.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from assay.llm.suites.declared import CAT, LANGUAGE
from assay.report import fairness
from assay.report.figures import Figure, figure, hline, record_bar, records, run_label
from assay.results import MetricSet
from assay.store.records import Evaluation

__all__ = ["figures"]


def _per(
    runs: list[Evaluation],
    types: tuple[str, ...],
    key: str,
    title: str,
    caption: str,
    **layout: Any,
) -> list[Figure]:
    traces = []
    for ev in runs:
        for t in types:
            found = records(ev, t, lambda m: key in m.parameters and m.value is not None)
            if found:
                name = f"{run_label(ev)} · {t}" if len(runs) > 1 else t
                traces.append(record_bar([str(m.parameters[key]) for m in found], found, name))
    if not traces:
        return []
    return [figure(title, traces, x_title=key, barmode="group", caption=caption, **layout)]


def figures(runs: list[Evaluation]) -> list[Figure]:
    """CAT scores by scope, exam results by language, fairness plots (of the whole set: the
    slice records of ``--by`` are in the report's tables, not in these plots)."""
    runs = [_whole(ev) for ev in runs]
    cat = _per(
        runs,
        CAT.family("scores"),
        "scope",
        "Context association tests by scope (SS: 50 is unbiased)",
        "cat",
        shapes=[hline(50.0)],
        yaxis={"range": [0, 100]},
    )
    exam = _per(
        runs,
        LANGUAGE.family("rates"),
        "language",
        "Exam results by language",
        "exam",
        yaxis={"range": [0, 1.02]},
    )
    return cat + exam + fairness.figures(runs)


def _whole(ev: Evaluation) -> Evaluation:
    """The run with its slice records left out."""
    if not any("slice" in m.parameters for m in ev.metrics or []):
        return ev
    kept = MetricSet(m for m in ev.metrics or [] if "slice" not in m.parameters)
    return replace(ev, metrics=kept)
