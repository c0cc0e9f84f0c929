"""Fault injection against a real HTTP server on 127.0.0.1 speaking chat-completions.

Every item must end ok or error as it should, with its attempts counted exactly as the
server saw them, and no item lost, duplicated or given another item's answer.
"""

from __future__ import annotations

import random
import time

import pytest

from assay.llm import Item, RetryPolicy, Runner, load_model

FAST = RetryPolicy(max_retries=3, backoff_base=0.01, backoff_max=0.04)
TIMEOUT = 1.0


def run(server, prompts, *, retry=FAST, timeout=TIMEOUT, backend="auto", **kw):
    model = load_model(server.spec(), timeout=timeout, http_backend=backend)
    items = [Item.from_prompt(f"id-{p}", p) for p in prompts]
    kw.setdefault("cache", None)
    return Runner(model, retry=retry, timeout=timeout, quiet=True, **kw).run(items)


# (plan for one prompt, expected ok, error kind, http status, attempts)
CASES = {
    "429 then ok": (["429", "ok"], True, None, None, 2),
    "500 twice then ok": (["500", "500", "ok"], True, None, None, 3),
    "503 then ok": (["503", "ok"], True, None, None, 2),
    "408 then ok": (["408", "ok"], True, None, None, 2),
    "500 always": (["500"] * 10, False, "http", 500, 4),
    "400 not retried": (["400", "ok"], False, "http", 400, 1),
    "401 not retried": (["401", "ok"], False, "http", 401, 1),
    "404 not retried": (["404", "ok"], False, "http", 404, 1),
    "422 not retried": (["422", "ok"], False, "http", 422, 1),
    "hang then ok": (["hang", "ok"], True, None, None, 2),
    "hang always": (["hang"] * 10, False, "timeout", None, 4),
    "drop then ok": (["drop", "ok"], True, None, None, 2),
    "drop always": (["drop"] * 10, False, "connection", None, 4),
    "malformed then ok": (["malformed", "ok"], True, None, None, 2),
    "malformed always": (["malformed"] * 10, False, "bad_response", None, 4),
    "no choices not retried": (["empty", "ok"], False, "bad_response", None, 1),
}


@pytest.mark.parametrize("backend", ["aiohttp", "httpx"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_fault_ends_as_it_should(chat_server, case, backend):
    plan, ok, kind, status, attempts = CASES[case]
    srv = chat_server({"p": plan, "q": []})
    recs = run(srv, ["p", "q"], backend=backend)
    assert [r.id for r in recs] == ["id-p", "id-q"]
    r, control = recs
    assert r.ok is ok, r
    assert r.attempts == attempts == srv.per_prompt["p"]
    assert r.error_kind == kind
    assert r.status == status
    if ok:
        assert r.text == "echo: p" and r.error is None
        assert r.usage.prompt_tokens == 1 and r.usage.completion_tokens == 2
    else:
        assert r.text is None and r.error
    # the healthy neighbour is unaffected
    assert control.ok and control.text == "echo: q" and control.attempts == 1


def test_retry_after_is_honoured(chat_server):
    srv = chat_server({"p": ["429:0.3", "ok"]})
    t0 = time.perf_counter()
    (r,) = run(srv, ["p"])
    assert r.ok and r.attempts == 2
    assert r.elapsed >= 0.3
    assert time.perf_counter() - t0 >= 0.3


def test_retry_after_beats_short_backoff_and_is_capped(chat_server):
    # The server asks for 10 s; max_retry_after caps it at 0.2 s.
    srv = chat_server({"p": ["429:10", "ok"]})
    (r,) = run(
        srv, ["p"], retry=RetryPolicy(max_retries=2, backoff_base=0.001, max_retry_after=0.2)
    )
    assert r.ok and r.attempts == 2 and 0.2 <= r.elapsed < 2.0


def test_errors_carry_the_server_message(chat_server):
    srv = chat_server({"p": ["401"]})
    (r,) = run(srv, ["p"])
    assert r.error.startswith("injected 401 (HTTP 401: ") and "injected" in r.error


@pytest.mark.parametrize("backend", ["aiohttp", "httpx"])
def test_mixed_faults_nothing_lost_or_duplicated(chat_server, backend):
    rng = random.Random(7)
    outcomes = ["ok", "429", "500", "503", "hang", "drop", "malformed", "400", "404"]
    plan = {}
    for i in range(120):
        plan[f"item {i}"] = [rng.choice(outcomes) for _ in range(rng.randint(0, 3))]
    expected = {}
    for p, steps in plan.items():
        # first non-retryable outcome decides; else ok if one of the first 4 attempts is ok
        tried = (steps + ["ok"] * 4)[:4]
        verdict = None
        for n, s in enumerate(tried, start=1):
            if s in ("400", "404"):
                verdict = (False, n)
                break
            if s == "ok":
                verdict = (True, n)
                break
        expected[p] = verdict or (False, 4)
    srv = chat_server({k: list(v) for k, v in plan.items()})
    recs = run(srv, list(plan), max_concurrency=16, backend=backend)
    assert len(recs) == len(plan)
    assert [r.id for r in recs] == [f"id-{p}" for p in plan]
    for p, r in zip(plan, recs):
        ok, attempts = expected[p]
        assert (r.ok, r.attempts) == (ok, attempts), (p, plan[p], r)
        assert srv.per_prompt[p] == r.attempts
        if r.ok:
            assert r.text == f"echo: {p}"
    assert srv.calls == sum(r.attempts for r in recs)
    assert srv.answered == sum(r.ok for r in recs)


def test_max_concurrency_is_respected(chat_server):
    srv = chat_server(latency=0.05)
    recs = run(srv, [f"p{i}" for i in range(40)], max_concurrency=4)
    assert all(r.ok for r in recs)
    assert srv.max_in_flight == 4


def test_rpm_limit_paces_calls(chat_server):
    srv = chat_server()
    t0 = time.perf_counter()
    recs = run(srv, [f"p{i}" for i in range(6)], max_concurrency=6, rpm=600)  # one call per 0.1 s
    elapsed = time.perf_counter() - t0
    assert all(r.ok for r in recs)
    assert elapsed >= 0.5


def test_cache_makes_reruns_free_and_errors_are_retried(chat_server, tmp_path):
    srv = chat_server({"bad": ["400"]})
    prompts = ["a", "b", "bad"]
    first = run(srv, prompts, cache=tmp_path / "c.sqlite")
    assert [r.ok for r in first] == [True, True, False]
    assert srv.calls == 3
    srv.reset()
    second = run(srv, prompts, cache=tmp_path / "c.sqlite")
    assert srv.calls == 1 and srv.per_prompt["bad"] == 1  # only the error is tried again
    assert [r.text for r in second] == ["echo: a", "echo: b", "echo: bad"]
    assert [r.cached for r in second] == [True, True, False]
    assert second[0].attempts == 0 and second[0].usage == first[0].usage


def test_cache_key_includes_params_and_model(chat_server, tmp_path):
    srv = chat_server()
    cache = tmp_path / "c.sqlite"
    model = load_model(srv.spec())
    r1 = Runner(model, cache=cache, quiet=True).run([Item.from_prompt("x", "p", temperature=0.0)])
    r2 = Runner(model, cache=cache, quiet=True).run([Item.from_prompt("x", "p", temperature=0.5)])
    other = load_model(srv.url + "#other-model")
    r3 = Runner(other, cache=cache, quiet=True).run([Item.from_prompt("x", "p", temperature=0.0)])
    assert srv.calls == 3 and not r1[0].cached and not r2[0].cached and not r3[0].cached


def test_identical_items_share_one_call(chat_server):
    srv = chat_server()
    model = load_model(srv.spec())
    items = [
        Item.from_prompt("a", "same"),
        Item.from_prompt("b", "same"),
        Item.from_prompt("c", "other"),
    ]
    recs = Runner(model, cache=None, quiet=True).run(items)
    assert srv.calls == 2
    assert [r.id for r in recs] == ["a", "b", "c"]
    assert recs[1].text == "echo: same" and recs[1].attempts == 0 and recs[1].cached


def test_generation_params_reach_the_server(chat_server):
    srv = chat_server()
    seen = {}
    orig = srv._completion

    def spy(prompt, req):
        seen.update(req)
        return orig(prompt, req)

    srv._completion = spy
    model = load_model(srv.spec())
    Runner(model, cache=None, quiet=True).run(
        [Item.from_prompt("a", "x", temperature=0.25, max_tokens=7, logprobs=True)]
    )
    assert seen["temperature"] == 0.25 and seen["max_tokens"] == 7 and seen["logprobs"] is True
    assert seen["model"] == "fake-model"
    assert seen["messages"] == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize("backend", ["aiohttp", "httpx"])
def test_unreachable_endpoint_is_a_connection_error(backend):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    model = load_model(f"http://127.0.0.1:{port}/v1#m", timeout=1, http_backend=backend)
    (r,) = Runner(
        model, cache=None, quiet=True, retry=RetryPolicy(max_retries=1, backoff_base=0.01)
    ).run([Item.from_prompt("a", "x")])
    assert not r.ok and r.error_kind == "connection" and r.attempts == 2
    assert "refused" in r.error.lower() or "connect" in r.error.lower()


def test_the_default_transport_is_aiohttp():
    assert load_model("http://127.0.0.1:9/v1#m").http_backend == "aiohttp"


def test_a_model_reused_across_runs_gets_fresh_connections(chat_server):
    # each Runner.run is its own event loop; pooled connections must not leak across
    srv = chat_server()
    model = load_model(srv.spec())
    for n in range(3):
        recs = Runner(
            model, cache=None, quiet=True, max_concurrency=8, retry=RetryPolicy(max_retries=0)
        ).run([Item.from_prompt(str(i), f"run {n} item {i}") for i in range(16)])
        assert all(r.ok and r.attempts == 1 for r in recs)
    assert srv.calls == 48


@pytest.mark.parametrize("backend", ["aiohttp", "httpx"])
def test_proxy_from_the_environment_is_used(chat_server, monkeypatch, backend):
    # The fake server plays the proxy: a request for an unresolvable host reaches it only
    # through HTTP_PROXY (a proxy gets the absolute URL and answers for it).
    srv = chat_server()
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{srv.port}")
    model = load_model("http://assay-proxy-test.invalid/v1#fake-model", http_backend=backend)
    (r,) = Runner(model, cache=None, quiet=True, retry=RetryPolicy(max_retries=0)).run(
        [Item.from_prompt("a", "via proxy")]
    )
    assert r.ok and r.text == "echo: via proxy", r
    assert srv.calls == 1
    monkeypatch.setenv("NO_PROXY", "assay-proxy-test.invalid")
    model = load_model("http://assay-proxy-test.invalid/v1#fake-model", http_backend=backend)
    (r,) = Runner(model, cache=None, quiet=True, retry=RetryPolicy(max_retries=0)).run(
        [Item.from_prompt("a", "direct")]
    )
    assert not r.ok and r.error_kind == "connection" and srv.calls == 1
