"""Client-side cost per call: assay's runner against the bare openai SDK, httpx and Inspect AI.

A minimal OpenAI-compatible chat server runs in its own process on 127.0.0.1 (raw asyncio,
HTTP/1.1 keep-alive) and answers every request after a fixed latency (default 20 ms) with
``"echo: <last user message>"``; it stops by itself after the number of requests the
benchmark will send (or when the benchmark's pipe closes, or after 120 s idle).

For each concurrency (default 1, 64, 256) every client sends N chat calls (default 2,000;
``--n1`` for concurrency 1, default 500, since 2,000 serial calls take 40 s each) and checks
every answer. Measured per client: calls/s (wall) and client CPU ms per call (this
process's CPU time, all threads, / calls). The clients:

* ``assay``: ``assay.llm.Runner`` configured as ``assay llm run`` configures it (the model
  from ``load_model(spec, timeout=...)``, retries on, the SQLite response cache on with a
  fresh file so every call is a real call, the records kept).
* ``openai``: the bare ``openai.AsyncOpenAI`` client, ``chat.completions.create`` under an
  ``asyncio.Semaphore`` (SDK defaults, its retries off), the responses kept.
* ``httpx``: raw ``httpx.AsyncClient.post`` + ``response.json()`` under a semaphore.
* ``inspect``: Inspect AI's model API (``get_model("openai-api/bench/...", base_url=...)``,
  ``model.generate`` with ``GenerateConfig(max_connections=c)``), its cache off.

Ratios are the peer's CPU per call over assay's (above 1: assay is cheaper) and assay's
calls/s over the peer's.

    python benchmarks/runner.py [--n 2000] [--n1 500] [--latency 0.02] [--concurrency 1,64,256]
        [--clients assay,openai,httpx,inspect]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CLIENTS = ("assay", "openai", "httpx", "inspect")


# -- the server (its own process) ------------------------------------------------------------


def _answer(body: bytes) -> bytes:
    req = json.loads(body)
    prompt = req["messages"][-1]["content"]
    payload = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": req.get("model", "bench"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"echo: {prompt}"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
        }
    ).encode()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(payload)).encode() + b"\r\n\r\n"
    )
    return head + payload


def serve(latency: float, max_requests: int, idle: float = 120.0) -> None:
    """Serve on 127.0.0.1: print the port, answer ``max_requests`` requests, then exit."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        state = {"served": 0, "last": loop.time()}

        class Conn(asyncio.Protocol):
            def connection_made(self, transport: Any) -> None:
                self.transport = transport
                self.buf = b""

            def data_received(self, data: bytes) -> None:
                self.buf += data
                while True:
                    end = self.buf.find(b"\r\n\r\n")
                    if end < 0:
                        return
                    head = self.buf[:end].lower()
                    i = head.find(b"content-length:")
                    j = head.find(b"\r\n", i)
                    n = int(head[i + 15 : j if j >= 0 else None]) if i >= 0 else 0
                    if len(self.buf) < end + 4 + n:
                        return
                    body, self.buf = self.buf[end + 4 : end + 4 + n], self.buf[end + 4 + n :]
                    loop.call_later(latency, self.reply, body)

            def reply(self, body: bytes) -> None:
                if not self.transport.is_closing():
                    self.transport.write(_answer(body))
                state["served"] += 1
                state["last"] = loop.time()
                if state["served"] >= max_requests and not done.done():
                    loop.call_later(0.2, done.set_result, None)

        server = await loop.create_server(Conn, "127.0.0.1", 0, backlog=4096)
        print(server.sockets[0].getsockname()[1], flush=True)
        # stop when the benchmark's pipe closes (it died) or when idle for too long
        loop.add_reader(sys.stdin.fileno(), lambda: done.done() or done.set_result(None))

        async def watchdog() -> None:
            while not done.done():
                await asyncio.sleep(1.0)
                if loop.time() - state["last"] > idle and not done.done():
                    done.set_result(None)

        task = asyncio.create_task(watchdog())
        await done
        task.cancel()
        server.close()

    asyncio.run(main())


def start_server(latency: float, max_requests: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(max_requests), "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


# -- the clients -----------------------------------------------------------------------------


def run_assay(url: str, prompts: list[str], c: int) -> list[str]:
    from assay.llm import Item, Runner, load_model
    from assay.llm.policy import RetryPolicy

    model = load_model(f"{url}#bench", timeout=60)
    items = [Item.from_prompt(f"i{n}", p) for n, p in enumerate(prompts)]
    with tempfile.TemporaryDirectory() as d:
        runner = Runner(
            model,
            max_concurrency=c,
            timeout=60,
            retry=RetryPolicy(max_retries=5, backoff_base=0.5),
            cache=Path(d) / "cache.sqlite",
            quiet=True,
        )
        records = runner.run(items)
        if runner.cache is not None:
            runner.cache.close()
    return [r.text or "" for r in records]


def run_openai(url: str, prompts: list[str], c: int) -> list[str]:
    import openai

    async def main() -> list[str]:
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, timeout=60)
        sem = asyncio.Semaphore(c)

        async def one(p: str) -> str:
            async with sem:
                r = await client.chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": p}]
                )
                return r.choices[0].message.content or ""

        try:
            return list(await asyncio.gather(*(one(p) for p in prompts)))
        finally:
            await client.close()

    return asyncio.run(main())


def run_httpx(url: str, prompts: list[str], c: int) -> list[str]:
    import httpx

    async def main() -> list[str]:
        limits = httpx.Limits(max_connections=c, max_keepalive_connections=c)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
            sem = asyncio.Semaphore(c)

            async def one(p: str) -> str:
                async with sem:
                    r = await client.post(
                        "/chat/completions",
                        json={"model": "bench", "messages": [{"role": "user", "content": p}]},
                        headers={"authorization": "Bearer x"},
                    )
                    r.raise_for_status()
                    return str(r.json()["choices"][0]["message"]["content"])

            return list(await asyncio.gather(*(one(p) for p in prompts)))

    return asyncio.run(main())


def run_inspect(url: str, prompts: list[str], c: int) -> list[str]:
    from inspect_ai.model import GenerateConfig, get_model

    async def main() -> list[str]:
        # Inspect keeps one connection semaphore per model name for the process: a fresh
        # name per run, so each run gets its own max_connections.
        model = get_model(
            f"openai-api/bench/bench-c{c}-{len(prompts)}-{prompts[0].split()[0]}",
            base_url=url,
            api_key="x",
            config=GenerateConfig(max_connections=c, max_retries=5, timeout=60),
            memoize=False,
        )
        outs = await asyncio.gather(*(model.generate(p) for p in prompts))
        return [o.completion for o in outs]

    return asyncio.run(main())


RUNNERS: dict[str, Callable[[str, list[str], int], list[str]]] = {
    "assay": run_assay,
    "openai": run_openai,
    "httpx": run_httpx,
    "inspect": run_inspect,
}


def measure(name: str, url: str, n: int, c: int, tag: str) -> tuple[float, float]:
    """(calls/s, client CPU ms per call) of one client sending n calls at concurrency c."""
    prompts = [f"{tag} {name} c{c} request {i}" for i in range(n)]
    gc.collect()
    t0, p0 = time.perf_counter(), time.process_time()
    answers = RUNNERS[name](url, prompts, c)
    wall, cpu = time.perf_counter() - t0, time.process_time() - p0
    wrong = sum(a != f"echo: {p}" for a, p in zip(answers, prompts, strict=True))
    if wrong:
        raise SystemExit(f"{name}: {wrong} of {n} answers were wrong or missing")
    return n / wall, cpu / n * 1000


# -- main --------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="Calls per client and concurrency.")
    ap.add_argument("--n1", type=int, default=500, help="Calls per client at concurrency 1.")
    ap.add_argument("--latency", type=float, default=0.02, help="Server latency in seconds.")
    ap.add_argument("--concurrency", default="1,64,256")
    ap.add_argument("--clients", default=",".join(CLIENTS))
    ap.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve is not None:
        serve(args.latency, args.serve)
        return
    levels = [int(x) for x in args.concurrency.split(",")]
    clients = [x for x in args.clients.split(",") if x]
    unknown = set(clients) - set(CLIENTS)
    if unknown:
        raise SystemExit(f"unknown clients {sorted(unknown)}; choose from {', '.join(CLIENTS)}")
    warm = 20
    sizes = {c: args.n1 if c == 1 else args.n for c in levels}
    total = len(clients) * (warm + sum(sizes.values()))
    proc, url = start_server(args.latency, total)
    print(
        f"server: raw asyncio on 127.0.0.1 in its own process, {args.latency * 1000:g} ms per "
        f"answer; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start"
    )
    print(f"calls per client: {', '.join(f'{sizes[c]} at c={c}' for c in levels)}\n")
    try:
        for name in clients:  # imports, first connections, lazy initialisation
            measure(name, url, warm, 4, "warm")
        head = f"{'conc':>5} {'client':>8} {'calls/s':>9} {'CPU ms/call':>12}"
        head += f" {'CPU vs assay':>13} {'assay speed':>12}"
        print(head)
        print("-" * len(head))
        for c in levels:
            rows = {name: measure(name, url, sizes[c], c, "run") for name in clients}
            base = rows.get("assay")
            for name, (rate, cpu) in rows.items():
                ratio = speed = ""
                if base is not None and name != "assay":
                    ratio, speed = f"{cpu / base[1]:.2f}x", f"{base[0] / rate:.2f}x"
                print(f"{c:>5} {name:>8} {rate:>9.1f} {cpu:>12.3f} {ratio:>13} {speed:>12}")
        print(
            "\nCPU vs assay = the client's CPU per call / assay's (above 1: assay is cheaper);"
            "\nassay speed = assay's calls/s / the client's."
            f"\nload average at the end: {os.getloadavg()[0]:.2f}"
        )
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(30)


if __name__ == "__main__":
    main()
