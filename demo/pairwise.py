"""Demo section: pairwise judging on the embedded model.

Three questions, each answered by a careful model (right) and a sloppy one (wrong); the
embedded SmolLM2-135M judges both orders of every pair. Its replies are constrained by a
llama.cpp grammar to free reasoning followed by ``Choice: A`` or ``Choice: B``, so every
reply yields a choice. The numbers show the machinery (extraction, consistency across the
two orders, win rate), not a verdict: a 135M-parameter judge is a demonstration.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from saving import save

QUESTIONS = [
    ("What is the capital of France?", "Paris.", "Lyon."),
    ("How many legs does a spider have?", "Eight.", "Six."),
    ("What is 12 times 3?", "36.", "32."),
]

CAUTION = (
    "Caution: the judge is a 135M-parameter model; its choices demonstrate the machinery "
    "(constrained replies, both orders, win rates), they are not a verdict on the answers."
)


def table() -> pd.DataFrame:
    n = len(QUESTIONS)
    return pd.DataFrame(
        {
            "question": [q for q, _, _ in QUESTIONS],
            "index": [f"q{i}_facts-general" for i in range(n)],
            "evaluating_guidance": ["Prefer the response that answers correctly."] * n,
            "task": ["facts-general"] * n,
            "reference_answer": [""] * n,
            "answer-careful": [a for _, a, _ in QUESTIONS],
            "answer-sloppy": [b for _, _, b in QUESTIONS],
        }
    )


def run(out_dir: Path, console: Console) -> None:
    from assay.llm import RunOptions, evaluate, load_model
    from assay.llm.pairwise.task import PairwiseTask
    from assay.store import ItemRecord

    task = PairwiseTask(
        table(), models=["careful"], reference_model="sloppy", max_tokens=40, num_bootstrap=200
    )
    options = RunOptions(cache=out_dir / "pairwise-cache.sqlite", quiet=False, timeout=600)
    run = evaluate(task, load_model("embedded"), options)
    assert task.rows is not None
    calls = Table("pair", "order", "judge's reply (constrained)", "choice")
    for r in task.rows.to_dict("records"):
        reply = " ".join(str(r["reply"] or "").split())
        calls.add_row(r["index"], f"{r['model_a']} first", Text(reply[-60:]), r["choice"] or "-")
    console.print(calls)
    shown = Table("metric", "value", "what")
    for type_, params, what in (
        ("ExtractionRate", {}, "replies with a Choice: X among the offered letters"),
        ("ConsistencyRate", {}, "pairs judged the same in both orders"),
        (
            "WinRate",
            {"model": "careful", "counting": "debiased"},
            "careful's win rate against sloppy (debiased, ties half)",
        ),
    ):
        found = run.metrics.filter(type_, **params)
        value = found[0].value if len(found) == 1 else None
        shown.add_row(type_, "null" if value is None else f"{value:.2f}", what)
    console.print(shown)
    constraint = run.parameters.get("constraint", "none")
    n = len(run.calls)
    console.print(f"{run.paid_calls} judge calls (constraint: {constraint}); {n} replies")
    console.print(f"[yellow]{CAUTION}[/]")
    (out_dir / "pairwise.json").write_text(run.metrics.to_json(indent=2) + "\n")
    items = [ItemRecord.from_llm(c.item, c.record, c.parsed) for c in run.calls]
    save(out_dir, run.metrics, console, kind="pairwise", dataset="three facts",
         model="embedded", items=items)  # fmt: skip
