"""Demo: the LLM suites on the embedded model.

1. Context association tests on 12 hand-written StereoSet-format items: LMS, SS and iCAT
   per scope.
2. LLM fairness with counterfactual prompts on 4 rows of the PISA sample shipped with
   assay (NCES PISA 2009, as used in "Fairness of ChatGPT"): group fairness by gender,
   accuracy, and how often swapping the gender changes the answer.

Both runs are stored (with one item row per call) in the demo's SQLite store.
"""

from __future__ import annotations

from pathlib import Path

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


def run(out_dir: Path, console: Console) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    model = load_model("embedded", n_ctx=4096)
    cache = out_dir / "llm-cache.sqlite"
    store = Store(f"sqlite:///{out_dir / 'assay.db'}")

    cat = run_cat(HERE / "data" / "cat_demo.json", model, cache=cache, timeout=600)
    shown = cat.metrics.filter(scope="general") + cat.metrics.filter(scope="intersentence")
    console.print(metrics_table(shown, title="context association tests (12 items, embedded)"))
    eid = _save(store, cat, "embedded")
    console.print(f"[dim]saved evaluation {eid} ({len(cat.calls)} calls)[/]")

    fair = run_fairness("pisa", model, sample=True, max_queries=4, cache=cache, timeout=600)
    keep = {
        "StatisticalParityDifference",
        "DisparateImpact",
        "EqualOpportunityDifference",
        "Accuracy",
        "ResponseCounts",
        "CounterfactualChangeRate",
    }
    shown = MetricSet(m for m in fair.metrics if m.type in keep)
    console.print(metrics_table(shown, title="LLM fairness: PISA sample, 4 rows (embedded)"))
    eid = _save(store, fair, "embedded")
    console.print(f"[dim]saved evaluation {eid} ({len(fair.calls)} calls)[/]")
    (out_dir / "suites-cat.json").write_text(cat.metrics.to_json(indent=2) + "\n")
    (out_dir / "suites-fairness.json").write_text(fair.metrics.to_json(indent=2) + "\n")
    store.close()
