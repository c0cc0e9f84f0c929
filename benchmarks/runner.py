"""Runner throughput against a loopback chat server with a fixed 50 ms latency.

Part 1 isolates the runner: an in-process model that answers after ``asyncio.sleep(0.05)``
(no HTTP), so any shortfall from the ideal is the runner's own overhead (scheduling,
bookkeeping, the SQLite cache write, records).

Part 2 is the whole stack. For each concurrency (1, 16, 64, 256) it sends N requests
(default 2,000) through ``assay.llm.Runner`` (with its SQLite response cache on, as in
real runs, and a fresh cache file so every request is a real call) and, as the peer,
through the bare ``openai.AsyncOpenAI`` client under an ``asyncio.Semaphore`` (no
retries, cache or bookkeeping). The server runs in its own process.

Printed per concurrency: calls/s, fraction of the ideal (concurrency / latency), wall
overhead per call (time per call minus the 50 ms, per concurrency slot), client CPU ms
per call, and the ratio of the runner's throughput to the bare SDK's.
Goal: >= 90% of ideal at concurrency 64, runner overhead < 1 ms per call.

    python benchmarks/runner.py [--n 2000] [--latency 0.05] [--concurrency 1,16,64,256]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from assay.llm import Item, Runner, load_model


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay.testing.llm", "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    return proc, url


def server_calls(proc: subprocess.Popen) -> int:
    import json

    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("stats\n")
    proc.stdin.flush()
    return int(json.loads(proc.stdout.readline())["calls"])


def run_assay(url: str, n: int, c: int, tag: str) -> tuple[float, float, int]:
    model = load_model(f"{url}#bench", timeout=30, max_connections=max(c, 16))
    items = [Item.from_prompt(f"{tag}-{i}", f"{tag} request {i}") for i in range(n)]
    with tempfile.TemporaryDirectory() as d:
        runner = Runner(
            model, max_concurrency=c, timeout=30, cache=Path(d) / "cache.sqlite", quiet=True
        )
        t0, p0 = time.perf_counter(), time.process_time()
        records = runner.run(items)
        wall, cpu = time.perf_counter() - t0, time.process_time() - p0
    ok = sum(r.ok for r in records)
    return wall, cpu, ok


class SleepModel:
    """Answers every call after a fixed latency, in-process."""

    name = identity = "sleep"

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def chat(self, messages, **params):  # type: ignore[no-untyped-def]
        from assay.llm import ChatResponse, Usage

        await asyncio.sleep(self.latency)
        return ChatResponse("ok", Usage(1, 1), self.latency, None)


def run_runner_only(n: int, c: int, latency: float, tag: str) -> tuple[float, float, int]:
    items = [Item.from_prompt(f"{tag}-{i}", f"{tag} request {i}") for i in range(n)]
    with tempfile.TemporaryDirectory() as d:
        runner = Runner(
            SleepModel(latency),
            max_concurrency=c,
            timeout=30,
            cache=Path(d) / "cache.sqlite",
            quiet=True,
        )
        t0, p0 = time.perf_counter(), time.process_time()
        records = runner.run(items)
        wall, cpu = time.perf_counter() - t0, time.process_time() - p0
    return wall, cpu, sum(r.ok for r in records)


def run_bare(n: int, c: int, latency: float) -> tuple[float, float, int]:
    """The floor: n sleeps of ``latency`` under a semaphore of c, nothing else."""

    async def main() -> int:
        sem = asyncio.Semaphore(c)

        async def one() -> bool:
            async with sem:
                await asyncio.sleep(latency)
                return True

        return sum(await asyncio.gather(*(one() for _ in range(n))))

    t0, p0 = time.perf_counter(), time.process_time()
    ok = asyncio.run(main())
    return time.perf_counter() - t0, time.process_time() - p0, ok


def run_sdk(url: str, n: int, c: int, tag: str) -> tuple[float, float, int]:
    import openai

    from assay.llm.models.openai_compat import _http_client

    async def main() -> int:
        client = openai.AsyncOpenAI(
            base_url=url,
            api_key="x",
            max_retries=0,
            timeout=30,
            http_client=_http_client(max(c, 16), 30),
        )
        sem = asyncio.Semaphore(c)

        async def one(i: int) -> bool:
            async with sem:
                r = await client.chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": f"{tag} request {i}"}]
                )
                return bool(r.choices[0].message.content)

        done = await asyncio.gather(*(one(i) for i in range(n)))
        await client.close()
        return sum(done)

    t0, p0 = time.perf_counter(), time.process_time()
    ok = asyncio.run(main())
    return time.perf_counter() - t0, time.process_time() - p0, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", default="1,16,64,256")
    ap.add_argument("--no-peer", action="store_true", help="Skip the bare-SDK comparison.")
    ap.add_argument("--runner-only", action="store_true", help="Only part 1 (no HTTP).")
    args = ap.parse_args()
    levels = [int(x) for x in args.concurrency.split(",")]
    head = (
        f"{'conc':>5} {'client':>7} {'calls/s':>9} {'ideal':>8} {'of ideal':>9} "
        f"{'overhead ms/call':>17} {'CPU ms/call':>12}"
    )
    print(
        f"Part 1: the runner alone (in-process model, {args.latency * 1000:.0f} ms latency, "
        f"cache on), {args.n} items per level\n"
    )
    print(head)
    print("-" * len(head))
    for c in levels:
        for name in ("bare", "runner"):
            if name == "bare":
                wall, cpu, ok = run_bare(args.n, c, args.latency)
            else:
                wall, cpu, ok = run_runner_only(args.n, c, args.latency, f"r{c}")
            assert ok == args.n
            rate, ideal = args.n / wall, c / args.latency
            overhead = (wall * c / args.n - args.latency) * 1000
            print(
                f"{c:>5} {name:>7} {rate:>9.1f} {ideal:>8.0f} {rate / ideal:>8.1%} "
                f"{overhead:>17.3f} {cpu / args.n * 1000:>12.3f}"
            )
    print("(bare = asyncio.sleep under a semaphore: the event loop's own floor)\n")
    if args.runner_only:
        return
    proc, url = start_server(args.latency)
    try:
        # warm up both clients (imports, first connections)
        run_assay(url, 20, 4, "warm")
        if not args.no_peer:
            run_sdk(url, 20, 4, "warm")
        print(
            f"Part 2: over HTTP, {args.n} requests per level, server latency "
            f"{args.latency * 1000:.0f} ms, server in its own process\n"
        )
        print(head)
        print("-" * len(head))
        for c in levels:
            ideal = c / args.latency
            rows = [("assay",) + run_assay(url, args.n, c, f"a{c}")]
            if not args.no_peer:
                rows.append(("sdk",) + run_sdk(url, args.n, c, f"s{c}"))
            rates = {}
            for name, wall, cpu, ok in rows:
                assert ok == args.n, f"{name}: only {ok} of {args.n} answered"
                rate = args.n / wall
                rates[name] = rate
                overhead = (wall * c / args.n - args.latency) * 1000  # per call, per slot
                print(
                    f"{c:>5} {name:>7} {rate:>9.1f} {ideal:>8.0f} {rate / ideal:>8.1%} "
                    f"{overhead:>17.2f} {cpu / args.n * 1000:>12.3f}"
                )
            if "sdk" in rates:
                ratio = rates["assay"] / rates["sdk"]
                print(f"{'':>5} {'ratio':>7} assay/sdk throughput = {ratio:.3f}")
        print(f"\nserver counted {server_calls(proc)} calls")
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(30)


if __name__ == "__main__":
    main()
