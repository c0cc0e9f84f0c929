"""`assay llm average --ci`: a stratified bootstrap over the stored items of each dataset's
last LLM fairness run, made against a real loopback chat server and a real store.

The runs answer with a mix of positive, negative and unreadable answers and two call
errors per dataset (so invalid answers, errors and unasked counterfactuals are all in the
items). Proven: the stored items give every stored record back exactly; the interval equals
a naive loop over materialised stratified resamples; the seed fixes it; no model call is
made; it survives save -> show -> export on SQLite and PostgreSQL; bad options exit 2.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.suites import average_fairness
from assay.llm.suites.average import FIELDS, stored_args, stratum_seed, stratum_units
from assay.llm.suites.datasets import dataset_spec
from assay.llm.suites.fairness import FairnessSuite, load_fairness_data
from assay.llm.suites.fairness_metrics import ERROR, INVALID, NOT_ASKED, LLMFairnessEvaluator
from assay.results import Metric, MetricSet
from assay.store import ItemRecord, Store
from assay.testing.llm import FakeChatServer
from assay.uncertainty.resampling import resample_counts

runner = CliRunner()
DATASETS = ("pisa", "compas")
KINDS = [
    "StatisticalParityDifference",
    "DisparateImpact",
    "AverageOddsDifference",
    "EqualOpportunityDifference",
    "Accuracy",
    "Precision",
    "Recall",
    "CounterfactualChangeRate",
]
CI_KEYS = {"ci_low", "ci_high", "confidence_level", "ci_method", "num_bootstrap", "seed"}


def _respond(messages: list[dict[str, Any]]) -> str:
    text = messages[-1]["content"]
    pos, neg = ("H", "L") if "readingScore" in text else ("1", "0")
    k = zlib.crc32(text.encode()) % 7
    return pos if k < 3 else neg if k < 6 else "unsure"


def _failing_prompts() -> dict[str, list[str]]:
    """Two original prompts per dataset that fail once (no retry: a call error)."""
    plan = {}
    for ds in DATASETS:
        prepared = FairnessSuite(load_fairness_data(ds, sample=True)).prepare()
        for k in (1, 4):
            plan[prepared[k].item.messages[-1]["content"]] = ["500"]
    return plan


def _llm(*args: str) -> Any:
    return runner.invoke(app, ["llm", *args], catch_exceptions=False)


def _run_both(srv: FakeChatServer, db: str, cache: Path) -> None:
    for ds in DATASETS:
        r = _llm("fairness", "--dataset", ds, "--sample", "-m", srv.spec(), "--db", db, "--quiet",
                 "--retries", "0", "--max-errors", "5", "--cache", str(cache))  # fmt: skip
        assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    """A SQLite store with one pisa and one compas run; and the calls they made."""
    tmp = tmp_path_factory.mktemp("avgci")
    db = f"sqlite:///{tmp / 'store.db'}"
    with FakeChatServer(_failing_prompts(), responder=_respond) as srv:
        _run_both(srv, db, tmp / "cache.sqlite")
        return db, srv.calls


def _stored(db: str) -> tuple[dict[str, tuple[int, MetricSet]], dict[str, Any]]:
    with Store(db) as st:
        found = st.latest_per_dataset(kind="llm_fairness", datasets=list(DATASETS), require=True)
        items = {d: st.get(ev.id, items=True).items for d, ev in found.items()}
    return {d: (ev.id, ev.metrics) for d, ev in found.items()}, items  # type: ignore[misc]


def test_stored_items_give_every_stored_record_back(runs):
    db, calls = runs
    assert calls == 2 * (24 + 22)  # 24 rows, their counterfactuals but for 2 failed calls
    evaluations, items = _stored(db)
    for ds, (_, stored) in evaluations.items():
        args, why = stored_args(items[ds])
        assert why == "" and args is not None and len(args["target"]) == 24
        assert ERROR in args["predicted"] and INVALID in args["predicted"]
        assert NOT_ASKED in args["counterfactual"] and INVALID in args["counterfactual"]
        spec = dataset_spec(ds)
        ev = LLMFairnessEvaluator(group_column=spec.sensitive_column, groups=spec.sensitive_values)
        again = ev.add(**args).compute().to_list()
        want = [
            {**d, "parameters": {k: v for k, v in d["parameters"].items() if k != "answer_mode"}}
            for d in stored.to_list()
        ]
        assert again == want


def _value(ms: MetricSet, kind: str) -> float | None:
    found = [m for m in ms.filter(kind) if "group" not in m.parameters]
    v = found[0].value
    return None if v is None else float(v)


def _naive(evaluations, items, level: float, b: int, seed: int) -> dict[str, tuple]:
    """Each resample materialised as a list of test rows per dataset, each dataset scored
    by a fresh evaluator, the defined values averaged, the percentiles taken."""
    per_dataset = []
    for j, ds in enumerate(evaluations):
        args, _ = stored_args(items[ds])
        units = np.stack([np.asarray(args[k]) for k in FIELDS], axis=1)
        rows, mult = stratum_units(args)
        expanded = np.repeat(rows, mult, axis=0)  # the collapsed rows are the test rows
        assert sorted(map(tuple, expanded.tolist())) == sorted(map(tuple, units.tolist()))
        counts = np.concatenate(list(resample_counts(mult, b, stratum_seed(seed, j))))
        values = []
        for draw in counts.astype(int):
            sample = np.repeat(rows, draw, axis=0)
            ms = LLMFairnessEvaluator().add(**{k: sample[:, i] for i, k in enumerate(FIELDS)})
            values.append({kind: _value(ms.compute(), kind) for kind in KINDS})
        per_dataset.append(values)
    out = {}
    for kind in KINDS:
        means = []
        for r in range(b):
            got = [vals[r][kind] for vals in per_dataset if vals[r][kind] is not None]
            if got:
                means.append(sum(got) / len(got))
        tail = (1 - level) / 2
        out[kind] = tuple(np.quantile(means, [tail, 1 - tail])) if means else (None, None)
    return out


def test_interval_equals_a_naive_loop_over_stratified_resamples(runs):
    db, _ = runs
    evaluations, items = _stored(db)
    ms = average_fairness(evaluations, items=items, ci=0.9, num_bootstrap=150, seed=11)
    naive = _naive(evaluations, items, 0.9, 150, 11)
    widths = 0
    for kind in KINDS:
        m = ms.get(kind)
        assert m.value is not None, kind
        p = m.parameters
        assert CI_KEYS <= set(p) and p["ci_method"] == "bootstrap" and p["seed"] == 11
        lo, hi = naive[kind]
        assert p["ci_low"] == pytest.approx(lo, abs=1e-12), kind
        assert p["ci_high"] == pytest.approx(hi, abs=1e-12), kind
        widths += p["ci_high"] > p["ci_low"]
    assert widths == len(KINDS)  # every interval has a width: the data vary


def test_seed_fixes_the_interval_and_another_seed_moves_it(runs):
    db, _ = runs
    evaluations, items = _stored(db)

    def run(seed: int) -> list[dict]:
        kw = {"ci": 0.95, "num_bootstrap": 100, "seed": seed}
        return average_fairness(evaluations, items=items, **kw).to_list()

    first = run(3)
    assert run(3) == first
    other = run(4)
    assert [d["value"] for d in other] == [d["value"] for d in first]  # values unchanged
    assert [d["parameters"]["ci_low"] for d in other] != [d["parameters"]["ci_low"] for d in first]
    # a method that does not apply to a mean over datasets gives the bootstrap, and says so
    wilson = average_fairness(evaluations, items=items, ci=0.95, ci_method="wilson",
                              num_bootstrap=100, seed=3).to_list()  # fmt: skip
    assert wilson == first


def test_items_that_disagree_with_the_record_give_no_interval(runs):
    db, _ = runs
    evaluations, items = _stored(db)
    eid, ms = evaluations["compas"]
    bumped = MetricSet(
        Metric(m.type, m.value + 0.01, m.parameters)
        if m.type == "Accuracy" and "group" not in m.parameters
        else m
        for m in ms
    )
    out = average_fairness({**evaluations, "compas": (eid, bumped)}, items=items, ci=0.95,
                           num_bootstrap=50)  # fmt: skip
    for m in out:
        assert m.parameters["ci_low"] is None and m.parameters["ci_high"] is None
        assert f"evaluation {eid} (compas): its items give Accuracy" in m.parameters["ci_undefined"]


def _saved_id(r: Any) -> int:
    return int(re.search(r"saved evaluation (\d+)", r.stderr).group(1))  # type: ignore[union-attr]


def test_cli_makes_no_call_and_the_interval_survives_the_store(store_url, tmp_path):
    with FakeChatServer(_failing_prompts(), responder=_respond) as srv:
        _run_both(srv, store_url, tmp_path / "cache.sqlite")
        before = srv.calls
        r = _llm("average", "--datasets", "pisa,compas", "--db", store_url, "--ci", "0.9",
                 "--num-bootstrap", "120", "--seed", "5")  # fmt: skip
        assert r.exit_code == 0, r.output
        assert srv.calls == before == 2 * (24 + 22)  # the average asks the model nothing
    printed = json.loads(r.stdout)
    evaluations, items = _stored(store_url)
    api = average_fairness(evaluations, items=items, ci=0.9, num_bootstrap=120, seed=5)
    assert printed == api.to_list()
    assert all(CI_KEYS <= set(d["parameters"]) for d in printed)
    eid = _saved_id(r)
    with Store(store_url) as st:
        ev = st.get(eid)
    assert ev.metrics.to_list() == printed
    assert ev.parameters["ci"] == 0.9 and ev.parameters["num_bootstrap"] == 120
    shown = runner.invoke(app, ["runs", "show", str(eid), "--db", store_url])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["metrics"] == printed
    exported = runner.invoke(app, ["runs", "export", str(eid), "--db", store_url])
    assert json.loads(exported.stdout)[0]["metrics"] == printed
    csv = runner.invoke(app, ["runs", "export", str(eid), "--db", store_url, "-f", "csv"])
    rows = csv.stdout.strip().splitlines()[1:]
    assert len(rows) == len(printed) and all('"ci_low"' in row for row in rows)
    items_csv = runner.invoke(app, ["runs", "export", str(evaluations["pisa"][0]), "--items",
                                    "--db", store_url, "-f", "csv"])  # fmt: skip
    head, first = items_csv.stdout.splitlines()[:2]
    assert head.endswith(",info") and '""target""' in first


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--ci", "1.5"], "--ci"),
        (["--ci", "0.9", "--num-bootstrap", "1"], "--num-bootstrap"),
        (["--ci", "0.9", "--ci-method", "jackknife"], "--ci-method"),
        (["--ci", "0.9", "--seed", "-1"], "--seed"),
    ],
)
def test_bad_interval_options_exit_2_with_one_line(tmp_path, extra, flag):
    db = tmp_path / "none.db"  # the options fail first: the store is never opened
    r = _llm("average", "--db", str(db), *extra)
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in r.output
    assert not db.exists()


def test_a_run_stored_without_items_or_facts_gives_the_reason(runs, tmp_path):
    src, _ = runs
    evaluations, items = _stored(src)
    db = f"sqlite:///{tmp_path / 'copy.db'}"
    with Store(db) as st:
        pisa = st.save(evaluations["pisa"][1], kind="llm_fairness", dataset="pisa")  # no items
        old = [replace(it, info=None) for it in items["compas"]]  # rows from before `info`
        compas = st.save(evaluations["compas"][1], kind="llm_fairness", dataset="compas",
                         items=old)  # fmt: skip
    r = _llm("average", "--db", db, "--ci", "0.95", "--num-bootstrap", "50", "--no-save")
    assert r.exit_code == 0, r.output
    for d in json.loads(r.stdout):
        p = d["parameters"]
        assert d["value"] is not None and p["ci_low"] is None and p["ci_high"] is None
        assert p["ci_undefined"] == f"evaluation {pisa} (pisa): stored without items"
    with Store(db) as st:
        st.delete(pisa)
        compas_only = st.latest_per_dataset(kind="llm_fairness", datasets=["compas"])
    assert compas_only["compas"].id == compas
    r = _llm("average", "--datasets", "compas", "--db", db, "--ci", "0.95", "--no-save")
    why = json.loads(r.stdout)[0]["parameters"]["ci_undefined"]
    assert why.startswith(f"evaluation {compas} (compas): item ") and "facts" in why


def test_an_older_store_gets_the_info_column_and_its_rows_say_why(store_url):
    """A store from before ``info``: opened, the column is added (rows kept, ``info`` null),
    and the average's interval names the rows that lack it."""
    from sqlalchemy import create_engine, text

    with Store(store_url) as st:
        pisa = st.save([Metric("Accuracy", 0.5)], kind="llm_fairness", dataset="pisa",
                       items=[ItemRecord("0", "p", ok=True, parsed={"valid": True})])  # fmt: skip
    eng = create_engine(store_url)
    with eng.begin() as conn:
        conn.execute(text("ALTER TABLE assay_items DROP COLUMN info"))
    eng.dispose()
    with Store(store_url) as st:
        (old,) = st.get(pisa, items=True).items
        assert old.item_id == "0" and old.info is None
        evaluations = {"pisa": (pisa, st.get(pisa).metrics)}
    out = average_fairness(evaluations, items={"pisa": [old]}, ci=0.95, num_bootstrap=10)
    assert "stored without its row's facts" in out.get("Accuracy").parameters["ci_undefined"]


def test_a_loglik_run_gives_its_records_back_too(tmp_path):
    """In the loglik modes a row's counterfactual is asked with it: where the original call
    failed, the stored counterfactual answer must not count (as in the run)."""
    db = f"sqlite:///{tmp_path / 's.db'}"
    with FakeChatServer(_failing_prompts()) as srv:
        r = _llm("fairness", "--dataset", "pisa", "--sample", "-m", srv.spec(), "--db", db,
                 "--quiet", "--retries", "0", "--max-errors", "5", "--answer-mode", "loglik",
                 "--loglik", "chat", "--no-cache")  # fmt: skip
        assert r.exit_code == 0, r.output
        assert srv.calls == 48  # originals and counterfactuals in one round
    with Store(db) as st:
        (ev,) = st.list()
        full = st.get(ev.id, items=True)
    failed = {it.info["row"] for it in full.items if not it.ok}
    assert len(failed) == 2 and all(
        it.ok for it in full.items if it.info["counterfactual"] and it.info["row"] in failed
    )  # their counterfactuals were answered, and are stored
    args, _ = stored_args(full.items)
    assert args["counterfactual"].count(NOT_ASKED) == 2
    spec = dataset_spec("pisa")
    ev2 = LLMFairnessEvaluator(group_column=spec.sensitive_column, groups=spec.sensitive_values)
    again = ev2.add(**args).compute().to_list()
    assert again == [
        {**d, "parameters": {k: v for k, v in d["parameters"].items() if k != "answer_mode"}}
        for d in full.metrics.to_list()
    ]
