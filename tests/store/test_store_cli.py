"""``assay runs ...`` and the ``--save`` building block (assay.cli.support.save_metrics)."""

from __future__ import annotations

import csv
import io
import json

import typer
from typer.testing import CliRunner

from assay.cli.main import app
from assay.cli.support import db_option, emit, guarded, save_metrics, save_option
from assay.results import Metric, MetricSet
from assay.store import Store

runner = CliRunner()


def _fill(url: str) -> dict[str, int]:
    with Store(url) as s:
        return {
            "c1": s.save(
                [Metric("Accuracy", 0.5)], kind="classification", dataset="iris", model="tree"
            ),
            "c2": s.save(
                [Metric("Accuracy", 0.75)], kind="classification", dataset="iris", model="forest"
            ),
            "f1": s.save(
                [Metric("SPD", -0.1, {"group": "a"})],
                kind="fairness",
                dataset="adult",
                model="tree",
            ),
        }


def test_runs_list_filters(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    ids = _fill(url)
    res = runner.invoke(
        app, ["runs", "list", "--kind", "classification", "--dataset", "iris", "--db", url]
    )
    assert res.exit_code == 0, res.output
    assert [e["id"] for e in json.loads(res.stdout)] == [ids["c2"], ids["c1"]]
    res = runner.invoke(
        app, ["runs", "list", "--kind", "fairness", "--db", url, "--format", "table"]
    )
    assert res.exit_code == 0 and "adult" in res.stdout and "iris" not in res.stdout


def test_runs_show_latest_export(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    ids = _fill(url)
    res = runner.invoke(app, ["runs", "show", str(ids["f1"]), "--db", url])
    assert res.exit_code == 0
    shown = json.loads(res.stdout)
    assert shown["metrics"] == [{"type": "SPD", "value": -0.1, "parameters": {"group": "a"}}]

    res = runner.invoke(app, ["runs", "latest", "--kind", "classification", "--db", url])
    assert res.exit_code == 0
    assert json.loads(res.stdout)["iris"]["id"] == ids["c2"]
    res = runner.invoke(
        app, ["runs", "latest", "--kind", "classification", "--model", "tree", "--db", url]
    )
    assert json.loads(res.stdout)["iris"]["id"] == ids["c1"]

    out = tmp_path / "export.csv"
    res = runner.invoke(
        app,
        [
            "runs",
            "export",
            "--kind",
            "classification",
            "--format",
            "csv",
            "--out",
            str(out),
            "--db",
            url,
        ],
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["evaluation_id"], r["value"]) for r in rows] == [
        (str(ids["c1"]), "0.5"),
        (str(ids["c2"]), "0.75"),
    ]

    res = runner.invoke(app, ["runs", "export", str(ids["f1"]), "--db", url])
    assert json.loads(res.stdout)[0]["metrics"][0]["value"] == -0.1


def test_runs_errors_exit_2(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    _fill(url)
    res = runner.invoke(app, ["runs", "show", "999", "--db", url])
    assert res.exit_code == 2 and "no such evaluation" in res.stderr
    res = runner.invoke(
        app,
        [
            "runs",
            "latest",
            "--kind",
            "fairness",
            "-d",
            "adult",
            "-d",
            "pisa",
            "--require",
            "--db",
            url,
        ],
    )
    assert res.exit_code == 2 and "pisa" in res.stderr
    res = runner.invoke(app, ["runs", "list", "--db", "postgresql://x@127.0.0.1:1/none"])
    assert res.exit_code == 2 and "cannot open the evaluation store" in res.stderr


# A tiny command wired the way the lead wires --save into classification/fairness/...
tiny = typer.Typer()


@tiny.command()
@guarded
def accuracy(
    correct: int,
    total: int,
    dataset: str = typer.Option("toy"),
    save: bool = save_option(),
    db: str = db_option(),
) -> None:
    metrics = MetricSet([Metric("Accuracy", correct / total)])
    emit(metrics)
    save_metrics(
        metrics,
        kind="classification",
        dataset=dataset,
        model="tiny",
        parameters={"total": total},
        save=save,
        url=db,
    )


def test_save_flag_persists_the_printed_metrics(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    res = runner.invoke(tiny, ["3", "4", "--save", "--db", url])
    assert res.exit_code == 0, res.output
    printed = MetricSet.from_json(res.stdout)
    assert "saved evaluation" in res.stderr
    with Store(url) as s:
        (ev,) = s.list()
        full = s.get(ev.id)
    assert full.metrics == printed
    assert (full.kind, full.dataset, full.model, full.parameters, full.status) == (
        "classification",
        "toy",
        "tiny",
        {"total": 4},
        "finished",
    )


def test_without_save_nothing_is_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    res = runner.invoke(tiny, ["1", "2"])
    assert res.exit_code == 0
    assert not (tmp_path / "home").exists()


def test_save_uses_the_environment_store(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "env.db"))
    res = runner.invoke(tiny, ["1", "2", "--save", "--dataset", "d"])
    assert res.exit_code == 0, res.output
    with Store(str(tmp_path / "env.db")) as s:
        assert s.latest(kind="classification", dataset="d").metrics.get("Accuracy").value == 0.5


def test_save_metrics_api_returns_the_id(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert save_metrics(MetricSet([Metric("A", 1)]), kind="k", save=False, url=url) is None
    eid = save_metrics(MetricSet([Metric("A", 1)]), kind="k", url=url)
    with Store(url) as s:
        assert s.get(eid).metrics.get("A").value == 1


def test_runs_tables_show_user_values_verbatim(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store(url) as s:
        s.save(
            [Metric("Accuracy", 0.5, {"group": "[bold]high"})],
            kind="k",
            dataset="[/x]",
            model="[red]m[/red]",
        )
    res = runner.invoke(app, ["runs", "list", "--db", url, "-f", "table"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "[/x]" in res.output and "[red]m[/red]" in res.output
    res = runner.invoke(
        app, ["runs", "show", "1", "--db", url, "-f", "table"], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 0, res.output
    assert "group=[bold]high" in res.output
