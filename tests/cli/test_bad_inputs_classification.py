"""Bad input to `assay classification`: exit 2, one message naming the file (or option) and
the place, no traceback, and an existing --out left exactly as it was."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()

GTS = "uid,value\n1,cat\n2,dog\n"
PDS = '{"uid": "1", "value": "cat", "score": 0.9}\n{"uid": "2", "value": "dog", "score": 0.8}\n'


def _write(path, data):
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


# name -> (files to write {name: content}, gts name, pds name, extra args, expected fragments)
CASES = {
    "latin-1 CSV": (
        {"p.csv": "uid,value,score\n1,caf\xe9,0.5\n".encode("latin-1")},
        "gts.csv",
        "p.csv",
        [],
        ["p.csv", "line 2", "not UTF-8"],
    ),
    "UTF-16 JSONL": (
        {"p.jsonl": PDS.encode("utf-16")},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "line 1", "not text"],
    ),
    "latin-1 JSONL": (
        {"p.jsonl": '{"uid": "1", "value": "caf\xe9", "score": 0.5}\n'.encode("latin-1")},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl"],
    ),
    "binary bytes as Parquet": (
        {"p.parquet": bytes(range(256)) * 8},
        "gts.csv",
        "p.parquet",
        [],
        ["p.parquet", "cannot read"],
    ),
    "empty file": ({"g.csv": ""}, "g.csv", "pds.jsonl", [], ["g.csv", "cannot read"]),
    "header only": ({"g.csv": "uid,value\n"}, "g.csv", "pds.jsonl", [], ["g.csv", "no rows"]),
    "missing file": ({}, "nope.csv", "pds.jsonl", [], ["nope.csv", "file not found"]),
    "unknown suffix": ({"g.txt": GTS}, "g.txt", "pds.jsonl", [], ["g.txt", "unknown file type"]),
    "uid is a list": (
        {"p.jsonl": '{"uid": ["1"], "value": "cat", "score": 0.9}\n'},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 1", "field 'uid'", "got list"],
    ),
    "uid is an object": (
        {
            "p.jsonl": '{"uid": "1", "value": "cat", "score": 0.5}\n'
            '{"uid": {"a": 1}, "value": "c"}\n'
        },
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 2", "field 'uid'", "got dict"],
    ),
    "value is a list": (
        {"g.jsonl": '{"uid": "1", "value": ["cat"]}\n'},
        "g.jsonl",
        "pds.jsonl",
        [],
        ["g.jsonl", "row 1", "field 'value'"],
    ),
    "value is null": (
        {"g.jsonl": '{"uid": "1", "value": "cat"}\n{"uid": "2", "value": null}\n'},
        "g.jsonl",
        "pds.jsonl",
        [],
        ["g.jsonl", "row 2", "field 'value'", "missing value"],
    ),
    "score is a list": (
        {"p.jsonl": '{"uid": "1", "value": "cat", "score": [0.9]}\n'},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 1", "field 'score'"],
    ),
    "score is text": (
        {"p.csv": "uid,value,score\n1,cat,0.5\n2,dog,high\n"},
        "gts.csv",
        "p.csv",
        [],
        ["p.csv", "row 2", "field 'score'", "'high'"],
    ),
    "score beyond float range": (
        {"p.jsonl": '{"uid": "1", "value": "cat", "score": 1e999}\n'},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 1"],
    ),
    "score is infinite": (
        {"p.csv": "uid,value,score\n1,cat,inf\n"},
        "gts.csv",
        "p.csv",
        [],
        ["p.csv", "row 1", "field 'score'"],
    ),
    "score above 1": (
        {"p.csv": "uid,value,score\n1,cat,1.5\n"},
        "gts.csv",
        "p.csv",
        [],
        ["p.csv", "row 1", "field 'score'", "1.5"],
    ),
    "JSONL line not an object": (
        {"p.jsonl": '{"uid": "1", "value": "cat", "score": 0.5}\n[1, 2]\n'},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 2", "JSON object"],
    ),
    "truncated JSONL": (
        {"p.jsonl": '{"uid": "1", "value": "cat", "score": 0.5}\n{"uid": "2",\n'},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 2", "malformed JSON"],
    ),
    "JSON file not a list": ({"g.json": '{"uid": "1"}'}, "g.json", "pds.jsonl", [], ["g.json"]),
    "unknown uid": (
        {"p.jsonl": '{"uid": "9", "value": "cat", "score": 0.5}\n'},
        "gts.csv",
        "p.jsonl",
        [],
        ["p.jsonl", "row 1", "field 'uid'", "'9' has no ground truth"],
    ),
    "duplicate ground truth": (
        {"g.csv": "uid,value\n1,cat\n1,dog\n"},
        "g.csv",
        "pds.jsonl",
        [],
        ["g.csv", "row 2", "duplicate ground truth"],
    ),
    "missing column": (
        {"g.csv": "uid,label\n1,cat\n"},
        "g.csv",
        "pds.jsonl",
        [],
        ["g.csv", "'value'"],
    ),
    "directory as input": ({}, "adir.csv", "pds.jsonl", [], ["adir.csv"]),
    "directory without suffix": ({}, "adir", "pds.jsonl", [], ["adir"]),
    "--score-thresholds 2": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--score-thresholds", "2"],
        ["--score-thresholds", "[0, 1]"],
    ),
    "--score-thresholds -0.1": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--score-thresholds", "0.5,-0.1"],
        ["--score-thresholds", "index 1"],
    ),
    "--score-thresholds nan": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--score-thresholds", "nan"],
        ["--score-thresholds"],
    ),
    "--score-thresholds text": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--score-thresholds", "high"],
        ["--score-thresholds"],
    ),
    "--metrics unknown": ({}, "gts.csv", "pds.jsonl", ["--metrics", "AUC"], ["--metrics", "AUC"]),
    "--zero-division nan": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--zero-division", "nan"],
        ["--zero-division"],
    ),
    "--pr-curve-max-examples -1": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--pr-curve-max-examples", "-1"],
        ["--pr-curve-max-examples"],
    ),
    "--where unknown field": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--where", "site == 'a'"],
        ["--where", "unknown field 'site'", "fields: datum_uid, uid"],
    ),
    "--where bad syntax": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--where", "uid =="],
        ["--where", "bad filter expression"],
    ),
    "--where not true/false": ({}, "gts.csv", "pds.jsonl", ["--where", "uid"], ["true or false"]),
    "--where keeps nothing": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--where", "uid == 'none'"],
        ["--where", "keep no datum"],
    ),
    "--where-predictions unknown field": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--where-predictions", "scor > 0.5"],
        ["--where-predictions", "unknown field 'scor'"],
    ),
    "--where-groundtruths score": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--where-groundtruths", "score > 0.5"],
        ["--where-groundtruths", "unknown field 'score' for ground truths"],
    ),
    "--metadata-columns missing": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--metadata-columns", "site"],
        ["gts.csv", "'site'", "not in the table"],
    ),
    "--metadata-columns reserved": (
        {"g.csv": "uid,value,label\n1,cat,x\n"},
        "g.csv",
        "pds.jsonl",
        ["--metadata-columns", "label"],
        ["g.csv", "reserved"],
    ),
    "metadata not an object": (
        {"g.jsonl": '{"uid": "1", "value": "cat", "metadata": "site=a"}\n'},
        "g.jsonl",
        "pds.jsonl",
        [],
        ["g.jsonl", "row 1", "metadata must be an object"],
    ),
    "metadata value a list": (
        {"g.jsonl": '{"uid": "1", "value": "cat", "metadata": {"tags": [1]}}\n'},
        "g.jsonl",
        "pds.jsonl",
        [],
        ["g.jsonl", "row 1", "metadata.tags"],
    ),
    "--examples-limit -1": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--examples-limit", "-1"],
        ["--examples-limit"],
    ),
    "--format unknown": ({}, "gts.csv", "pds.jsonl", ["--format", "xml"], ["--format"]),
    "--save true is not a value": (
        {},
        "gts.csv",
        "pds.jsonl",
        ["--save", "true"],
        ["unexpected extra argument"],
    ),
}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "gts.csv", GTS)
    _write(tmp_path / "pds.jsonl", PDS)
    (tmp_path / "adir.csv").mkdir()
    (tmp_path / "adir").mkdir()
    return tmp_path


def _run(args):
    r = runner.invoke(app, ["classification", *args])
    return r, r.stdout + r.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exit_2_with_a_clear_message(workdir, case):
    files, gts, pds, extra, fragments = CASES[case]
    for name, content in files.items():
        _write(workdir / name, content)
    out = _write(workdir / "out.json", "OLD")
    r, text = _run(["--groundtruths", gts, "--predictions", pds, "--out", "out.json", *extra])
    assert r.exit_code == 2, text
    assert "Traceback" not in text
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception  # no crash
    for frag in fragments:
        assert frag in text, (frag, text)
    assert out.read_text() == "OLD"
    assert sorted(p.name for p in workdir.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize(
    ("out", "fragment"),
    [("adir", "is a directory"), ("gts.csv/x.json", "is a file, not a folder")],
)
def test_unusable_out_is_refused_before_any_work(workdir, out, fragment):
    before = (workdir / "gts.csv").read_text()
    r, text = _run(["--groundtruths", "gts.csv", "--predictions", "pds.jsonl", "--out", out])
    assert r.exit_code == 2 and "--out" in text and fragment in text, text
    assert "Traceback" not in text
    assert (workdir / "gts.csv").read_text() == before


def test_save_to_an_unusable_store_leaves_out_untouched(workdir):
    out = _write(workdir / "out.json", "OLD")
    r, text = _run(
        ["--groundtruths", "gts.csv", "--predictions", "pds.jsonl", "--out", "out.json"]
        + ["--save", "--db", "gts.csv/sub/x.db"]
    )
    assert out.read_text() == "OLD"  # the store is written before --out
    assert r.exit_code == 2, text
    assert "gts.csv" in text and "Traceback" not in text


def test_where_and_examples_paging(workdir):
    _write(workdir / "g.jsonl", '{"uid": "1", "value": "cat", "metadata": {"site": "a"}}\n'
           '{"uid": "2", "value": "dog", "metadata": {"site": "b"}}\n'
           '{"uid": "3", "value": "dog", "metadata": {"site": "b"}}\n')  # fmt: skip
    _write(workdir / "p.jsonl", PDS + '{"uid": "3", "value": "cat", "score": 0.7}\n')
    args = ["--groundtruths", "g.jsonl", "--predictions", "p.jsonl", "--metrics", "Examples"]
    r, text = _run([*args, "--where", "site == 'b'", "--examples-offset", "1"])
    assert r.exit_code == 0, text
    assert [m["parameters"]["datum_uid"] for m in json.loads(r.stdout)] == ["3"]
    r, text = _run([*args, "--where-predictions", "score > 0.85", "--examples-limit", "5"])
    assert [m["parameters"]["datum_uid"] for m in json.loads(r.stdout)] == ["1"]
    _write(workdir / "g.csv", "uid,value,site\n1,cat,a\n2,dog,b\n")
    files = ["--groundtruths", "g.csv", "--predictions", "pds.jsonl", "--metrics", "Examples"]
    r, text = _run([*files, "--metadata-columns", "site", "--where", 'site == "a"'])
    assert r.exit_code == 0, text
    assert [m["parameters"]["datum_uid"] for m in json.loads(r.stdout)] == ["1"]


def test_the_good_input_works(workdir):
    r, text = _run(["--groundtruths", "gts.csv", "--predictions", "pds.jsonl", "--out", "o.json"])
    assert r.exit_code == 0, text
    assert {m["type"] for m in json.loads((workdir / "o.json").read_text())} >= {"ROCAUC"}


def test_where_on_wide_input_with_metadata_columns(workdir):
    _write(workdir / "w.csv", "id,y,p,site\na,1,0.9,x\nb,0,0.8,y\nc,1,0.7,y\n")
    args = ["--data", "w.csv", "--y-true", "y", "--y-score", "p", "--uid-column", "id"]
    r, text = _run([*args, "--metadata-columns", "site", "--where", "site == 'y'",
                    "--metrics", "Examples", "--score-thresholds", "0.5"])  # fmt: skip
    assert r.exit_code == 0, text
    assert [m["parameters"]["datum_uid"] for m in json.loads(r.stdout)] == ["b", "c"]
    r, text = _run([*args, "--metadata-columns", "zone", "--where", "zone == 1"])
    assert r.exit_code == 2 and "w.csv" in text and "'zone'" in text, text
