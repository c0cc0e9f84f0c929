"""The `assay segmentation` command."""

import json

from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()


def test_segmentation_command(tmp_path):
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text(
        json.dumps(
            {
                "uid": "a",
                "height": 4,
                "width": 4,
                "annotations": [{"label": "road", "box": [0, 0, 4, 2]}],
            }
        )
    )
    p.write_text(json.dumps({"uid": "a", "annotations": [{"label": "road", "box": [0, 0, 4, 4]}]}))
    r = runner.invoke(
        app,
        [
            "segmentation",
            "--groundtruths",
            str(g),
            "--predictions",
            str(p),
            "--metrics",
            "IOU,mIOU",
        ],
    )
    assert r.exit_code == 0, r.output
    recs = json.loads(r.output)
    assert [m["value"] for m in recs] == [0.5, 0.5]
    p.write_text(json.dumps({"uid": "a", "annotations": [{"label": "road", "box": [3, 0, 1, 4]}]}))
    r = runner.invoke(app, ["segmentation", "--groundtruths", str(g), "--predictions", str(p)])
    assert r.exit_code == 2 and "xmax < xmin" in r.output


def test_zero_division_and_precision_recall_records(tmp_path):
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text(
        json.dumps(
            {
                "uid": "a",
                "height": 4,
                "width": 4,
                "annotations": [{"label": "road", "box": [0, 0, 4, 2]}],
            }
        )
    )
    p.write_text(json.dumps({"uid": "a", "annotations": [{"label": "car", "box": [0, 2, 4, 4]}]}))
    args = ["segmentation", "--groundtruths", str(g), "--predictions", str(p)]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    recs = {(m["type"], m["parameters"].get("label_value")): m for m in json.loads(r.output)}
    assert recs[("Precision", "road")]["value"] is None  # nothing predicted as road
    assert recs[("Recall", "road")]["value"] == 0.0
    assert recs[("IOU", "car")]["value"] == 0.0
    r = runner.invoke(app, [*args, "--zero-division", "0"])
    recs = {(m["type"], m["parameters"].get("label_value")): m for m in json.loads(r.output)}
    assert recs[("Precision", "road")]["value"] == 0.0
    assert recs[("F1", "road")]["value"] == 0.0


def test_where_filters_datums_on_metadata(tmp_path):
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    road = {"label": "road", "box": [0, 0, 4, 2]}
    g.write_text(
        "\n".join(
            json.dumps({"uid": u, "height": 4, "width": 4, "metadata": {"site": u},
                        "annotations": [road]})
            for u in "ab"
        )
    )  # fmt: skip
    p.write_text(
        json.dumps({"uid": "a", "annotations": [road]})
        + "\n"
        + json.dumps({"uid": "b", "annotations": [{"label": "road", "box": [0, 0, 4, 4]}]})
    )
    base = ["segmentation", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "IOU"]
    r = runner.invoke(app, base)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)[0]["value"] == 16 / 24
    r = runner.invoke(app, [*base, "--where", 'site == "a"'])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)[0]["value"] == 1.0
    r = runner.invoke(app, [*base, "--where", 'site == "z"'])
    assert r.exit_code == 2 and "--where: the filters keep no datum" in r.output
    r = runner.invoke(app, [*base, "--where", "nope > 1"])
    assert r.exit_code == 2 and "unknown field 'nope'" in r.output
    assert "Traceback" not in r.output
