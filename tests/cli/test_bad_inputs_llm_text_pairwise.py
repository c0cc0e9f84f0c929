"""Bad input to ``assay text`` and ``assay pairwise judge|score``: refused before any call.

Each case runs the command against a counting loopback judge and checks (tests/cli/conftest.py):
exit 2, one ``error:`` line naming the file (or option) and the place, no traceback, no call
paid, nothing written.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from assay.testing.pairwise import make_table

ROW = {"uid": "1", "query": "q?", "prediction": "a b", "groundtruth": "a b", "context": ["c"]}


def _jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


GOOD = _jsonl(ROW)
TEXT = ["text", "--data", "{d}/t.jsonl", "--metrics", "rouge,answer_relevance", "-m", "{m}",
        "--out", "{out}", "-q"]  # fmt: skip

# (case id, argv, files, needles)
TEXT_CASES = [
    ("latin-1", TEXT, {"t.jsonl": GOOD.replace("q?", "caf\xe9").encode("latin-1")}, ["t.jsonl"]),
    ("utf-16", TEXT, {"t.jsonl": GOOD.encode("utf-16")}, ["t.jsonl"]),
    ("not-json", TEXT, {"t.jsonl": GOOD + "{nope\n"}, ["t.jsonl", "row 2"]),
    (
        "binary-parquet",
        [*TEXT[:2], "{d}/t.parquet", *TEXT[3:]],
        {"t.parquet": bytes(range(256))},
        ["t.parquet"],
    ),  # fmt: skip
    ("missing-file", [*TEXT[:2], "{d}/nope.jsonl", *TEXT[3:]], {}, ["nope.jsonl", "not found"]),
    ("unknown-suffix", [*TEXT[:2], "{d}/t.txt", *TEXT[3:]], {"t.txt": GOOD}, ["t.txt"]),
    ("directory", [*TEXT[:2], "{d}", *TEXT[3:]], {}, ["{d}", "directory"]),
    (
        "prediction-int",
        TEXT,
        {"t.jsonl": _jsonl({**ROW, "prediction": 5})},
        ["t.jsonl", "row 1", "'prediction'", "expected a string"],
    ),  # fmt: skip
    ("query-list", TEXT, {"t.jsonl": _jsonl({**ROW, "query": ["q"]})}, ["t.jsonl", "'query'"]),
    (
        "groundtruth-number",
        TEXT,
        {"t.jsonl": _jsonl({**ROW, "groundtruth": 3})},
        ["t.jsonl", "'groundtruth'", "list of strings"],
    ),  # fmt: skip
    (
        "context-object",
        TEXT,
        {"t.jsonl": _jsonl({**ROW, "context": {"a": 1}})},
        ["t.jsonl", "'context'"],
    ),  # fmt: skip
    ("duplicate-uid", TEXT, {"t.jsonl": _jsonl(ROW, ROW)}, ["t.jsonl", "duplicate uid"]),
    (
        "missing-query-column",
        TEXT,
        {"t.jsonl": _jsonl({"uid": "1", "prediction": "p", "groundtruth": "g"})},
        ["answer_relevance", "'query'"],
    ),  # fmt: skip
    (
        "missing-groundtruth",
        [*TEXT[:4], "rouge", *TEXT[5:]],
        {"t.jsonl": _jsonl(ROW, {**ROW, "uid": "2", "groundtruth": None})},
        ["t.jsonl", "row 2", "'groundtruth'"],
    ),  # fmt: skip
    ("unknown-metric", [*TEXT[:4], "rouge,wisdom", *TEXT[5:]], {"t.jsonl": GOOD}, ["wisdom"]),
    ("format", [*TEXT, "--format", "xml"], {"t.jsonl": GOOD}, ["--format"]),
    ("concurrency", [*TEXT, "--concurrency", "0"], {"t.jsonl": GOOD}, ["--concurrency"]),
    ("timeout", [*TEXT, "--timeout", "0"], {"t.jsonl": GOOD}, ["--timeout"]),
    ("max-tokens", [*TEXT, "--max-tokens", "0"], {"t.jsonl": GOOD}, ["--max-tokens"]),
    ("judge-retries", [*TEXT, "--judge-retries", "-1"], {"t.jsonl": GOOD}, ["--judge-retries"]),
    ("max-errors", [*TEXT, "--max-errors", "-1"], {"t.jsonl": GOOD}, ["--max-errors"]),
    (
        "cache-and-no-cache",
        [*TEXT, "--cache", "{d}/c.sqlite", "--no-cache"],
        {"t.jsonl": GOOD},
        ["--cache"],
    ),  # fmt: skip
    ("cache-directory", [*TEXT, "--cache", "{d}"], {"t.jsonl": GOOD}, ["--cache"]),
    ("out-directory", [*TEXT[:-3], "--out", "{d}", "-q"], {"t.jsonl": GOOD}, ["--out"]),
    (
        "smoothing",
        [*TEXT[:4], "bleu,answer_relevance", *TEXT[5:], "--bleu-smoothing", "m9"],
        {"t.jsonl": GOOD},
        ["smoothing", "m9"],
    ),
    ("rouge-measure", [*TEXT, "--rouge-measures", "loud"], {"t.jsonl": GOOD}, ["loud"]),
    ("rouge-type", [*TEXT, "--rouge-types", "rougeX"], {"t.jsonl": GOOD}, ["rougeX"]),
    ("ci-level", [*TEXT, "--ci", "1.5"], {"t.jsonl": GOOD}, ["--ci", "1.5"]),
    ("ci-method", [*TEXT, "--ci", "0.9", "--ci-method", "exact"], {"t.jsonl": GOOD}, ["exact"]),
    ("by-unknown", [*TEXT, "--by", "topic"], {"t.jsonl": GOOD}, ["--by", "'topic'", "t.jsonl"]),
    (
        "by-unknown-rouge-only",
        [*TEXT[:4], "rouge", *TEXT[5:], "--by", "topic"],
        {"t.jsonl": GOOD},
        ["--by", "'topic'"],
    ),  # fmt: skip
    ("bad-spec", [*TEXT[:6], "ftp://x#m", *TEXT[7:]], {"t.jsonl": GOOD}, ["model spec"]),
    (
        "spec-secret",
        [*TEXT[:6], "http://u:s3cret@h:1/v1", *TEXT[7:]],
        {"t.jsonl": GOOD},
        ["u:***@"],
    ),  # fmt: skip
]


def _csv(df: pd.DataFrame) -> str:
    return df.to_csv(index=False)


def _table(**change) -> str:
    t = make_table(["quality", "first"], {"m1": [3, 3], "ref": [1, 1]})
    for k, v in change.items():
        t[k] = v
    return _csv(t)


def _xlsx(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_excel(buf, index=False)
    return buf.getvalue()


JUDGE = [
    "pairwise",
    "judge",
    "--data",
    "{d}/t.csv",
    "--models",
    "m1",
    "--reference-model",
    "ref",
    "--judge",
    "{m}",
    "--out-dir",
    "{runs}",
    "--out",
    "{out}",
    "--quiet",
    "--num-bootstrap",
    "10",
]
TABLE = _table()
_BASE = make_table(["quality", "first"], {"m1": [3, 3], "ref": [1, 1]})

JUDGE_CASES = [
    (
        "missing-column",
        JUDGE,
        {"t.csv": _csv(_BASE.drop(columns=["task"]))},
        ["t.csv", "'task'", "missing column"],
    ),  # fmt: skip
    ("stranger-column", JUDGE, {"t.csv": _table(**{"answer-x": "y"})}, ["t.csv", "'answer-x'"]),
    (
        "model-without-answers",
        [*JUDGE[:5], "m1,m9", *JUDGE[6:]],
        {"t.csv": TABLE},
        ["'answer-m9'"],
    ),  # fmt: skip
    (
        "duplicate-index",
        JUDGE,
        {"t.csv": _table(index=["a", "a"])},
        ["t.csv", "row 2", "'index'", "repeats"],
    ),  # fmt: skip
    ("empty-index", JUDGE, {"t.csv": _table(index=["a", ""])}, ["t.csv", "row 2", "'index'"]),
    (
        "fill-missing-file",
        [*JUDGE, "--fill-contents", "question"],
        {"t.csv": _table(question=["nope.md", "nope.md"])},
        ["t.csv", "row 1", "nope.md"],
    ),  # fmt: skip
    (
        "fill-unknown-column",
        [*JUDGE, "--fill-contents", "prose"],
        {"t.csv": TABLE},
        ["t.csv", "'prose'"],
    ),  # fmt: skip
    (
        "no-comparison",
        JUDGE,
        {"t.csv": _table(**{"answer-m1": ["", ""]})},
        ["t.csv", "no question"],
    ),
    (
        "latin-1",
        JUDGE,
        {"t.csv": TABLE.replace("Question", "Qu\xe9stion").encode("latin-1")},
        ["t.csv"],
    ),  # fmt: skip
    (
        "binary-xlsx",
        [*JUDGE[:3], "{d}/t.xlsx", *JUDGE[4:]],
        {"t.xlsx": bytes(range(256))},
        ["t.xlsx", "cannot read"],
    ),  # fmt: skip
    (
        "xlsx-duplicate-index",
        [*JUDGE[:3], "{d}/t.xlsx", *JUDGE[4:]],
        {"t.xlsx": _xlsx(_BASE.assign(index=["i", "i"]))},
        ["t.xlsx", "row 2", "repeats"],
    ),  # fmt: skip
    ("unknown-suffix", [*JUDGE[:3], "{d}/t.txt", *JUDGE[4:]], {"t.txt": TABLE}, ["t.txt"]),
    ("missing-file", [*JUDGE[:3], "{d}/nope.csv", *JUDGE[4:]], {}, ["nope.csv"]),
    (
        "jsonl-not-json",
        [*JUDGE[:3], "{d}/t.jsonl", *JUDGE[4:]],
        {"t.jsonl": "{nope\n"},
        ["t.jsonl"],
    ),  # fmt: skip
    ("no-models", [*JUDGE[:5], ",", *JUDGE[6:]], {"t.csv": TABLE}, ["--models"]),
    ("nopt", [*JUDGE, "--nopt", "5"], {"t.csv": TABLE}, ["--nopt"]),
    ("mode", [*JUDGE, "--mode", "triple"], {"t.csv": TABLE}, ["--mode", "triple"]),
    ("n-boot", [*JUDGE, "--num-bootstrap", "0"], {"t.csv": TABLE}, ["--num-bootstrap"]),
    # removed in 0.2.0: click's "No such option" names the flag to use
    ("confidence", [*JUDGE, "--confidence", "0.9"], {"t.csv": TABLE}, ["--confidence", "use --ci"]),
    ("ci", [*JUDGE, "--ci", "1.5"], {"t.csv": TABLE}, ["--ci", "(0, 1)"]),
    ("ci-method", [*JUDGE, "--ci-method", "magic"], {"t.csv": TABLE}, ["--ci-method", "magic"]),
    ("bootstrap-seed", [*JUDGE, "--bootstrap-seed", "-1"], {"t.csv": TABLE}, ["--bootstrap-seed"]),
    ("by-unknown", [*JUDGE, "--by", "topic"], {"t.csv": TABLE}, ["t.csv", "'topic'", "--by"]),
    ("max-tokens", [*JUDGE, "--max-tokens", "0"], {"t.csv": TABLE}, ["--max-tokens"]),
    ("rpm", [*JUDGE, "--rpm", "0"], {"t.csv": TABLE}, ["--rpm"]),
    (
        "out-dir-is-a-file",
        [*JUDGE[:11], "{d}/t.csv", *JUDGE[12:]],
        {"t.csv": TABLE},
        ["--out-dir"],
    ),  # fmt: skip
    ("out-directory", [*JUDGE[:13], "{d}", *JUDGE[14:]], {"t.csv": TABLE}, ["--out"]),
    ("judge-spec", [*JUDGE[:9], "gopher://x#m", *JUDGE[10:]], {"t.csv": TABLE}, ["model spec"]),
]

SCORE = ["pairwise", "score", "--records", "{d}/c.jsonl", "--reference-model", "ref",
         "--out-dir", "{runs}", "--out", "{out}"]  # fmt: skip
REC = {"index": "q1", "model_a": "m1", "model_b": "ref", "task": "t-general", "status": "ok",
       "reply": "Choice: A", "judge": "j", "answer1": "x", "answer2": "y"}  # fmt: skip
TSV_HEAD = (
    "cmp_index\tquestion\tanswer1\tanswer2\tA\tB\treference_answer\tevaluating_guidance\ttask"
)

SCORE_CASES = [
    (
        "neither-format",
        [*SCORE[:3], "{d}/s.tsv", *SCORE[4:]],
        {"s.tsv": "id\tscore\n1\t0.5\n"},
        ["s.tsv", "not a pairwise record table"],
    ),  # fmt: skip
    (
        "jsonl-missing-field",
        SCORE,
        {"c.jsonl": _jsonl({k: v for k, v in REC.items() if k != "reply"})},
        ["c.jsonl", "row 1", "'reply'"],
    ),  # fmt: skip
    ("jsonl-not-json", SCORE, {"c.jsonl": _jsonl(REC) + "{nope\n"}, ["c.jsonl", "row 2"]),
    ("jsonl-empty", SCORE, {"c.jsonl": ""}, ["c.jsonl"]),
    (
        "jsonl-latin-1",
        SCORE,
        {"c.jsonl": _jsonl({**REC, "answer1": "caf\xe9"}).encode("latin-1")},
        ["c.jsonl"],
    ),  # fmt: skip
    (
        "reference-absent",
        [*SCORE[:5], "nobody", *SCORE[6:]],
        {"c.jsonl": _jsonl(REC)},
        ["c.jsonl", "'nobody'"],
    ),  # fmt: skip
    (
        "tsv-bad-cmp-index",
        [*SCORE[:3], "{d}/r.tsv", *SCORE[4:]],
        {"r.tsv": f"{TSV_HEAD}\tj\nq1\tQ\tx\ty\tm1\tref\t\tg\tt-general\tChoice: A\n"},
        ["r.tsv", "row 1", "'cmp_index'"],
    ),  # fmt: skip
    (
        "tsv-two-judges",
        [*SCORE[:3], "{d}/r.tsv", *SCORE[4:]],
        {"r.tsv": f"{TSV_HEAD}\tj\tk\nq1;m1;ref\tQ\tx\ty\tm1\tref\t\tg\tt\tChoice: A\tB\n"},
        ["r.tsv", "judge column"],
    ),  # fmt: skip
    ("missing-file", [*SCORE[:3], "{d}/nope.jsonl", *SCORE[4:]], {}, ["nope.jsonl"]),
    ("nopt", [*SCORE, "--nopt", "1"], {"c.jsonl": _jsonl(REC)}, ["--nopt"]),
    ("n-boot", [*SCORE, "--num-bootstrap", "0"], {"c.jsonl": _jsonl(REC)}, ["--num-bootstrap"]),
    ("confidence", [*SCORE, "--confidence", "0.9"], {"c.jsonl": _jsonl(REC)}, ["use --ci"]),
    ("old-seed", [*SCORE, "--bootstrap-seed", "3"], {"c.jsonl": _jsonl(REC)}, ["use --seed"]),
    ("ci", [*SCORE, "--ci", "0"], {"c.jsonl": _jsonl(REC)}, ["--ci", "(0, 1)"]),
    ("ci-one", [*SCORE, "--ci", "1"], {"c.jsonl": _jsonl(REC)}, ["--ci", "(0, 1)"]),
    ("by-unknown", [*SCORE, "--by", "topic"], {"c.jsonl": _jsonl(REC)}, ["--by", "'topic'"]),
    (
        "by-not-per-question",
        [*SCORE, "--by", "topic"],
        {
            "c.jsonl": _jsonl({**REC, "topic": "a"})
            + _jsonl({**REC, "model_a": "ref", "model_b": "m1", "topic": "b"})
        },
        ["--by", "'topic'", "more than one value"],
    ),  # fmt: skip
    (
        "out-dir-is-a-file",
        [*SCORE[:7], "{d}/c.jsonl", *SCORE[8:]],
        {"c.jsonl": _jsonl(REC)},
        ["--out-dir"],
    ),  # fmt: skip
]

ASK = ["llm", "ask", "-m", "{m}", "hi"]
ASK_CASES = [
    ("timeout", [*ASK, "--timeout", "0"], {}, ["--timeout"]),
    ("retries", [*ASK, "--retries", "-2"], {}, ["--retries"]),
    ("max-tokens", [*ASK, "--max-tokens", "-1"], {}, ["--max-tokens"]),
    ("temperature", [*ASK, "--temperature", "-0.5"], {}, ["--temperature"]),
    ("spec", ["llm", "ask", "-m", "ftp://x#m", "hi"], {}, ["model spec"]),
    ("spec-secret", ["llm", "ask", "-m", "http://u:s3cret@h:1/v1", "hi"], {}, ["u:***@"]),
]

CASES = [
    *[(f"text/{c[0]}", *c[1:]) for c in TEXT_CASES],
    *[(f"pairwise-judge/{c[0]}", *c[1:]) for c in JUDGE_CASES],
    *[(f"pairwise-score/{c[0]}", *c[1:]) for c in SCORE_CASES],
    *[(f"ask/{c[0]}", *c[1:]) for c in ASK_CASES],
]


@pytest.mark.parametrize("case,argv,files,needles", CASES, ids=[c[0] for c in CASES])
def test_refused_before_any_call(refused, case, argv, files, needles):
    line = refused(argv, files, needles)
    assert "s3cret" not in line
