"""LLM suites: CAT throughput through the whole suite stack, and the CAT metrics at scale.

Part 1: 2,000 context association items (generated, intersentence) through
``assay.llm.suites.run_suite`` (prompt building, the runner with its SQLite cache on and a
fresh cache file, parsing, scoring) against the loopback chat server of
``assay.testing.llm`` in its own process, answering after a fixed 20 ms, at concurrency 64.
Printed: items/s and the share of the ideal throughput (concurrency / latency = 3,200/s),
and, for scale on the same machine at the same moment, the same prompts through the bare
``Runner`` (no suite: no prompt building, parsing or scoring).

Part 2: the whole CAT metric computation (``CATEvaluator.add`` + ``compute``) on 1e6
synthetic answers (random outcomes, test types and four bias types), with integer outcome
codes and with outcome names. Goal: well under a second.

    python benchmarks/suites.py [--n 2000] [--latency 0.02] [--concurrency 64] [--answers 1000000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from assay.llm import Item, Runner, load_model
from assay.llm.suites import CATEvaluator, CATSuite, run_suite

BIAS = ("gender", "race", "profession", "religion")
# the loopback server module
_SERVER = "assay.testing.llm"


def dev_doc(n: int) -> dict:
    items = [
        {
            "id": f"b{i}",
            "bias_type": BIAS[i % 4],
            "context": f"Benchmark context number {i}.",
            "sentences": [
                {"sentence": f"Stereotyped follow-up {i}.", "gold_label": "stereotype"},
                {"sentence": f"Counter follow-up {i}.", "gold_label": "anti-stereotype"},
                {"sentence": f"Unrelated follow-up {i}.", "gold_label": "unrelated"},
            ],
        }
        for i in range(n)
    ]
    return {"data": {"intrasentence": [], "intersentence": items}}


def throughput(n: int, latency: float, concurrency: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", _SERVER, "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        model = load_model(f"{url}#bench", timeout=30, max_connections=max(concurrency, 16))
        suite = CATSuite(dev_doc(n), source="bench.json", max_queries=n)
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            result = run_suite(
                suite, model, concurrency=concurrency, cache=Path(d) / "c.sqlite", quiet=True
            )
            wall = time.perf_counter() - t0
            items = [
                Item(f"bare-{p.item.id}", p.item.messages, p.item.params) for p in suite.prepare()
            ]
            items = [
                Item(
                    i.id,
                    ({"role": "user", "content": "bare " + i.messages[0]["content"]},),
                    i.params,
                )
                for i in items
            ]
            runner = Runner(
                model, max_concurrency=concurrency, cache=Path(d) / "b.sqlite", quiet=True
            )
            t0 = time.perf_counter()
            bare = runner.run(items)
            bare_wall = time.perf_counter() - t0
        ok = sum(c.record.ok for c in result.calls)
        ideal = concurrency / latency
        rate, bare_rate = n / wall, n / bare_wall
        print(
            f"CAT suite, {n} items, latency {latency * 1000:.0f} ms, concurrency {concurrency}: "
            f"{rate:,.0f} items/s = {rate / ideal:.1%} of the ideal {ideal:,.0f}/s "
            f"({wall:.2f} s, {ok} ok)"
        )
        print(
            f"  bare Runner, same prompts: {bare_rate:,.0f} items/s = {bare_rate / ideal:.1%} of "
            f"the ideal ({sum(r.ok for r in bare)} ok); suite / bare = {rate / bare_rate:.2f}"
        )
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(10)


def metrics_at_scale(n: int) -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, n)
    test_types = np.array(["intrasentence", "intersentence"])[rng.integers(0, 2, n)]
    bias = np.array(BIAS)[rng.integers(0, 4, n)]
    names = np.array(["stereotype", "anti-stereotype", "unrelated", "other", "error"])[codes]
    for label, outcomes in (("integer codes", codes), ("outcome names", names)):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            ms = CATEvaluator().add(outcomes, test_types, bias).compute()
            best = min(best, time.perf_counter() - t0)
        total = sum(ms.get("CATCounts", scope="general").value.values())
        assert total == n
        print(f"CAT metrics on {n:,} answers ({label}): {best * 1000:.0f} ms (best of 3)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--answers", type=int, default=1_000_000)
    args = ap.parse_args()
    throughput(args.n, args.latency, args.concurrency)
    metrics_at_scale(args.answers)


if __name__ == "__main__":
    main()
