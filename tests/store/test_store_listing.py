"""The store's times, listings and model names, as a user of ``assay runs`` sees them.

- ``created`` is when the command began its work, ``finished`` when it was stored;
- ``runs list`` counts each evaluation's metric records;
- the items CSV has one ``status`` column (the item's; the evaluation's is renamed);
- ``runs list --format table`` fits an 80-column terminal;
- a model typed two ways (credentials, case, port, trailing slash) is stored once and
  found whichever way it is typed; no password reaches any output.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.models.spec import canonical_model_name
from assay.results import Metric
from assay.store import ItemRecord, Store
from assay.testing.llm import FakeChatServer

runner = CliRunner()


@pytest.fixture
def classification_args(tmp_path):
    pd.DataFrame({"uid": list("abcd"), "value": ["x", "y", "x", "y"]}).to_csv(
        tmp_path / "gts.csv", index=False
    )
    pd.DataFrame({"uid": list("abcd"), "value": list("xyyy"), "score": [0.9] * 4}).to_csv(
        tmp_path / "pds.csv", index=False
    )
    g, p = str(tmp_path / "gts.csv"), str(tmp_path / "pds.csv")
    return ["classification", "--groundtruths", g, "--predictions", p, "--metrics", "Accuracy"]


def test_created_is_when_the_command_began(classification_args, tmp_path):
    db = str(tmp_path / "s.db")
    before = datetime.now().astimezone()
    r = runner.invoke(app, [*classification_args, "--save", "--db", db])
    after = datetime.now().astimezone()
    assert r.exit_code == 0, r.output
    (ev,) = json.loads(runner.invoke(app, ["runs", "list", "--db", db]).stdout)
    created = datetime.fromisoformat(ev["created"])
    finished = datetime.fromisoformat(ev["finished"])
    # the command read its files and computed between the two: created < finished
    assert before <= created < finished <= after


def test_runs_list_counts_metrics(classification_args, tmp_path):
    db = str(tmp_path / "s.db")
    assert runner.invoke(app, [*classification_args, "--save", "--db", db]).exit_code == 0
    with Store(db) as st:
        (ev,) = st.list()
        n = len(st.get(ev.id).metrics)
    (listed,) = json.loads(runner.invoke(app, ["runs", "list", "--db", db]).stdout)
    assert listed["metric_count"] == n > 0
    table = runner.invoke(app, ["runs", "list", "--db", db, "--format", "table"]).stdout
    row = next(line for line in table.splitlines() if "classification" in line)
    assert row.split()[-1] == str(n)


def test_items_csv_has_one_status_column(tmp_path):
    db = str(tmp_path / "s.db")
    item = ItemRecord("q1", [{"role": "user", "content": "hi"}], ok=False, status=429)
    with Store(db) as st:
        st.save([Metric("Accuracy", 1.0)], kind="llm_exam", model="m", items=[item])
    r = runner.invoke(app, ["runs", "export", "--items", "--format", "csv", "--db", db])
    assert r.exit_code == 0, r.output
    header, row = list(csv.reader(io.StringIO(r.stdout)))
    assert len(header) == len(set(header))
    got = dict(zip(header, row, strict=True))
    assert got["evaluation_status"] == "finished" and got["status"] == "429"


def test_runs_list_table_fits_80_columns(tmp_path):
    db = str(tmp_path / "s.db")
    spec = "http://user:secret@127.0.0.1:8000/v1#smollm2-135m-instruct"
    with Store(db) as st:
        st.save([Metric("Accuracy", 0.5)] * 3, kind="llm_fairness_average", model=spec,
                dataset="pisa,compas,kaleidoscope,german,adult")  # fmt: skip
        st.save([Metric("Accuracy", 0.5)], kind="classification", model="tree",
                dataset="/home/someone/projects/evaluation/data/iris_predictions.csv")  # fmt: skip
    r = runner.invoke(app, ["runs", "list", "--db", db, "--format", "table"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    for whole in ("llm_fairness_average", "classification", "finished", "metrics"):
        assert any(whole in line for line in lines), whole
    assert "secret" not in r.stdout


@pytest.mark.parametrize(
    "typed",
    [
        "http://user:secret@127.0.0.1:8000/v1#m",
        "http://user:other@127.0.0.1:8000/v1/#m",  # another password, a trailing slash
        "HTTP://user:secret@127.0.0.1:8000/v1#m",  # the scheme in capitals
        "http://user:***@127.0.0.1:8000/v1#m",  # the masked form the store shows
    ],
)
def test_a_model_is_found_however_it_is_typed(tmp_path, typed):
    db = str(tmp_path / "s.db")
    with Store(db) as st:
        st.save([Metric("Accuracy", 0.5)], kind="classification", dataset="d",
                model=" http://user:secret@127.0.0.1:8000/v1/#m ")  # fmt: skip
        st.save([Metric("Accuracy", 0.9)], kind="classification", dataset="d", model="tree")
    r = runner.invoke(app, ["runs", "list", "--db", db, "--model", typed])
    (ev,) = json.loads(r.stdout)
    assert ev["model"] == "http://user:***@127.0.0.1:8000/v1#m"
    r = runner.invoke(app, ["runs", "latest", "--kind", "classification", "--db", db,
                            "--model", typed])  # fmt: skip
    assert json.loads(r.stdout)["d"]["metrics"][0]["value"] == 0.5
    assert "secret" not in r.stdout + r.output


def test_canonical_model_name_forms():
    assert canonical_model_name("embedded") == canonical_model_name(" embedded ") == "embedded"
    assert canonical_model_name("https://Host:443/v1#gpt") == "https://host/v1#gpt"
    assert canonical_model_name("http://host:8080/v1#a") != canonical_model_name("http://host/v1#a")
    assert canonical_model_name("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
    assert canonical_model_name("my model") == "my model"  # not a spec: kept as typed


def test_llm_average_matches_and_masks_a_model_with_credentials(tmp_path):
    db = str(tmp_path / "s.db")

    def answer(messages):
        text = messages[-1]["content"]
        return "H" if "readingScore" in text else "1" if "two_year_recid" in text else "Y"

    with FakeChatServer(responder=answer) as srv:
        url = srv.url.replace("http://", "http://user:secret@")
        for ds in ("pisa", "compas"):
            r = runner.invoke(app, ["llm", "fairness", "--dataset", ds, "--sample", "-n", "4",
                                    "-m", f"{url}#{srv.model}", "--db", db, "--quiet"])  # fmt: skip
            assert r.exit_code == 0, r.output
        assert all(a and a.startswith("Basic ") for a in srv.authorizations)
    typed = f"{url.replace('secret', 'typo')}/#{srv.model}"
    r = runner.invoke(app, ["llm", "average", "--datasets", "pisa,compas", "--db", db,
                            "--model", typed])  # fmt: skip
    assert r.exit_code == 0, r.output
    acc = next(d for d in json.loads(r.stdout) if d["type"] == "Accuracy")
    assert acc["parameters"]["n"] == 2 and acc["value"] is not None
    r = runner.invoke(app, ["llm", "average", "--datasets", "pisa,german", "--db", db,
                            "--model", f"{url}#{srv.model}"])  # fmt: skip
    assert r.exit_code == 2 and "german" in r.output
    assert "user:***@" in r.output and "secret" not in r.output
    with Store(db) as st:
        assert {e.model for e in st.list()} == {canonical_model_name(f"{url}#{srv.model}")}
