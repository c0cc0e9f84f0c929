"""The LLM commands' bad inputs that crashed or slipped through (issue 19), refused cleanly.

Same checks as the rest of the corpus (tests/cli/conftest.py): exit 2, one ``error:`` line
naming the file or option and the place, no traceback, no model call, nothing written.
Each case failed before its fix: a traceback (response cache not SQLite, ``--seed`` beyond
numpy's range, a Latin-1 file, a non-UTF-8 or badly placeholdered dataset TOML) or a
silent, wrong acceptance (the rest).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from assay.errors import InvalidInputError
from assay.testing.pairwise import make_table

TOY = Path(__file__).parents[1] / "suites" / "data"
SHIPPED = Path(__file__).parents[2] / "src" / "assay" / "llm" / "suites" / "data"
NOT_SQLITE = "these are my notes, not a database\n"


def _other_sqlite() -> bytes:
    """A SQLite file with a ``responses`` table that is not assay's."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "x.sqlite"
        db = sqlite3.connect(p)
        db.execute("CREATE TABLE responses (id INTEGER, body TEXT)")
        db.commit()
        db.close()
        return p.read_bytes()


def _jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _toy(**files: str | bytes) -> dict[str, str | bytes]:
    names = ("toy.toml", "toy.txt", "toy_train.csv", "toy_test.csv")
    return {**{n: (TOY / n).read_text() for n in names}, **files}


ROW = {"uid": "1", "query": "q?", "prediction": "a b", "groundtruth": "a b"}
TEXT = ["text", "--data", "{d}/t.jsonl", "-m", "{m}", "--out", "{out}", "-q"]
JUDGED = [*TEXT, "--metrics", "answer_relevance"]
TABLE = make_table(["quality", "first"], {"m1": [3, 3], "ref": [1, 1]})
JUDGE = ["pairwise", "judge", "--data", "{d}/t.csv", "--models", "m1", "--reference-model", "ref",
         "--judge", "{m}", "--out-dir", "{runs}", "--out", "{out}", "-q"]  # fmt: skip
SCORE = ["pairwise", "score", "--records", "{d}/c.jsonl", "--reference-model", "ref",
         "--out-dir", "{runs}", "--out", "{out}"]  # fmt: skip
REC = {"index": "q1", "model_a": "m1", "model_b": "ref", "task": "t-general", "status": "ok",
       "reply": "Choice: A", "judge": "j", "answer1": "x", "answer2": "y"}  # fmt: skip
TSV = ("cmp_index\tquestion\tanswer1\tanswer2\tA\tB\treference_answer\tevaluating_guidance\ttask"
       "\tj\n" + "q1;m1;ref\tQ\tx\ty\tm1\tref\t\tg\tt-general\tChoice: A\n" * 2)  # fmt: skip
FAIR = ["llm", "fairness", "--dataset-file", "{d}/toy.toml", "-m", "{m}", "--out", "{out}", "-q"]
CAT = ["llm", "cat", "--data", "{S}/cat_dev.sample.json", "-m", "{m}", "-q"]
LANG = ["llm", "language", "--data", "{S}/exam.sample.csv", "-m", "{m}", "-q"]
RUN = ["llm", "run", "{d}/items.jsonl", "-m", "{m}", "--out", "{out}", "-q"]
ITEMS = '{"id": "a", "prompt": "hi"}\n'
ENV_CACHE = {"ASSAY_LLM_CACHE": "{d}/c.sqlite"}
TPL = "Decide. $example1 $example2 $example3 $example4\n"

# (case id, argv, files, needles, env)
CASES = [
    # a response cache file that is not an assay cache, named by --cache or $ASSAY_LLM_CACHE
    (
        "cache/text",
        [*JUDGED, "--cache", "{d}/c.sqlite"],
        {"t.jsonl": _jsonl(ROW), "c.sqlite": NOT_SQLITE},
        ["--cache {d}/c.sqlite", "not an assay response cache"],
        None,
    ),  # fmt: skip
    (
        "cache/text-env",
        JUDGED,
        {"t.jsonl": _jsonl(ROW), "c.sqlite": NOT_SQLITE},
        ["$ASSAY_LLM_CACHE {d}/c.sqlite", "not an assay response cache"],
        ENV_CACHE,
    ),  # fmt: skip
    (
        "cache/pairwise",
        [*JUDGE, "--cache", "{d}/c.sqlite"],
        {"t.csv": TABLE.to_csv(index=False), "c.sqlite": NOT_SQLITE},
        ["--cache {d}/c.sqlite"],
        None,
    ),  # fmt: skip
    ("cache/cat-env", CAT, {"c.sqlite": NOT_SQLITE}, ["$ASSAY_LLM_CACHE"], ENV_CACHE),
    (
        "cache/language",
        [*LANG, "--cache", "{d}/c.sqlite"],
        {"c.sqlite": _other_sqlite()},
        ["--cache {d}/c.sqlite", "no such column"],
        None,
    ),  # fmt: skip
    ("cache/fairness-env", FAIR, _toy(**{"c.sqlite": NOT_SQLITE}), ["$ASSAY_LLM_CACHE"], ENV_CACHE),
    (
        "cache/run",
        [*RUN, "--cache", "{d}/c.sqlite"],
        {"items.jsonl": ITEMS, "c.sqlite": NOT_SQLITE},
        ["--cache {d}/c.sqlite"],
        None,
    ),  # fmt: skip
    (
        "cache/run-env-save",
        [*RUN, "--save"],
        {"items.jsonl": ITEMS, "c.sqlite": NOT_SQLITE},
        ["$ASSAY_LLM_CACHE"],
        ENV_CACHE,
    ),  # fmt: skip
    # tracebacks
    (
        "pairwise/seed-above-2^32",
        [*JUDGE, "--mode", "random", "--seed", str(2**33)],
        {"t.csv": TABLE.to_csv(index=False)},
        ["--seed", str(2**33)],
        None,
    ),  # fmt: skip
    (
        "pairwise/seed-below--2^32",
        [*JUDGE, "--mode", "random", "--seed", str(-(2**32))],
        {"t.csv": TABLE.to_csv(index=False)},
        ["--seed"],
        None,
    ),  # fmt: skip
    (
        "pairwise/fill-contents-latin-1",
        [*JUDGE, "--fill-contents", "question"],
        {
            "t.csv": TABLE.assign(question=["q.md", "q.md"]).to_csv(index=False),
            "q.md": "caf\xe9 [judge:quality]".encode("latin-1"),
        },
        ["t.csv", "row 1", "'question'", "q.md", "not UTF-8"],
        None,
    ),  # fmt: skip
    (
        "fairness/toml-latin-1",
        FAIR,
        _toy(
            **{
                "toy.toml": (TOY / "toy.toml")
                .read_text()
                .replace("toy outcome", "toy r\xe9sultat")
                .encode("latin-1")
            }
        ),
        ["toy.toml", "line 3", "not UTF-8"],
        None,
    ),  # fmt: skip
    (
        "fairness/dataset-toml-latin-1",
        ["llm", "fairness", "--dataset", "{d}/toy.toml", "-m", "{m}"],
        _toy(**{"toy.toml": (TOY / "toy.toml").read_bytes().replace(b"toy outcome", b"\xe9")}),
        ["toy.toml", "not UTF-8"],
        None,
    ),  # fmt: skip
    (
        "fairness/template-latin-1",
        FAIR,
        _toy(**{"toy.txt": (TPL + "$row \xe9\n").encode("latin-1")}),
        ["toy.txt", "line 2", "not UTF-8"],
        None,
    ),  # fmt: skip
    (
        "fairness/unknown-placeholder",
        FAIR,
        _toy(**{"toy.txt": TPL + "$row $person\n"}),
        ["toy.txt", "$person"],
        None,
    ),  # fmt: skip
    (
        "fairness/stray-dollar",
        FAIR,
        _toy(**{"toy.txt": TPL + "$row costs $5\n"}),
        ["toy.txt", "$$"],
        None,
    ),  # fmt: skip
    # accepted silently before
    (
        "cat/unknown-section",
        ["llm", "cat", "--data", "{d}/dev.json", "-m", "{m}", "-q"],
        {"dev.json": '{"data": {"intrasentence": [], "intersentense": []}}'},
        ["dev.json", "'data'", "'intersentense'"],
        None,
    ),
    ("fairness/no-row-placeholder", FAIR, _toy(**{"toy.txt": TPL}), ["toy.txt", "$row"], None),
    (
        "text/uid-list",
        TEXT,
        {"t.jsonl": _jsonl({**ROW, "uid": ["a"]})},
        ["t.jsonl", "row 1", "'uid'", "got list"],
        None,
    ),  # fmt: skip
    (
        "text/uid-object",
        TEXT,
        {"t.jsonl": _jsonl(ROW, {**ROW, "uid": {"a": 1}})},
        ["t.jsonl", "row 2", "'uid'", "got dict"],
        None,
    ),  # fmt: skip
    ("text/uid-bool", TEXT, {"t.jsonl": _jsonl({**ROW, "uid": True})}, ["'uid'", "bool"], None),
    ("text/empty-file", TEXT, {"t.jsonl": ""}, ["t.jsonl"], None),
    (
        "text/header-only",
        [*TEXT[:2], "{d}/t.csv", *TEXT[3:]],
        {"t.csv": "uid,prediction,groundtruth\n"},
        ["t.csv", "no rows"],
        None,
    ),  # fmt: skip
    (
        "pairwise/model-twice",
        [*JUDGE[:5], "m1,m1", *JUDGE[6:]],
        {"t.csv": TABLE.to_csv(index=False)},
        ["--models", "'m1'", "twice"],
        None,
    ),  # fmt: skip
    (
        "pairwise-score/duplicated-row",
        SCORE,
        {"c.jsonl": _jsonl(REC, {**REC, "model_a": "ref", "model_b": "m1"}, REC)},
        ["c.jsonl", "row 3", "'q1;m1;ref' repeats (first at row 1)"],
        None,
    ),  # fmt: skip
    (
        "pairwise-score/duplicated-tsv-row",
        [*SCORE[:3], "{d}/r.tsv", *SCORE[4:]],
        {"r.tsv": TSV},
        ["r.tsv", "row 2", "'cmp_index'", "repeats"],
        None,
    ),  # fmt: skip
    (
        "pairwise-score/unknown-status",
        SCORE,
        {"c.jsonl": _jsonl(REC, {**REC, "model_a": "ref", "model_b": "m1", "status": "great"})},
        ["c.jsonl", "row 2", "'status'", "'great'"],
        None,
    ),  # fmt: skip
    (
        "average/no-datasets",
        ["llm", "average", "--datasets", " , ", "--db", "{d}/s.db"],
        {},
        ["--datasets"],
        None,
    ),  # fmt: skip
    (
        "average/no-store",
        ["llm", "average", "--db", "{d}/s.db"],
        {},
        ["{d}/s.db", "no such store"],
        None,
    ),  # fmt: skip
]


@pytest.mark.parametrize("case,argv,files,needles,env", CASES, ids=[c[0] for c in CASES])
def test_refused_before_any_call(refused, case, argv, files, needles, env):
    refused(argv, files, needles, env=env)


def test_numpy_values_are_shown_as_the_user_wrote_them():
    from assay.llm.pairwise.table import read_table

    df = TABLE.assign(index=pd.Series([7, 7], dtype="int64"))
    with pytest.raises(InvalidInputError) as e:
        read_table(df, models=["m1"], reference_model="ref")
    assert "index 7 repeats" in str(e.value) and "np." not in str(e.value)
    from assay.text.io import normalise_rows

    with pytest.raises(InvalidInputError) as e:
        normalise_rows([{"uid": ["a"], "prediction": "p"}])
    assert "got list ['a']" in str(e.value)
    import numpy as np

    assert normalise_rows([{"uid": np.int64(3), "prediction": "p"}])[0]["uid"] == "3"


def test_library_refusals():
    from assay.llm import RunOptions, evaluate
    from assay.llm.pairwise import judge
    from assay.llm.suites.fairness import FairnessSuite, load_fairness_data

    with pytest.raises(InvalidInputError, match="given twice"):
        judge(TABLE, models=["m1", "m1"], reference_model="ref", model="http://127.0.0.1:9/v1#m")
    with pytest.raises(InvalidInputError, match="--seed"):
        judge(TABLE, models=["m1"], reference_model="ref", seed=2**40, mode="random")
    with tempfile.TemporaryDirectory() as d:
        for name, text in _toy(**{"toy.txt": TPL}).items():
            (Path(d) / name).write_text(text if isinstance(text, str) else text.decode())
        with pytest.raises(InvalidInputError, match=r"\$row"):
            FairnessSuite(load_fairness_data(Path(d) / "toy.toml"))
        bad = Path(d) / "c.sqlite"
        bad.write_text(NOT_SQLITE)
        from assay.llm.suites import CATSuite

        suite = CATSuite(str(SHIPPED / "cat_dev.sample.json"), max_queries=1)
        with pytest.raises(InvalidInputError, match="not an assay response cache"):
            evaluate(suite, "http://127.0.0.1:9/v1#m", RunOptions(cache=bad))
        assert bad.read_text() == NOT_SQLITE


def test_the_reference_among_the_models_is_not_judged_against_itself(chat_server):
    """The original's configurations list the reference among the models: its comparisons
    with itself are exact matches (counted, never sent) and yield no record and no game."""
    from assay.llm import RunOptions
    from assay.llm.pairwise import judge
    from assay.testing.pairwise import scripted_judge

    srv = chat_server(responder=scripted_judge())

    def ranked(models):
        run = judge(TABLE, models=models, reference_model="ref", model=srv.spec(),
                    options=RunOptions(cache=False), num_bootstrap=10)  # fmt: skip
        return [
            (m.type, m.value, m.parameters)
            for m in run.metrics
            if m.type in ("WinRate", "WinRateWithTie", "BradleyTerryRating")
        ]

    alone, with_ref = ranked(["m1"]), ranked(["m1", "ref"])
    assert srv.calls == 8  # 4 per run: the self-comparisons are never sent
    assert with_ref == alone
    assert not [p for _, _, p in with_ref if p.get("model") == p.get("opponent")]
