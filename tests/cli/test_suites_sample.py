"""``--sample`` for every suite (issue 19, item 12): ``llm cat --sample`` and ``llm language
--sample`` run on the samples shipped with assay, as do ``run_cat(sample=True)`` and
``run_language(sample=True)``; the CLI and the library give the same records."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store
from assay.testing.llm import FakeChatServer


@pytest.fixture
def server():
    def answer(messages):
        text = messages[-1]["content"]
        return '{"choice": "Paris"}' if '{"choice"' in text else "2"

    with FakeChatServer(responder=answer) as srv:
        yield srv


def _records(text: str) -> list[dict]:
    return sorted(json.loads(text), key=lambda d: json.dumps(d, sort_keys=True))


def test_cat_sample_runs_the_shipped_items_and_matches_the_library(server, tmp_path):
    from assay.llm.suites import run_cat

    db = str(tmp_path / "s.db")
    r = CliRunner().invoke(app, ["llm", "cat", "--sample", "-m", server.spec(), "--db", db, "-q"])
    assert r.exit_code == 0, r.output
    assert server.calls == 16  # 8 intrasentence + 8 intersentence items
    with Store(db) as st:
        assert st.latest(kind="llm_cat", dataset="cat_dev.sample.json") is not None
    run = run_cat(sample=True, model=server.spec(), cache=False)
    assert _records(run.metrics.to_json()) == _records(r.stdout)
    assert {d["type"] for d in json.loads(r.stdout)} >= {"LMS", "SS", "ICAT"}


def test_language_sample_covers_four_languages(server):
    from assay.llm.suites import run_language

    r = CliRunner().invoke(app, ["llm", "language", "--sample", "-m", server.spec(),
                                 "--no-save", "-q", "--no-cache"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert server.calls == 16
    recs = json.loads(r.stdout)
    acc = {d["parameters"]["language"]: d["value"] for d in recs if d["type"] == "Accuracy"}
    assert set(acc) == {"all", "en", "es", "fr", "de"} and acc["en"] == 0.25  # only Paris
    run = run_language(sample=True, languages=["en"], model=server.spec(), cache=False)
    en = [m for m in run.metrics if m.type == "Accuracy" and m.parameters["language"] == "en"]
    assert en[0].value == 0.25 and server.calls == 20


def test_data_or_sample_exactly_one(server):
    from assay.errors import InvalidInputError
    from assay.llm.suites import run_cat

    with pytest.raises(InvalidInputError, match="--sample"):
        run_cat(model=server.spec())
    with pytest.raises(InvalidInputError, match="not both"):
        run_cat("dev.json", sample=True, model=server.spec())
    assert server.calls == 0
