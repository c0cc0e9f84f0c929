"""Bad input to ``assay llm cat|language|fairness|average``: refused before any call.

Each case runs the command against a counting loopback model and checks (tests/cli/conftest.py):
exit 2, one ``error:`` line naming the file (or option) and the place, no traceback, no call
paid, nothing written (the store and the response cache included).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SHIPPED = Path(__file__).parents[2] / "src" / "assay" / "llm" / "suites" / "data"
TOY = Path(__file__).parents[1] / "suites" / "data"

DEV = (SHIPPED / "cat_dev.sample.json").read_text()
EXAM = (SHIPPED / "exam.sample.csv").read_text()


def _dev(edit) -> str:
    d = json.loads(DEV)
    edit(d)
    return json.dumps(d)


CAT = ["llm", "cat", "--data", "{d}/dev.json", "-m", "{m}", "--out", "{out}", "-q"]
CAT_CASES = [
    ("no-data", ["llm", "cat", "-m", "{m}"], {}, ["--data", "--sample"]),
    ("data-and-sample", [*CAT, "--sample"], {"dev.json": DEV}, ["--data", "not both"]),
    ("not-json", CAT, {"dev.json": DEV[:-40]}, ["dev.json"]),
    (
        "latin-1",
        CAT,
        {"dev.json": DEV.replace("nurse", "nurs\xe9").encode("latin-1")},
        ["dev.json"],
    ),  # fmt: skip
    ("utf-16", CAT, {"dev.json": DEV.encode("utf-16")}, ["dev.json"]),
    ("missing-file", CAT, {}, ["dev.json"]),
    ("empty-object", CAT, {"dev.json": "{}"}, ["dev.json"]),
    (
        "two-sentences",
        CAT,
        {"dev.json": _dev(lambda d: d["data"]["intersentence"][1]["sentences"].pop())},
        ["dev.json", "intersentence[1]", "sentences"],
    ),  # fmt: skip
    (
        "gold-label",
        CAT,
        {
            "dev.json": _dev(
                lambda d: d["data"]["intrasentence"][0]["sentences"][0].update(gold_label="maybe")
            )
        },
        ["dev.json", "gold_label", "'maybe'"],
    ),  # fmt: skip
    (
        "section-not-a-list",
        CAT,
        {"dev.json": _dev(lambda d: d["data"].update(intrasentence=5))},
        ["dev.json", "intrasentence"],
    ),  # fmt: skip
    ("max-queries", [*CAT, "--max-queries", "-1"], {"dev.json": DEV}, ["--max-queries"]),
    ("dry-run", [*CAT, "--dry-run", "-1"], {"dev.json": DEV}, ["--dry-run"]),
    ("concurrency", [*CAT, "--concurrency", "0"], {"dev.json": DEV}, ["--concurrency"]),
    ("max-tokens", [*CAT, "--max-tokens", "0"], {"dev.json": DEV}, ["--max-tokens"]),
    ("max-errors", [*CAT, "--max-errors", "-1"], {"dev.json": DEV}, ["--max-errors"]),
    ("cache-directory", [*CAT, "--cache", "{d}"], {"dev.json": DEV}, ["--cache"]),
    ("out-directory", [*CAT[:6], "--out", "{d}"], {"dev.json": DEV}, ["--out"]),
    ("spec", [*CAT[:5], "ftp://x#m", *CAT[6:]], {"dev.json": DEV}, ["model spec"]),
    ("store-is-a-folder", [*CAT, "--db", "{d}"], {"dev.json": DEV}, ["{d}"]),
    ("ci-level", [*CAT, "--ci", "1.5"], {"dev.json": DEV}, ["--ci", "1.5"]),
    ("ci-method", [*CAT, "--ci", "0.9", "--ci-method", "exact"], {"dev.json": DEV}, ["exact"]),
    (
        "num-bootstrap",
        [*CAT, "--ci", "0.9", "--num-bootstrap", "1"],
        {"dev.json": DEV},
        ["--num-bootstrap"],
    ),  # fmt: skip
    ("by-unknown", [*CAT, "--by", "topic"], {"dev.json": DEV}, ["--by", "'topic'", "bias_type"]),
]

LANG = ["llm", "language", "--data", "{d}/exam.csv", "-m", "{m}", "--out", "{out}", "-q"]
HEAD = "language,question,options,answer\n"
LANG_CASES = [
    ("no-data", ["llm", "language", "-m", "{m}", "--languages", "en"], {}, ["--data", "--sample"]),
    (
        "answer-text",
        LANG,
        {"exam.csv": HEAD + 'en,Q?,"[""a"", ""b""]",fox\n'},
        ["exam.csv", "line 2", "'answer'", "'fox'"],
    ),  # fmt: skip
    (
        "answer-out-of-range",
        LANG,
        {"exam.csv": HEAD + 'en,Q?,"[""a"", ""b""]",5\n'},
        ["exam.csv", "line 2", "'answer'", "out of range"],
    ),  # fmt: skip
    (
        "options-not-a-list",
        LANG,
        {"exam.csv": HEAD + "en,Q?,fox,1\n"},
        ["exam.csv", "line 2", "'options'"],
    ),  # fmt: skip
    (
        "missing-column",
        LANG,
        {"exam.csv": "language,question,answer\nen,Q?,1\n"},
        ["exam.csv", "options"],
    ),  # fmt: skip
    ("unknown-language", [*LANG, "--languages", "xx"], {"exam.csv": EXAM}, ["exam.csv", "xx"]),
    (
        "latin-1",
        LANG,
        {"exam.csv": EXAM.replace("capital", "capit\xe0l").encode("latin-1")},
        ["exam.csv"],
    ),  # fmt: skip
    ("empty", LANG, {"exam.csv": ""}, ["exam.csv"]),
    ("header-only", LANG, {"exam.csv": HEAD}, ["exam.csv"]),
    ("missing-file", LANG, {}, ["exam.csv"]),
    ("timeout", [*LANG, "--timeout", "0"], {"exam.csv": EXAM}, ["--timeout"]),
    ("retries", [*LANG, "--retries", "-1"], {"exam.csv": EXAM}, ["--retries"]),
    ("by-unknown", [*LANG, "--by", "subject"], {"exam.csv": EXAM}, ["--by", "'subject'"]),
]


def _toml(**change: str | None) -> str:
    lines = []
    for line in (TOY / "toy.toml").read_text().splitlines():
        key = line.split(" = ")[0]
        if key in change:
            if change[key] is not None:
                lines.append(f"{key} = {change.pop(key)}")
            else:
                change.pop(key)
            continue
        lines.append(line)
    lines += [f"{k} = {v}" for k, v in change.items() if v is not None]
    return "\n".join(lines) + "\n"


def _toy(**files: str | bytes) -> dict[str, str | bytes]:
    base: dict[str, str | bytes] = {
        name: (TOY / name).read_text() for name in ("toy.toml", "toy.txt", "toy_train.csv")
    }
    base["toy_test.csv"] = (TOY / "toy_test.csv").read_text()
    return {**base, **files}


TRAIN = (TOY / "toy_train.csv").read_text()
FAIR = ["llm", "fairness", "--dataset-file", "{d}/toy.toml", "-m", "{m}", "--out", "{out}", "-q"]
FAIR_CASES = [
    (
        "unknown-dataset",
        ["llm", "fairness", "--dataset", "adult", "-m", "{m}"],
        {},
        ["adult", "unknown dataset"],
    ),  # fmt: skip
    ("not-toml", FAIR, _toy(**{"toy.toml": "name = \n"}), ["toy.toml", "not TOML"]),
    (
        "missing-key",
        FAIR,
        _toy(**{"toy.toml": _toml(label_column=None)}),
        ["toy.toml", "'label_column'", "missing"],
    ),  # fmt: skip
    ("unknown-key", FAIR, _toy(**{"toy.toml": _toml(colour='"red"')}), ["toy.toml", "colour"]),
    (
        "three-labels",
        FAIR,
        _toy(**{"toy.toml": _toml(label_values='["a", "b", "c"]')}),
        ["toy.toml", "'label_values'", "two different values"],
    ),  # fmt: skip
    (
        "same-answers",
        FAIR,
        _toy(**{"toy.toml": _toml(answers='["Y", "Y"]')}),
        ["toy.toml", "'answers'"],
    ),  # fmt: skip
    (
        "no-template",
        FAIR,
        _toy(**{"toy.toml": _toml(template_file=None)}),
        ["toy.toml", "template"],
    ),  # fmt: skip
    (
        "template-missing",
        FAIR,
        _toy(**{"toy.toml": _toml(template_file='"gone.txt"')}),
        ["toy.toml", "'template_file'"],
    ),  # fmt: skip
    (
        "train-without-test",
        [*FAIR, "--train", "{d}/toy_train.csv"],
        _toy(),
        ["toy", "both a train and a test"],
    ),  # fmt: skip
    (
        "split-missing-column",
        FAIR,
        _toy(**{"toy_test.csv": "id,name,sex,outcome\n1,r1,m,yes\n"}),
        ["toy_test.csv", "'hours'"],
    ),  # fmt: skip
    (
        "split-undeclared-label",
        FAIR,
        _toy(**{"toy_test.csv": "id,name,sex,hours,outcome\n1,r1,m,4,maybe\n"}),
        ["toy_test.csv", "line 2", "'outcome'", "'maybe'"],
    ),  # fmt: skip
    (
        "split-undeclared-group",
        FAIR,
        _toy(**{"toy_test.csv": "id,name,sex,hours,outcome\n1,r1,x,4,yes\n"}),
        ["toy_test.csv", "line 2", "'sex'"],
    ),  # fmt: skip
    (
        "split-header-only",
        FAIR,
        _toy(**{"toy_test.csv": "id,name,sex,hours,outcome\n"}),
        ["toy_test.csv", "no rows"],
    ),  # fmt: skip
    (
        "train-lacks-a-cell",
        FAIR,
        _toy(**{"toy_train.csv": TRAIN.replace(",f,", ",m,")}),
        ["toy train", "one example per cell"],
    ),  # fmt: skip
    (
        "split-missing-file",
        FAIR,
        {k: v for k, v in _toy().items() if k != "toy_test.csv"},
        ["toy_test.csv"],
    ),  # fmt: skip
    (
        "raw-count",
        ["llm", "fairness", "--dataset", "pisa", "--raw", "{d}/a.csv", "-m", "{m}"],
        {"a.csv": "x\n1\n"},
        ["pisa", "raw file"],
    ),  # fmt: skip
    (
        "raw-not-pisa",
        [
            "llm",
            "fairness",
            "--dataset",
            "pisa",
            "--raw",
            "{d}/a.csv",
            "--raw",
            "{d}/a.csv",
            "-m",
            "{m}",
        ],
        {"a.csv": "x\n1\n"},
        ["a.csv", "readingScore"],
    ),  # fmt: skip
    ("no-sample", [*FAIR, "--sample"], _toy(), ["toy", "no sample"]),
    ("toml-not-found", [*FAIR[:3], "{d}/nope.toml", *FAIR[4:]], {}, ["nope.toml"]),
    ("no-data", ["llm", "fairness", "--dataset", "pisa", "-m", "{m}"], {}, ["pisa", "no data"]),
    ("concurrency", [*FAIR, "--concurrency", "0"], _toy(), ["--concurrency"]),
    ("by-unknown", [*FAIR, "--by", "zip"], _toy(), ["--by", "'zip'", "sex"]),
]

AVG = ["llm", "average", "--db", "{d}/store.db", "--out", "{out}"]
AVG_CASES = [
    ("out-directory", [*AVG[:4], "--out", "{d}"], {}, ["--out"]),
    ("store-not-sqlite", AVG, {"store.db": "not a database\n"}, ["store.db"]),
]

CASES = [
    *[(f"cat/{c[0]}", *c[1:]) for c in CAT_CASES],
    *[(f"language/{c[0]}", *c[1:]) for c in LANG_CASES],
    *[(f"fairness/{c[0]}", *c[1:]) for c in FAIR_CASES],
    *[(f"average/{c[0]}", *c[1:]) for c in AVG_CASES],
]


@pytest.mark.parametrize("case,argv,files,needles", CASES, ids=[c[0] for c in CASES])
def test_refused_before_any_call(refused, case, argv, files, needles):
    refused(argv, files, needles)
