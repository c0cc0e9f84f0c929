"""Demo: the LLM suites on the embedded model.

1. Context association tests on hand-written StereoSet-format items: LMS, SS and iCAT
   per scope.
2. LLM fairness with counterfactual prompts on rows of the PISA sample shipped with
   assay (NCES PISA 2009, as used in "Fairness of ChatGPT"): group fairness by gender,
   accuracy, and how often swapping the gender changes the answer.

Each run prints its answer mode and valid-answer rate; both are stored (with one item row
per call) in the demo's SQLite store. The sizes keep the section within about a minute on
a 2-core machine (PISA prompts are ~1,300 tokens each). The answers are generated and read
by the suites' strict parsers (the model writes; a reply that is not an offered option is
invalid and counted), so the 135M model's valid-answer rate is low: log-likelihood answers
(issue 21, ``answer_mode="loglik"``) are the default once they land.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from assay.llm import load_model
from assay.llm.suites import SuiteResult, run_cat, run_fairness
from assay.report.table import metrics_table
from assay.results import MetricSet
from assay.store import ItemRecord, Store

HERE = Path(__file__).resolve().parent


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


CAT_ITEMS = 6
PISA_ROWS = 1  # and its counterfactual: 2 calls of ~1,300 prompt tokens


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

    data = HERE / "data" / "cat_demo.json"
    cat = run_cat(data, model, max_queries=CAT_ITEMS, cache=cache, timeout=600, quiet=False)
    shown = cat.metrics.filter(scope="general") + cat.metrics.filter(scope="intersentence")
    title = f"context association tests ({CAT_ITEMS} items, embedded)"
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
    (out_dir / "suites-cat.json").write_text(cat.metrics.to_json(indent=2) + "\n")
    (out_dir / "suites-fairness.json").write_text(fair.metrics.to_json(indent=2) + "\n")
    store.close()
