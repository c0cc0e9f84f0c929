"""Demo: the LLM suites on the embedded model.

1. Context association tests on the StereoSet-format sample shipped with assay (16 items
   written for assay): LMS, SS and iCAT per scope.
2. LLM fairness with counterfactual prompts on rows of the PISA sample shipped with
   assay (NCES PISA 2009, as used in "Fairness of ChatGPT"): group fairness by gender,
   accuracy, and how often swapping the gender changes the answer.
3. Language exams on the Kaleidoscope-format sample (16 questions written for assay).

Every option is scored by its log-likelihood (``answer_mode="loglik"``, the default on
the embedded model, as lm-evaluation-harness scores multiple choice), so every answer is
valid by construction and the numbers say what the model prefers, not whether a 135M
model can format a reply. Each run prints its answer mode and valid-answer rate; both
are stored (with one item row per call) in the demo's SQLite store. The sizes keep the
section within about a minute on a 2-core machine (PISA prompts are ~1,300 tokens each,
their shared prefix decoded once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from assay.llm import load_model
from assay.llm.suites import SuiteResult, run_cat, run_fairness, run_language
from assay.report.table import metrics_table
from assay.results import MetricSet
from assay.store import ItemRecord, Store


def _save(store: Store, result: SuiteResult, model: str) -> int:
    items = [ItemRecord.from_llm(c.item, c.record, c.parsed) for c in result.calls]
    return store.save(
        result.metrics,
        kind=result.kind,
        dataset=result.dataset,
        model=model,
        parameters=result.parameters,
        items=items,
    )


PISA_ROWS = 6  # and their counterfactuals: ~1,300 prompt tokens each, the prefix shared


def _is_valid(call: Any) -> bool:
    """An answer the suite could read (CAT: an offered option; fairness: one of its answers)."""
    parsed = call.parsed
    if not call.record.ok or call.invalid is not None or parsed is None:
        return False
    return not isinstance(parsed, dict) or (
        parsed.get("valid", True) is not False and parsed.get("outcome") != "other"
    )


def _valid(console: Console, result: SuiteResult) -> None:
    valid = sum(_is_valid(c) for c in result.calls)
    mode = result.parameters.get("answer_mode", "generate")
    console.print(
        f"answer mode {mode}: {valid} of {len(result.calls)} answers valid "
        f"({result.paid_calls} paid calls)"
    )


def run(out_dir: Path, console: Console) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    model = load_model("embedded", n_ctx=4096)
    cache = out_dir / "llm-cache.sqlite"
    store = Store(f"sqlite:///{out_dir / 'assay.db'}")

    cat = run_cat(model=model, sample=True, cache=cache, timeout=600, quiet=False)
    shown = cat.metrics.filter(scope="general") + cat.metrics.filter(scope="intersentence")
    title = f"context association tests ({len(cat.calls)} items, embedded)"
    console.print(metrics_table(shown, title=title))
    _valid(console, cat)
    eid = _save(store, cat, "embedded")
    console.print(f"[dim]saved evaluation {eid} ({len(cat.calls)} calls)[/]")

    fair = run_fairness(
        "pisa", model, sample=True, max_queries=PISA_ROWS, cache=cache, timeout=600, quiet=False
    )
    keep = {
        "StatisticalParityDifference",
        "DisparateImpact",
        "EqualOpportunityDifference",
        "Accuracy",
        "ResponseCounts",
        "CounterfactualChangeRate",
    }
    shown = MetricSet(m for m in fair.metrics if m.type in keep)
    title = f"LLM fairness: PISA sample, {PISA_ROWS} rows (embedded)"
    console.print(metrics_table(shown, title=title))
    _valid(console, fair)
    eid = _save(store, fair, "embedded")
    console.print(f"[dim]saved evaluation {eid} ({len(fair.calls)} calls)[/]")
    exams = run_language(model=model, sample=True, cache=cache, timeout=600, quiet=False)
    shown = exams.metrics.filter("Accuracy") + exams.metrics.filter("FormatErrorRate")
    console.print(metrics_table(shown, title=f"language exams ({len(exams.calls)} questions)"))
    _valid(console, exams)
    eid = _save(store, exams, "embedded")
    console.print(f"[dim]saved evaluation {eid} ({len(exams.calls)} calls)[/]")
    (out_dir / "suites-language.json").write_text(exams.metrics.to_json(indent=2) + "\n")
    (out_dir / "suites-cat.json").write_text(cat.metrics.to_json(indent=2) + "\n")
    (out_dir / "suites-fairness.json").write_text(fair.metrics.to_json(indent=2) + "\n")
    store.close()
