"""The evaluation store's Python API, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from datetime import UTC

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assay
from assay.errors import InvalidInputError
from assay.llm.items import Item, Record
from assay.llm.models.base import Usage
from assay.results import Metric, MetricSet, undefined
from assay.store import ItemRecord, Store, StoreError


def sample_metrics() -> MetricSet:
    return MetricSet(
        [
            Metric(
                "Precision",
                0.1 + 0.2,
                {"label_key": "class", "label_value": "cat", "score_threshold": 0.5},
            ),
            Metric(
                "Counts", {"tp": 3, "fp": 1, "curve": {"0.05": [1.0, 0.25]}}, {"label_value": "dog"}
            ),
            undefined("Recall", "requires TP + FN > 0", label_value="bird"),
            Metric("Accuracy", 1e-300, {}),
            Metric("Flag", True, {"z": 1, "a": 2}),
            Metric("Whole", 1.0, {"threshold": 0.0, "count": 3}),  # 1.0 stays a float, 3 an int
        ]
    )


def test_save_get_roundtrip_is_exact(store_url):
    with Store(store_url) as s:
        ms = sample_metrics()
        eid = s.save(
            ms,
            kind="classification",
            dataset="iris.csv",
            model="tree",
            parameters={"labels": ["a", "b"], "k": 0.5},
        )
        ev = s.get(eid)
    assert (
        ev.metrics == ms
    )  # values (0.30000000000000004, 1e-300, dicts, None) and parameter order exact
    assert ev.metrics.to_json() == ms.to_json()  # and types: 1.0 is not 1 (== would not tell)
    assert list(ev.metrics[4].parameters) == ["z", "a"]
    assert ev.kind == "classification" and ev.dataset == "iris.csv" and ev.model == "tree"
    assert ev.parameters == {"labels": ["a", "b"], "k": 0.5}
    assert ev.status == "finished" and ev.error is None
    assert ev.assay_version == assay.__version__
    assert ev.created.tzinfo is not None and ev.created.utcoffset().total_seconds() == 0
    assert ev.finished is not None


def test_list_filters_and_order(store_url):
    with Store(store_url) as s:
        a = s.save([Metric("A", 1)], kind="classification", dataset="d1", model="m1")
        b = s.save([Metric("A", 2)], kind="classification", dataset="d2", model="m1")
        c = s.save([Metric("A", 3)], kind="fairness", dataset="d1", model="m2")
        r = s.start("llm_fairness", dataset="d1", model="m2")
        assert [e.id for e in s.list()] == [r, c, b, a]  # newest first
        assert [e.id for e in s.list(kind="classification")] == [b, a]
        assert [e.id for e in s.list(dataset="d1")] == [r, c, a]
        assert [e.id for e in s.list(model="m2", kind="fairness")] == [c]
        assert [e.id for e in s.list(status="running")] == [r]
        assert [e.id for e in s.list(limit=2)] == [r, c]
        assert all(e.metrics is None for e in s.list())
        with pytest.raises(InvalidInputError, match="status"):
            s.list(status="done")


def test_latest_finished_per_dataset_and_model(store_url):
    with Store(store_url) as s:
        s.save([Metric("SPD", 0.1)], kind="llm_fairness", dataset="pisa", model="m1")
        p2 = s.save([Metric("SPD", 0.2)], kind="llm_fairness", dataset="pisa", model="m2")
        c1 = s.save([Metric("SPD", 0.3)], kind="llm_fairness", dataset="compas", model="m1")
        failed = s.start("llm_fairness", dataset="pisa", model="m1")
        s.fail(failed, "endpoint down")
        s.start("llm_fairness", dataset="compas", model="m2")  # still running: not "finished"
        s.save([Metric("SPD", 0.9)], kind="classification", dataset="pisa", model="m1")

        latest = s.latest_per_dataset(kind="llm_fairness")
        assert {d: e.id for d, e in latest.items()} == {"compas": c1, "pisa": p2}
        assert latest["pisa"].metrics.get("SPD").value == 0.2

        by_m1 = s.latest_per_dataset(kind="llm_fairness", model="m1")
        assert by_m1["pisa"].metrics.get("SPD").value == 0.1
        assert by_m1["compas"].id == c1

        picked = s.latest_per_dataset(kind="llm_fairness", datasets=["pisa"], model="m2")
        assert list(picked) == ["pisa"]
        with pytest.raises(InvalidInputError, match="compas"):
            s.latest_per_dataset(
                kind="llm_fairness", datasets=["pisa", "compas"], model="m2", require=True
            )

        assert s.latest(kind="llm_fairness", dataset="pisa").id == p2
        assert (
            s.latest(kind="llm_fairness", dataset="pisa", model="m1").metrics.get("SPD").value
            == 0.1
        )
        assert s.latest(kind="llm_fairness", dataset="nope") is None


def test_evaluation_context_finishes_or_fails(store_url):
    with Store(store_url) as s:
        with s.evaluation(
            "llm_exam", dataset="kaleidoscope", model="embedded", parameters={"n": 3}
        ) as ev:
            assert s.get(ev.id).status == "running"
            ev.add_metrics([Metric("A", 1)])
            ev.add_metrics([Metric("B", 2)])
        done = s.get(ev.id)
        assert done.status == "finished" and [m.type for m in done.metrics] == ["A", "B"]

        with pytest.raises(RuntimeError):
            with s.evaluation("llm_exam", dataset="kaleidoscope") as bad:
                raise RuntimeError("judge crashed")
        failed = s.get(bad.id)
        assert failed.status == "failed" and "judge crashed" in failed.error
        assert s.latest(kind="llm_exam", dataset="kaleidoscope").id == ev.id


def test_llm_items_roundtrip(store_url):
    items = [
        Item.from_prompt("q1", "2+2?", system="digits only", max_tokens=3),
        Item.from_prompt("q2", "3+3?"),
    ]
    records = [
        Record("q1", True, text="4", attempts=2, latency=0.25, usage=Usage(7, 1)),
        Record(
            "q2",
            False,
            error_kind="http",
            status=503,
            error="overloaded (after 6 attempts)",
            attempts=6,
            latency=0.1,
        ),
    ]
    with Store(store_url) as s:
        eid = s.save(
            [Metric("Accuracy", 1.0)],
            kind="llm_exam",
            items=[
                ItemRecord.from_llm(items[0], records[0], parsed=4),
                ItemRecord.from_llm(items[1], records[1]),
            ],
        )
        got = s.get(eid, items=True).items
        assert s.get(eid).items is None
    assert [i.item_id for i in got] == ["q1", "q2"]
    a, b = got
    assert a.prompt == [
        {"role": "system", "content": "digits only"},
        {"role": "user", "content": "2+2?"},
    ]
    assert a.params == {"max_tokens": 3}
    assert (
        a.ok,
        a.raw_answer,
        a.parsed,
        a.attempts,
        a.latency,
        a.prompt_tokens,
        a.completion_tokens,
    ) == (True, "4", 4, 2, 0.25, 7, 1)
    assert (b.ok, b.raw_answer, b.parsed, b.error_kind, b.status, b.error, b.attempts) == (
        False,
        None,
        None,
        "http",
        503,
        "overloaded (after 6 attempts)",
        6,
    )


def test_export_json_and_csv(store_url):
    with Store(store_url) as s:
        e1 = s.save(sample_metrics(), kind="classification", dataset="d", model="m")
        e2 = s.save([Metric("QWK", 0.75, {"scale": "1-6"})], kind="scoring", dataset="essays")
        data = json.loads(s.export([e1, e2], fmt="json"))
        assert [d["id"] for d in data] == [e1, e2]
        assert MetricSet.from_json(json.dumps(data[0]["metrics"])) == sample_metrics()
        rows = list(csv.DictReader(io.StringIO(s.export([e1, e2], fmt="csv"))))
        assert len(rows) == len(sample_metrics()) + 1
        assert rows[0]["type"] == "Precision" and float(rows[0]["value"]) == 0.1 + 0.2
        assert json.loads(rows[1]["value"]) == {"tp": 3, "fp": 1, "curve": {"0.05": [1.0, 0.25]}}
        assert (
            rows[2]["value"] == ""
            and json.loads(rows[2]["parameters"])["undefined"] == "requires TP + FN > 0"
        )
        assert rows[-1]["evaluation_id"] == str(e2) and rows[-1]["kind"] == "scoring"
        with pytest.raises(InvalidInputError, match="no such evaluation"):
            s.export([e2 + 100])


def test_delete_and_unknown_id(store_url):
    with Store(store_url) as s:
        eid = s.save([Metric("A", 1)], kind="k")
        s.delete(eid)
        with pytest.raises(InvalidInputError, match="no such evaluation"):
            s.get(eid)
        with pytest.raises(InvalidInputError):
            s.finish(eid)


def test_bad_kind_rejected(store_url):
    with Store(store_url) as s, pytest.raises(InvalidInputError, match="kind"):
        s.save([], kind=" ")


WRITER = r"""
import sys
from assay.results import Metric
from assay.store import Store, ItemRecord
url, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = Store(url)
for i in range(n):
    if i % 2:
        ms = [Metric("M", j, {"tag": tag, "i": i}) for j in range(20)]
        s.save(ms, kind="stress", dataset=tag, model=str(i))
    else:
        with s.evaluation("stress", dataset=tag, model=str(i)) as ev:
            ev.add_metrics([Metric("M", j, {"tag": tag, "i": i}) for j in range(10)])
            its = [ItemRecord(f"{tag}-{i}-{k}", "p", ok=True, raw_answer="a") for k in range(5)]
            ev.add_items(its)
            ev.add_metrics([Metric("M", j, {"tag": tag, "i": i}) for j in range(10, 20)])
print("done")
"""


def test_two_processes_writing_at_once_lose_nothing(store_url):
    Store(store_url).close()  # create the schema first, as any first user would
    n = 40
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, store_url, tag, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for tag in ("a", "b")
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err.decode()
    with Store(store_url) as s:
        evs = s.list(kind="stress")
        assert len(evs) == 2 * n
        assert all(e.status == "finished" for e in evs)
        for tag in ("a", "b"):
            mine = s.list(kind="stress", dataset=tag)
            assert sorted(int(e.model) for e in mine) == list(range(n))
            for e in mine:
                full = s.get(e.id, items=True)
                assert [m.value for m in full.metrics] == list(range(20))
                assert all(m.parameters == {"tag": tag, "i": int(e.model)} for m in full.metrics)
                assert len(full.items) == (5 if int(e.model) % 2 == 0 else 0)


def test_first_open_by_two_processes_at_once(store_url):
    code = (
        "import sys; from assay.store import Store; s = Store(sys.argv[1]); "
        "s.save([], kind='k'); print('ok')"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, store_url], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with Store(store_url) as s:
        assert len(s.list(kind="k")) == 2


def test_unreachable_store_is_a_clear_error():
    with pytest.raises(StoreError, match="cannot open the evaluation store"):
        Store("postgresql://nobody@127.0.0.1:1/none")


def test_default_location_is_under_assay_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    with Store() as s:
        s.save([Metric("A", 1)], kind="k")
        assert s.url == f"sqlite:///{tmp_path / 'home' / 'assay.db'}"
    assert (tmp_path / "home" / "assay.db").exists()
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "other.db"))
    with Store() as s:
        assert s.list() == []
    assert (tmp_path / "other.db").exists()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
metric_types = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=10,
)
metric_sets = st.lists(
    st.builds(
        Metric,
        metric_types,
        json_values,
        st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    ),
    max_size=6,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metric_sets)
def test_property_any_metric_set_roundtrips_on_sqlite(tmp_path, ms):
    with Store(f"sqlite:///{tmp_path / 'prop.db'}") as s:
        eid = s.save(ms, kind="prop")
        got = list(s.get(eid).metrics)
        assert got == [Metric.from_dict(m.to_dict()) for m in ms]
        assert [json.dumps(m.to_dict()) for m in got] == [
            json.dumps(m.to_dict()) for m in ms
        ]  # float stays float


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metric_sets)
def test_property_any_metric_set_roundtrips_on_postgresql(postgres_url, ms):
    with Store(postgres_url) as s:
        eid = s.save(ms, kind="prop")
        got = list(s.get(eid).metrics)
        assert got == [Metric.from_dict(m.to_dict()) for m in ms]
        assert [json.dumps(m.to_dict()) for m in got] == [
            json.dumps(m.to_dict()) for m in ms
        ]  # float stays float


def test_created_times_are_utc_and_ordered(store_url):
    with Store(store_url) as s:
        a = s.save([], kind="k")
        time.sleep(0.01)
        b = s.save([], kind="k")
        ea, eb = s.get(a), s.get(b)
    assert ea.created.tzinfo == UTC and ea.created < eb.created


def test_nul_characters(store_url):
    # NUL inside values, parameters and LLM answers round-trips; in names it is refused
    # (PostgreSQL text columns cannot hold it), on every back end alike.
    ms = MetricSet([Metric("A", "x\x00y", {"k": "\x00"})])
    item = Item.from_prompt("q", "say \x00")
    rec = Record("q", True, text="nul\x00here", attempts=1)
    with Store(store_url) as s:
        eid = s.save(ms, kind="k", items=[ItemRecord.from_llm(item, rec)])
        got = s.get(eid, items=True)
        assert got.metrics == ms
        assert (
            got.items[0].raw_answer == "nul\x00here"
            and got.items[0].prompt[0]["content"] == "say \x00"
        )
        with pytest.raises(InvalidInputError, match="NUL"):
            s.save([Metric("bad\x00type", 1)], kind="k")
        with pytest.raises(InvalidInputError, match="dataset"):
            s.save([], kind="k", dataset="d\x00")
        with pytest.raises(InvalidInputError, match="Unicode"):
            s.save([Metric("\ud800", 1)], kind="k")
        assert len(s.list()) == 1  # nothing half-written
