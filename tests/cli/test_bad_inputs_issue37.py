"""Bad inputs that were accepted, vague or a traceback (issue 37): each is now exit 2 with one
``error:`` line naming the option or the file and what is wrong, no traceback, ``--out``
untouched. A binary file (an Inspect ``.eval`` log is a zip) is refused by every reader."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from typer.testing import CliRunner

from assay.cli.main import app


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", json.dumps({"version": 2, "status": "success"}))
        z.writestr("samples/1_epoch_1.json", json.dumps({"id": 1, "scores": {}}))
    return buf.getvalue()


TEXT = {"t.jsonl": json.dumps({"uid": "1", "prediction": "a b c", "groundtruth": "a b c"}) + "\n"}
WIDE = {"w.csv": "y,cat,dog\ncat,0.6,0.4\ndog,0.3,0.7\n"}
BLEU = ["text", "--data", "{d}/t.jsonl", "--metrics", "bleu", "--out", "{out}"]
SCORES = ["classification", "--data", "{d}/w.csv", "--y-true", "y", "--out", "{out}"]

# case -> (argv, files, needles)
CASES = {
    "bleu weight negative": ([*BLEU, "--bleu-weights=-1,2"], TEXT,
                             ["--bleu-weights", "weight 1 is -1", ">= 0"]),
    "bleu weight nan": ([*BLEU, "--bleu-weights=0.5,nan"], TEXT,
                        ["--bleu-weights", "weight 2 is nan", "finite"]),
    "bleu weights empty": ([*BLEU, "--bleu-weights="], TEXT,
                           ["--bleu-weights", "expected comma-separated n-gram weights", "''"]),
    "bleu weights all zero": ([*BLEU, "--bleu-weights=0,0"], TEXT,
                              ["--bleu-weights", "every weight is 0"]),
    "score columns repeated": ([*SCORES, "--y-score-columns", "cat,cat"], WIDE,
                               ["--y-score-columns", "'cat' is named twice"]),
    "score columns empty": ([*SCORES, "--y-score-columns="], WIDE,
                            ["--y-score-columns", "one per label", "''"]),
    "stats binary .eval": (["stats", "--scores", "{d}/log.eval", "--out", "{out}"],
                           {"log.eval": _zip()}, ["log.eval", "not an Inspect log"]),
    "stats binary .jsonl": (["stats", "--scores", "{d}/log.jsonl", "--out", "{out}"],
                            {"log.jsonl": _zip()}, ["log.jsonl", "not text"]),
    "pairwise judge zip as .xlsx": (
        ["pairwise", "judge", "--data", "{d}/t.xlsx", "--models", "a", "--reference-model", "r",
         "--judge", "embedded", "--out-dir", "{d}/runs"],
        {"t.xlsx": _zip()}, ["t.xlsx", "not an Excel workbook"]),
    "scoring zip as .xlsx": (
        ["scoring", "--data", "{d}/s.xlsx", "--human", "h", "--system", "s",
         "--out-dir", "{d}/tables"],
        {"s.xlsx": _zip()}, ["s.xlsx", "not an Excel workbook"]),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_refused_in_one_line(tmp_path, case):
    argv, files, needles = CASES[case]
    d = tmp_path / "in"
    d.mkdir()
    for name, content in files.items():
        p = d / name
        p.write_bytes(content) if isinstance(content, bytes) else p.write_text(content)
    out = tmp_path / "out.json"
    out.write_text("previous\n")
    args = [a.format(d=d, out=out) for a in argv]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Traceback" not in res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in d.iterdir()) == sorted(files)  # nothing written
