"""A failed LLM run is stored with the time its work took, not ``took 0.0s``: the evaluation's
``created`` is when the work began, as for a finished run."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store
from assay.testing.llm import FakeChatServer

CAT_DEV = Path(__file__).resolve().parents[1] / "suites" / "data" / "cat_dev.json"


def test_a_failed_run_keeps_its_real_duration(tmp_path):
    latency = 0.15

    class Plan(dict):  # the first prompt fails for good, the rest answer after `latency`
        def get(self, prompt, default=None):
            return ["400"] if prompt == self.setdefault("first", prompt) else default

    with FakeChatServer(latency=latency, responder=lambda m: "2") as srv:
        srv.plan = Plan()
        db = tmp_path / "store.db"
        argv = ["llm", "cat", "--data", str(CAT_DEV), "--model", srv.spec(), "--quiet",
                "--db", str(db), "--no-cache", "--retries", "0", "-c", "1"]  # fmt: skip
        res = CliRunner().invoke(app, argv)
        answered = srv.answered
    assert res.exit_code == 1, res.output
    assert answered >= 4
    with Store(str(db)) as store:
        (ev,) = store.list()
    assert ev.status == "failed"
    took = (ev.finished - ev.created).total_seconds()
    assert took >= 0.8 * latency * answered, (took, answered)
    listing = CliRunner().invoke(
        app, ["runs", "list", "--db", str(db), "--format", "table"], env={"COLUMNS": "200"}
    )
    assert "took 0.0s" not in listing.output and "took " in listing.output, listing.output
