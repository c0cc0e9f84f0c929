"""Model specs, retry timing, cache keys, progress output, item validation, the llm CLI."""

from __future__ import annotations

import asyncio
import io
import json
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.llm import (
    CallError,
    ChatResponse,
    Item,
    ResponseCache,
    RetryPolicy,
    Runner,
    Usage,
    cache_key,
    load_model,
    parse_model_spec,
)
from assay.llm.models.openai_compat import parse_completion, parse_retry_after

cli = CliRunner()


# -- model specs ---------------------------------------------------------------------


def test_model_specs():
    s = parse_model_spec("http://127.0.0.1:8000/v1/#smollm2-135m-instruct")
    assert (s.kind, s.model, s.base_url) == (
        "openai",
        "smollm2-135m-instruct",
        "http://127.0.0.1:8000/v1",
    )
    assert parse_model_spec("https://api.example.test/v1#m:7b").model == "m:7b"
    assert parse_model_spec("openai:gpt-4o-mini") == parse_model_spec(" openai:gpt-4o-mini ")
    assert parse_model_spec("embedded").kind == "embedded"
    e = parse_model_spec("embedded:/models/x.gguf")
    assert (e.kind, e.path, e.model) == ("embedded", "/models/x.gguf", "x.gguf")


def test_default_spec_comes_from_the_environment(monkeypatch):
    assert parse_model_spec(None).kind == "embedded"
    monkeypatch.setenv("ASSAY_MODEL", "openai:gpt-4o-mini")
    assert parse_model_spec(None).model == "gpt-4o-mini"


@pytest.mark.parametrize(
    "bad",
    ["gpt-4o", "openai:", "http://127.0.0.1:8000/v1", "http://h/v1#", "embedded:", "ftp://x#m"],
)
def test_bad_specs_are_clear_errors(bad):
    with pytest.raises(InvalidInputError, match="model spec"):
        parse_model_spec(bad)


def test_api_key_from_environment(monkeypatch, chat_server):
    # what the server receives: the key as a Bearer token, as the openai SDK sends it
    srv = chat_server()
    monkeypatch.setenv("ASSAY_LLM_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-second")
    first = load_model(srv.spec())
    monkeypatch.delenv("ASSAY_LLM_API_KEY")
    second = load_model(srv.spec())
    monkeypatch.delenv("OPENAI_API_KEY")
    none = load_model(srv.spec())
    for m in (first, second, none):
        (r,) = Runner(m, cache=None, quiet=True).run([Item.from_prompt("a", "hi")])
        assert r.ok, r
    assert srv.authorizations == ["Bearer sk-from-env", "Bearer sk-second", "Bearer no-key"]


def test_openai_spec_uses_openai_base_url(monkeypatch, chat_server):
    srv = chat_server()
    seen = []
    orig = srv._completion

    def spy(prompt, req):
        seen.append(req)
        return orig(prompt, req)

    srv._completion = spy
    monkeypatch.setenv("OPENAI_BASE_URL", srv.url + "/")
    m = load_model("openai:fake-model", api_key="sk-x")
    assert m.identity == srv.spec() and m.spec == "openai:fake-model"
    (r,) = Runner(m, cache=None, quiet=True).run([Item.from_prompt("a", "hi")])
    assert r.ok and r.text == "echo: hi" and srv.authorizations == ["Bearer sk-x"]
    assert seen[0]["model"] == "fake-model"


# -- retry timing --------------------------------------------------------------------


def test_retry_after_forms():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    when = datetime.now(UTC) + timedelta(seconds=30)
    assert 25 <= parse_retry_after({"retry-after": format_datetime(when, usegmt=True)}) <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-4"}) == 0.0


@given(st.integers(1, 12), st.floats(0.001, 5), st.floats(0.01, 60), st.integers(0, 2**32))
def test_backoff_is_exponential_with_bounded_jitter(retry, base, cap, seed):
    p = RetryPolicy(backoff_base=base, backoff_max=cap)
    d = min(cap, base * 2 ** (retry - 1))
    wait = p.delay(retry, None, random.Random(seed))
    assert d / 2 <= wait <= d


@given(st.floats(0, 1000), st.floats(0.1, 200), st.integers(0, 2**32))
def test_retry_after_wait_is_honoured_and_capped(after, cap, seed):
    wait = RetryPolicy(max_retry_after=cap).delay(1, after, random.Random(seed))
    target = min(after, cap)
    assert target <= wait <= target * 1.1 + 1e-12


def test_status_classes():
    assert all(CallError.status_is_retryable(s) for s in (408, 429, 500, 502, 503, 504, 599))
    assert not any(CallError.status_is_retryable(s) for s in (400, 401, 403, 404, 409, 422))


def test_parse_completion_rejects_what_is_not_an_answer():
    with pytest.raises(CallError) as e:
        parse_completion(b"<html>", 0.0)
    assert e.value.kind == "bad_response" and e.value.retryable
    with pytest.raises(CallError) as e:
        parse_completion(b'{"choices": [{"message": {"content": null}}]}', 0.0)
    assert e.value.kind == "bad_response" and not e.value.retryable
    r = parse_completion(b'{"choices": [{"message": {"content": "x"}}]}', 0.5)
    assert r.text == "x" and r.usage == Usage() and r.latency == 0.5


# -- cache ---------------------------------------------------------------------------


def test_cache_key_is_canonical_and_discriminating():
    msgs = [{"role": "user", "content": "hi"}]
    k = cache_key("m", msgs, {"temperature": 0, "max_tokens": 5})
    assert k == cache_key(
        "m", [{"content": "hi", "role": "user"}], {"max_tokens": 5, "temperature": 0, "seed": None}
    )
    assert k != cache_key("m2", msgs, {"temperature": 0, "max_tokens": 5})
    assert k != cache_key("m", msgs, {"temperature": 0.1, "max_tokens": 5})
    assert k != cache_key(
        "m", [{"role": "user", "content": "hi "}], {"temperature": 0, "max_tokens": 5}
    )
    assert k != cache_key(
        "m", [{"role": "system", "content": "hi"}], {"temperature": 0, "max_tokens": 5}
    )


def test_cache_is_shared_between_handles(tmp_path):
    a, b = ResponseCache(tmp_path / "c.sqlite"), ResponseCache(tmp_path / "c.sqlite")
    a.put("k", "m", ChatResponse("answer", Usage(3, 4), 0.2, {"id": "x"}))
    got = b.get("k")
    assert (got.text, got.usage, got.latency, got.raw) == ("answer", Usage(3, 4), 0.2, {"id": "x"})
    assert b.get_many(["k", "missing"]).keys() == {"k"}


def test_staged_answers_are_committed_by_flush_and_seen_by_reads(tmp_path):
    a, b = ResponseCache(tmp_path / "c.sqlite"), ResponseCache(tmp_path / "c.sqlite")
    for i in range(3):
        a.stage(f"k{i}", "m", ChatResponse(f"answer {i}", Usage(1, 1), 0.1, {"i": i}))
    assert a.staged == 3 and b.get("k0") is None  # not committed yet: another handle sees none
    assert a.get("k1").text == "answer 1"  # a read through the staging handle commits first
    assert a.staged == 0 and len(b) == 3 and b.get("k2").raw == {"i": 2}
    a.stage("k3", "m", ChatResponse("late", Usage(), 0.0))
    a.close()  # closing commits what is staged
    assert b.get("k3").text == "late"


def test_runner_commits_answers_in_batches_and_all_of_them(tmp_path):
    import sqlite3

    cache = ResponseCache(tmp_path / "c.sqlite")
    commits = []
    cache._db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    items = [Item.from_prompt(str(i), f"p{i}") for i in range(200)]
    recs = Runner(Flaky(), cache=cache, quiet=True, max_concurrency=32).run(items)
    assert all(r.ok for r in recs)
    with sqlite3.connect(tmp_path / "c.sqlite") as other:  # committed: seen by another reader
        assert other.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 200
    assert 1 <= len(commits) < 20  # not one transaction per answer


def test_a_failing_cache_write_fails_the_run(tmp_path):
    import sqlite3

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache._db.execute("PRAGMA query_only = 1")  # every write now fails inside SQLite
    items = [Item.from_prompt(str(i), f"p{i}") for i in range(5)]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        Runner(Flaky(), cache=cache, quiet=True).run(items)


# -- the runner with in-process models ---------------------------------------------------


class Flaky:
    name = identity = "flaky"

    def __init__(self):
        self.calls = 0

    async def chat(self, messages, **params):
        self.calls += 1
        text = messages[-1]["content"]
        if text == "boom":
            raise ZeroDivisionError("model bug")
        if text == "none":
            return None
        await asyncio.sleep(0)
        return ChatResponse(text[::-1], Usage(1, 1), 0.0)


def test_a_model_bug_becomes_an_error_record_not_a_lost_item():
    recs = Runner(Flaky(), cache=None, quiet=True).run(
        [Item.from_prompt("a", "abc"), Item.from_prompt("b", "boom"), Item.from_prompt("c", "none")]
    )
    assert [r.id for r in recs] == ["a", "b", "c"]
    assert recs[0].text == "cba"
    assert (recs[1].ok, recs[1].error_kind, recs[1].attempts) == (False, "model", 1)
    assert "ZeroDivisionError" in recs[1].error
    assert recs[2].error_kind == "model"


def test_items_are_validated():
    r = Runner(Flaky(), cache=None, quiet=True)
    with pytest.raises(InvalidInputError, match="duplicate id"):
        r.run([Item.from_prompt("a", "x"), Item.from_prompt("a", "y")])
    with pytest.raises(InvalidInputError, match="messages"):
        r.run([{"id": "a", "messages": []}])
    with pytest.raises(InvalidInputError, match="role"):
        r.run([{"id": "a", "messages": [{"content": "x"}]}])
    with pytest.raises(InvalidInputError, match="id"):
        r.run([{"prompt": "x"}])
    assert r.run([{"id": 7, "prompt": "xy", "params": {"temperature": 0}}])[0].id == "7"


def test_progress_bar_and_token_totals_on_a_terminal():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120)
    Runner(Flaky(), cache=None, console=console).run(
        [Item.from_prompt(str(i), f"p{i}") for i in range(5)] + [Item.from_prompt("x", "boom")]
    )
    out = buf.getvalue()
    assert "LLM calls" in out and "6/6" in out and "errors: 1" in out and "calls/s" in out
    assert "6 items: 5 ok, 1 errors" in out and "tokens: 5 prompt + 5 completion = 10" in out


def test_progress_is_silent_when_quiet_or_not_a_tty():
    for console, quiet in (
        (Console(file=io.StringIO(), force_terminal=True), True),
        (Console(file=io.StringIO(), force_terminal=False), False),
    ):
        Runner(Flaky(), cache=None, console=console, quiet=quiet).run([Item.from_prompt("a", "x")])
        assert console.file.getvalue() == ""


def test_on_record_sees_every_item_once():
    seen = []
    Runner(Flaky(), cache=None, quiet=True, on_record=seen.append).run(
        [Item.from_prompt(str(i), "p") for i in range(10)]
    )
    assert sorted(r.id for r in seen) == [str(i) for i in range(10)]


def test_runner_options_are_checked():
    for kw in ({"max_concurrency": 0}, {"rpm": 0}, {"timeout": 0}):
        with pytest.raises(InvalidInputError):
            Runner(Flaky(), cache=None, **kw)


# -- CLI -----------------------------------------------------------------------------


def test_llm_ask(chat_server):
    srv = chat_server()
    res = cli.invoke(app, ["llm", "ask", "--model", srv.spec(), "What is 2+2?"])
    assert res.exit_code == 0, res.output
    assert res.stdout == "echo: What is 2+2?\n"
    assert "fake-model" in res.stderr and "tokens" in res.stderr
    res = cli.invoke(app, ["llm", "ask", "--model", srv.spec(), "--json", "hi"])
    assert json.loads(res.stdout)["text"] == "echo: hi"


def test_llm_ask_reports_endpoint_errors(chat_server):
    srv = chat_server({"hi": ["401"]})
    res = cli.invoke(app, ["llm", "ask", "--model", srv.spec(), "hi"])
    assert res.exit_code == 1 and "http 401" in res.stderr and "injected 401" in res.stderr
    res = cli.invoke(app, ["llm", "ask", "--model", "gpt-4o", "hi"])
    assert res.exit_code == 2 and "model spec" in res.stderr


def test_llm_run_jsonl(chat_server, tmp_path):
    srv = chat_server({"b": ["400"]})
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"id": 1, "prompt": "a"})
        + "\n\n"
        + json.dumps({"id": 2, "messages": [{"role": "user", "content": "b"}]})
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    res = cli.invoke(
        app,
        [
            "llm",
            "run",
            str(items),
            "--model",
            srv.spec(),
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "c.sqlite"),
        ],
    )
    assert res.exit_code == 1  # one item failed; the file still has both records
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["ok"], r["status"]) for r in recs] == [("1", True, None), ("2", False, 400)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": 1, "prompt": "a"}) + "\n{oops\n")
    res = cli.invoke(app, ["llm", "run", str(bad), "--model", srv.spec()])
    assert res.exit_code == 2 and "bad.jsonl: row 2" in res.stderr


def test_llm_run_save_stores_every_item(chat_server, tmp_path):
    from assay.store import Store

    srv = chat_server({"b": ["404"]})
    items = tmp_path / "qs.jsonl"
    items.write_text(
        "".join(json.dumps({"id": i, "prompt": p}) + "\n" for i, p in enumerate(["a", "b", "c"]))
    )
    db = f"sqlite:///{tmp_path / 'store.db'}"
    res = cli.invoke(
        app,
        [
            "llm",
            "run",
            str(items),
            "--model",
            srv.spec(),
            "--no-cache",
            "--save",
            "--db",
            db,
            "-o",
            str(tmp_path / "o.jsonl"),
        ],
    )
    assert res.exit_code == 1 and "stored as failed evaluation" in res.stderr
    with Store(db) as s:
        # a run with failed items is stored failed (issue 36 item 7): latest() skips it
        (only,) = s.list(kind="llm_run")
        assert only.status == "failed"
        ev = s.get(only.id, items=True)
    assert ev.model == srv.spec()
    assert [(m.type, m.value) for m in ev.metrics][:3] == [
        ("Items", 3),
        ("Errors", 1),
        ("Calls", 3),
    ]
    assert [(i.item_id, i.ok, i.raw_answer, i.status) for i in ev.items] == [
        ("0", True, "echo: a", None),
        ("1", False, None, 404),
        ("2", True, "echo: c", None),
    ]
    assert ev.items[0].prompt == [{"role": "user", "content": "a"}]
