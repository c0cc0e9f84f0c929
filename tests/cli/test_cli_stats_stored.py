"""`assay stats --save`: the stored run's parameters are the flags as typed (the --metric and
--reducer texts, --to-float's fields, the interval options, --human-labels), in one order."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store

runner = CliRunner()


def _stored(tmp: Path, *args: str) -> list[tuple[str, object]]:
    scores = tmp / "scores.jsonl"
    rows = [{"sample_id": f"s{i}", "value": i % 3 / 2, "sample_metadata": {"doc": i % 4}}
            for i in range(24)]  # fmt: skip
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp / "runs.db"
    res = runner.invoke(app, ["stats", "--scores", str(scores), *args, "--save", "--db", str(db)])
    assert res.exit_code == 0, res.output
    with Store(str(db)) as store:
        run = store.get(store.list()[0].id)
    assert run.kind == "stats" and run.dataset == str(scores)
    return list(run.parameters.items())


def test_defaults_store_empty_texts_and_no_interval(tmp_path: Path) -> None:
    assert _stored(tmp_path) == [("metrics", []), ("reducers", []), ("to_float", None)]


def test_texts_mapping_and_intervals_are_stored_as_typed(tmp_path: Path) -> None:
    got = _stored(
        tmp_path,
        *["--metric", "mean", "--metric", "stderr(cluster='doc')", "--reducer", "mode"],
        *["--to-float", '{"P": 0.5}', "--ci", "0.9", "--ci-method", "t"],
    )
    assert got == [
        ("metrics", ["mean", "stderr(cluster='doc')"]),
        ("reducers", ["mode"]),
        (
            "to_float",
            {
                "correct": "C",
                "incorrect": "I",
                "partial": "P",
                "noanswer": "N",
                "values": {"P": 0.5},
            },
        ),  # fmt: skip
        ("ci", 0.9),
        ("ci_method", "t"),
        ("num_bootstrap", 1000),
        ("seed", 0),
    ]


def test_cluster_and_human_labels_are_stored_last(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"s{i}", "value": 0.5}) + "\n" for i in range(8)))
    got = _stored(tmp_path, "--ci", "0.95", "--cluster", "doc", "--human-labels", str(labels))
    assert got[-3:] == [("seed", 0), ("cluster", "doc"), ("human_labels", str(labels))]
