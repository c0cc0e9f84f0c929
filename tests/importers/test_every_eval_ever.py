"""Every Eval Ever out and in: ``assay runs export ID --format every-eval-ever`` writes
files that the every-eval-ever package's own validator accepts (run in its own Python
>= 3.12 environment, ``ASSAY_EEE_PYTHON``: ``make .venv-eee/.installed``), and importing
them back gives the same records."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.results import Metric
from assay.store import Store

runner = CliRunner()
EEE_PY = os.environ.get("ASSAY_EEE_PYTHON")
needs_eee = pytest.mark.skipif(not EEE_PY, reason="set ASSAY_EEE_PYTHON (every-eval-ever)")


def _invoke(*args: object):  # type: ignore[no-untyped-def]
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _export(db: str, eid: int, out: Path) -> list[Path]:
    return [Path(p) for p in _invoke("runs", "export", eid, "-f", "every-eval-ever", "-o", out,
                                     "--db", db)]  # fmt: skip


def _validate(root: Path, files: list[Path]) -> list[dict]:
    """The package's validator, path checks included (paths relative to the data root)."""
    rel = [str(f.relative_to(root)) for f in files]
    proc = subprocess.run(
        [str(EEE_PY), "-m", "every_eval_ever.validate", *rel, "--format", "json"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_round_trip_gives_the_same_records_and_units(logs, db, tmp_path):
    [a] = _invoke("import", logs / "a.eval", "--db", db)
    files = _export(db, a["id"], tmp_path / "eee")
    assert [f.suffix for f in files] == [".json", ".jsonl"]
    assert files[0].parent.relative_to(tmp_path / "eee").parts[:2] == ("data", "doubling")
    [back] = _invoke("import", files[0], "--db", db)
    assert back["status"] == "imported" and back["id"] != a["id"]
    with Store(db) as st:
        one, two = st.get(a["id"], items=True), st.get(back["id"], items=True)
    assert two.metrics.to_list() == one.metrics.to_list()
    assert (two.kind, two.dataset, two.model) == (one.kind, one.dataset, one.model)
    assert two.parameters["import_format"] == "every_eval_ever"
    assert two.parameters["task_id"] == one.parameters["task_id"]

    def units(ev):  # type: ignore[no-untyped-def]
        return {(i.item_id, i.params["epoch"]): (i.ok, i.parsed, i.raw_answer) for i in ev.items}

    assert units(two) == units(one) and len(units(one)) == 27
    again = _invoke("import", files[0], "--db", db)
    assert again[0]["status"] == "already_imported"


@needs_eee
def test_the_packages_validator_accepts_the_export(logs, db, tmp_path):
    [a] = _invoke("import", logs / "a.eval", "--db", db)
    files = _export(db, a["id"], tmp_path / "eee")
    reports = _validate(tmp_path / "eee", files)
    assert [(r["valid"], r["errors"], r["warnings"]) for r in reports] == [(True, [], [])] * 2
    assert reports[1]["line_count"] == 27 * 2  # one instance record per sample and scorer


@needs_eee
def test_a_run_without_items_exports_an_aggregate_with_its_intervals(db, tmp_path):
    with Store(db) as st:
        eid = st.save(
            [Metric("Accuracy", 0.8, {"n": 50, "ci_low": 0.7, "ci_high": 0.9,
                                      "confidence_level": 0.95, "ci_method": "wilson"}),
             Metric("Counts", {"tp": 3}, {}),
             Metric("Precision", None, {"undefined": "requires TP + FP > 0"})],
            kind="classification", dataset="iris.csv", model="http://me:pw@host/v1#tree",
        )  # fmt: skip
    res = runner.invoke(app, ["runs", "export", str(eid), "-f", "every-eval-ever", "-o",
                              str(tmp_path / "eee"), "--db", db])  # fmt: skip
    assert res.exit_code == 0 and "2 records without a number" in res.stderr
    [agg] = [Path(p) for p in json.loads(res.stdout)]
    assert "pw" not in agg.read_text()  # the store masks credentials, the export keeps that
    [report] = _validate(tmp_path / "eee", [agg])
    assert report["valid"] and report["warnings"] == []
    [result] = json.loads(agg.read_text())["evaluation_results"]
    ci = result["score_details"]["uncertainty"]["confidence_interval"]
    assert (ci["lower"], ci["upper"], ci["confidence_level"]) == (0.7, 0.9, 0.95)


def test_files_of_another_tool_import(tmp_path, db):
    agg = {
        "schema_version": "0.3.0",
        "evaluation_id": "gsm8k/org/model/1",
        "retrieved_timestamp": "1",
        "source_metadata": {"source_type": "evaluation_run", "source_organization_name": "x",
                            "evaluator_relationship": "third_party"},
        "eval_library": {"name": "lm_eval", "version": "0.4.13"},
        "model_info": {"name": "model", "id": "org/model", "additional_details": {
            "deployment_type": "unknown", "model_availability": "unknown"}},
        "evaluation_results": [{
            "evaluation_result_id": "gsm8k-em",
            "evaluation_name": "gsm8k",
            "source_data": {"dataset_name": "gsm8k", "source_type": "hf_dataset"},
            "metric_config": {"metric_id": "exact_match", "metric_name": "Exact match",
                              "lower_is_better": False, "metric_parameters": {"k": 1}},
            "score_details": {"score": 0.5, "uncertainty": {
                "standard_error": {"value": 0.2}, "num_samples": 2}},
        }],
    }  # fmt: skip
    d = tmp_path / "e"
    d.mkdir()
    (d / "u.json").write_text(json.dumps(agg))
    lines = [
        {"schema_version": "0.3.0", "evaluation_id": "x", "model_id": "org/model",
         "evaluation_name": "gsm8k", "sample_id": s, "interaction_type": "single_turn",
         "input": {"raw": f"q{s}", "reference": ["4"]}, "output": {"raw": [ans]},
         "answer_attribution": [], "evaluation": {"score": sc, "is_correct": sc == 1.0}}
        for s, ans, sc in (("1", "4", 1.0), ("2", "5", 0.0))
    ]  # fmt: skip
    (d / "u_samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    [entry] = _invoke("import", d, "--db", db)
    assert (entry["kind"], entry["dataset"], entry["model"]) == (
        "every_eval_ever", "gsm8k", "org/model",
    )  # fmt: skip
    with Store(db) as st:
        ev = st.get(entry["id"], items=True)
    [m] = ev.metrics
    assert (m.type, m.value) == ("Exact match", 0.5)
    assert m.parameters == {"evaluation_name": "gsm8k", "k": 1, "stderr": 0.2, "n": 2}
    assert [(i.item_id, i.parsed, i.raw_answer) for i in ev.items] == [
        ("1", {"gsm8k": 1.0}, "4"), ("2", {"gsm8k": 0.0}, "5"),
    ]  # fmt: skip


def test_export_needs_a_directory(db, tmp_path):
    with Store(db) as st:
        eid = st.save([Metric("Mean", 0.5)], kind="stats")
    res = runner.invoke(app, ["runs", "export", str(eid), "-f", "every-eval-ever", "--db", db])
    assert res.exit_code == 2 and "--out" in res.stderr
    f = tmp_path / "file.txt"
    f.write_text("x")
    res = runner.invoke(
        app, ["runs", "export", str(eid), "-f", "every-eval-ever", "-o", str(f), "--db", db]
    )
    assert res.exit_code == 2 and "directory" in res.stderr
