"""A model typed two ways is one model: the store keeps the model its answers name.

A server answers ``#smollm2`` as ``smollm2-135m-instruct`` (its ``model`` field, as a
server that loads one model and accepts a short name for it does); runs typed either way,
with credentials or without, are found by ``runs list/latest --model``, ``llm average
--model`` and ``assay compare --model`` whichever of the names is typed. The name comes
from the answers the run gets anyway (fresh or from the cache): no call is made for it.
Real HTTP server on 127.0.0.1, real SQLite and PostgreSQL; stores made before the column
existed are upgraded on open without losing a row.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, insert, text
from typer.testing import CliRunner

from assay.cli.main import app
from assay.io.urls import mask_credentials
from assay.llm.models.spec import canonical_model_name, served_model
from assay.results import Metric
from assay.store import Store, StoreError
from assay.store.tables import Base, EvaluationRow
from assay.testing.llm import FakeChatServer

runner = CliRunner()

FULL = "smollm2-135m-instruct"


def _answer(messages):
    text = messages[-1]["content"]
    return "H" if "readingScore" in text else "1" if "two_year_recid" in text else "Y"


def _fairness(ds: str, spec: str, db: str, *extra: str) -> None:
    r = runner.invoke(app, ["llm", "fairness", "--dataset", ds, "--sample", "-n", "3",
                            "-m", spec, "--db", db, "--quiet", *extra])  # fmt: skip
    assert r.exit_code == 0, r.output


@pytest.fixture
def two_ways(store_url):
    """pisa run as ``#smollm2`` and compas as the full name, both with credentials."""
    with FakeChatServer(responder=_answer, aliases={"smollm2": FULL}) as srv:
        base = srv.url.replace("http://", "http://user:secret@")
        _fairness("pisa", f"{base}#smollm2", store_url)
        _fairness("compas", f"{base}#{FULL}", store_url)
        yield store_url, srv.url, srv


def _typed_forms(url: str) -> list[str]:
    creds = url.replace("http://", "http://user:other@")
    masked = url.replace("http://", "http://user:***@")
    return [f"{creds}#smollm2", f"{masked}/#{FULL}", f"{creds}#{FULL}", f"{masked}#smollm2"]


def test_each_run_keeps_its_spec_as_typed_and_the_served_name(two_ways):
    db, url, srv = two_ways
    masked = url.replace("http://", "http://user:***@")
    with Store(db) as st:
        evs = {e.dataset: e for e in st.list(kind="llm_fairness")}
        paid = sum(it.attempts for e in evs.values() for it in st.get(e.id, items=True).items)
    assert evs["pisa"].model == f"{masked}#smollm2"
    assert evs["compas"].model == f"{masked}#{FULL}"
    assert {e.served_model for e in evs.values()} == {f"{masked}#{FULL}"}
    assert srv.calls == paid  # one call per paid item: the served name cost nothing more
    r = runner.invoke(app, ["runs", "export", "--format", "csv", "--db", db])
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows and {row["served_model"] for row in rows} == {f"{masked}#{FULL}"}
    assert all(m == "smollm2" or m == FULL for m in (q["model"] for q in srv.requests))


def test_runs_latest_and_list_find_both_whichever_name_is_typed(two_ways):
    db, url, srv = two_ways
    calls = srv.calls
    for typed in _typed_forms(url):
        r = runner.invoke(app, ["runs", "latest", "--kind", "llm_fairness", "--db", db,
                                "--model", typed])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert sorted(json.loads(r.stdout)) == ["compas", "pisa"], typed
        r = runner.invoke(app, ["runs", "list", "--db", db, "--model", typed])
        assert sorted(e["dataset"] for e in json.loads(r.stdout)) == ["compas", "pisa"]
        assert "secret" not in r.stdout + r.output and "user:other" not in r.stdout
    assert srv.calls == calls  # finding runs never calls the model


def test_llm_average_averages_both_whichever_name_is_typed(two_ways):
    db, url, _ = two_ways
    for typed in _typed_forms(url):
        r = runner.invoke(app, ["llm", "average", "--datasets", "pisa,compas", "--db", db,
                                "--no-save", "--model", typed])  # fmt: skip
        assert r.exit_code == 0, r.output
        acc = next(d for d in json.loads(r.stdout) if d["type"] == "Accuracy")
        assert acc["parameters"]["n"] == 2, typed
        assert "secret" not in r.stdout + r.output
    # the stored average names the one model that answered both: found under either name
    masked = url.replace("http://", "http://user:***@")
    r = runner.invoke(app, ["llm", "average", "--datasets", "pisa,compas", "--db", db,
                            "--save", "--model", f"{masked}#smollm2"])  # fmt: skip
    assert r.exit_code == 0, r.output
    with Store(db) as st:
        for typed in (f"{masked}#smollm2", f"{masked}#{FULL}"):
            evs = st.list(kind="llm_fairness_average", model=typed)
            assert [e.served_model for e in evs] == [f"{masked}#{FULL}"], typed


def test_compare_and_report_select_by_model_whichever_name_is_typed(two_ways, tmp_path):
    db, url, _ = two_ways
    with Store(db) as st:
        ids = sorted(e.id for e in st.list(kind="llm_fairness"))
    for typed in _typed_forms(url):
        r = runner.invoke(app, ["compare", "--kind", "llm_fairness", "--last", "2",
                                "--model", typed, "--db", db])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert sorted(json.loads(r.stdout)["runs"]) == ids
    r = runner.invoke(app, ["compare", "--kind", "llm_fairness", "--last", "2",
                            "--model", f"{url}#other", "--db", db])  # fmt: skip
    assert r.exit_code == 2 and "no finished evaluation" in r.output
    page = tmp_path / "report.html"
    r = runner.invoke(app, ["report", "--kind", "llm_fairness", "--last", "2", "--db", db,
                            "--model", _typed_forms(url)[0], "--out", str(page)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "2 runs" in r.output and page.stat().st_size > 0


def test_another_model_on_the_same_server_stays_apart(two_ways):
    db, url, _ = two_ways
    creds = url.replace("http://", "http://user:secret@")
    _fairness("pisa", f"{creds}#tiny", db)
    r = runner.invoke(app, ["runs", "list", "--db", db, "--model", f"{creds}#tiny"])
    (ev,) = json.loads(r.stdout)
    assert ev["served_model"] == ev["model"] == f"{url.replace('http://', 'http://user:***@')}#tiny"
    r = runner.invoke(app, ["runs", "list", "--db", db, "--model", f"{creds}#smollm2"])
    assert sorted(e["dataset"] for e in json.loads(r.stdout)) == ["compas", "pisa"]


def test_a_run_answered_from_the_cache_keeps_the_served_name(tmp_path):
    db = str(tmp_path / "s.db")
    with FakeChatServer(responder=_answer, aliases={"smollm2": FULL}) as srv:
        _fairness("pisa", f"{srv.url}#smollm2", db)
        calls = srv.calls
        _fairness("pisa", f"{srv.url}#smollm2", db)
        assert srv.calls == calls  # every answer from the cache
    with Store(db) as st:
        first, again = st.list()
        items = st.get(first.id, items=True).items or []
    assert all(it.cached for it in items) and items
    assert first.served_model == again.served_model == f"{srv.url}#{FULL}"


def test_nothing_says_when_no_answer_came():
    class Spec:
        spec = "http://127.0.0.1:9/v1#m"

    assert served_model(Spec(), []) is None
    assert served_model(Spec(), [{"choices": []}, None, {"model": 3}]) is None
    assert served_model(Spec(), [{"model": "x\x1b[2J"}, {"model": "y" * 201}]) is None
    raws = [{"model": "b"}, {"model": "a"}, {"model": "a"}]
    assert served_model(Spec(), raws) == "http://127.0.0.1:9/v1#a"  # the most frequent
    openai = type("OpenAI", (), {"spec": "openai:gpt-4o-mini"})()
    dated = "gpt-4o-mini-2024-07-18"
    assert served_model(openai, [{"model": dated}]) == f"openai:{dated}"
    leaky = [{"model": "http://me:s3cret@x/m"}]
    assert served_model(Spec(), leaky) == "http://127.0.0.1:9/v1#http://me:***@x/m"


def test_a_failed_run_without_answers_is_stored_without_a_served_name(tmp_path):
    db = str(tmp_path / "s.db")
    with FakeChatServer(plan={}) as srv:
        srv.plan = _AlwaysFail()
        r = runner.invoke(app, ["llm", "fairness", "--dataset", "pisa", "--sample", "-n", "2",
                                "-m", f"{srv.url}#smollm2", "--db", db, "--quiet",
                                "--retries", "0"])  # fmt: skip
        assert r.exit_code == 1, r.output
    with Store(db) as st:
        (ev,) = st.list()
    assert ev.status == "failed" and ev.served_model is None


class _AlwaysFail(dict):  # type: ignore[type-arg]
    """A plan that answers every prompt 400 (not retried)."""

    def get(self, prompt, default=None):  # noqa: ARG002
        return ["400"]


def _old_store(url: str) -> None:
    """A store as assay wrote it before ``served_model``: one run in it."""
    eng = create_engine(url)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    with eng.begin() as conn:
        Base.metadata.create_all(conn)
        conn.execute(text("ALTER TABLE assay_evaluations DROP COLUMN served_model"))
        row = {"created": when, "finished": when, "kind": "classification", "dataset": "d",
               "model": "http://h/v1#m", "parameters": {}, "status": "finished",
               "assay_version": "0.1"}  # fmt: skip
        conn.execute(insert(EvaluationRow), [row])  # served_model is not named: not sent
    eng.dispose()


def test_an_older_store_is_upgraded_by_a_write_without_losing_a_row(store_url):
    _old_store(store_url)
    # a read (runs list/latest open with create=False) names it and changes nothing
    with pytest.raises(StoreError, match="older assay.*served_model.*assay runs upgrade"):
        Store(store_url, create=False)
    with Store(store_url) as st:  # the first write upgrades it
        (old,) = st.list(model="http://h/v1#m")
        assert old.model == "http://h/v1#m" and old.served_model is None
        st.save([Metric("Accuracy", 1.0)], kind="classification", dataset="d",
                model="http://h/v1#alias", served_model="http://h/v1#m")  # fmt: skip
        assert len(st.list(model="http://h/v1#alias")) == 2  # the old row, by its name
    with Store(store_url, create=False) as st:  # a second open finds nothing to add
        assert [e.served_model for e in st.list()] == ["http://h/v1#m", None]


def test_the_embedded_model_under_its_name_and_a_copy_of_its_file_is_one_model(tmp_path):
    """``embedded`` and ``embedded:/elsewhere/<same file>``: the real embedded model."""
    from assay.llm.models.embedded import default_gguf_path

    copy = tmp_path / "weights" / default_gguf_path().name
    copy.parent.mkdir()
    shutil.copyfile(default_gguf_path(), copy)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q", "prompt": "Say hi.", "params": {"max_tokens": 4}}))
    db = str(tmp_path / "s.db")
    for spec in ("embedded", f"embedded:{copy}"):
        r = runner.invoke(app, ["llm", "run", str(items), "-m", spec, "--save", "--db", db,
                                "--quiet"])  # fmt: skip
        assert r.exit_code == 0, r.output
    with Store(db) as st:
        evs = st.list()
        assert [e.model for e in evs] == [f"embedded:{copy}", "embedded"]
        assert {e.served_model for e in evs} == {f"embedded#{copy.name}"}
        for typed in ("embedded", f"embedded:{copy}", f"embedded#{copy.name}"):
            assert len(st.list(model=typed)) == 2, typed


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    host=_word,
    port=st.sampled_from(["", ":80", ":8000"]),
    user=st.one_of(st.just(""), _word),
    password=_word,
    typed=_word,
    served=st.text(min_size=1, max_size=40).filter(lambda s: s.strip() and s.isprintable()),
)
def test_property_the_served_name_is_shown_as_it_is_found(host, port, user, password, typed,
                                                         served):  # fmt: skip
    """The served name the store shows is canonical (typing it back finds the run: the
    filter's canonical form is itself) and holds no password."""
    creds = f"{user}:{password}@" if user else ""
    model = type("M", (), {"spec": f"HTTP://{creds}{host.upper()}{port}/v1/#{typed}"})()
    name = served_model(model, [{"model": served}])
    assert name is not None and canonical_model_name(name) == name
    assert name.endswith("#" + mask_credentials(served.strip()))
    assert (f":{password}@" not in name) if user else ("@" not in name.partition("#")[0])
