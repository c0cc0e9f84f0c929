"""Language exams: parsing, hand-worked metrics, row order and loader errors."""

from __future__ import annotations

import pytest
from suitekit import EXAM, exam_responder
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.llm.suites import LanguageEvaluator, LanguageSuite, run_language
from assay.llm.suites.language import parse_choice
from assay.llm.suites.language_data import load_exam, split_options
from assay.llm.suites.shuffle import lcg_permutation

RUN = {"cache": False, "retries": 0, "quiet": True}

SCRIPT = {
    "What is the capital of France?": '{"choice": "paris"}',  # correct (case-insensitive)
    "How many legs does a spider have?": '{"choice": "six"}',  # incorrect
    "¿Cuál es el color del cielo despejado?": "azul",  # invalid: not JSON
    "¿Cuántos días tiene una semana?": '{"choice": " siete "}',  # correct (trimmed)
    "Quelle est la couleur de la neige ?": '{"choice": "grise"}',  # invalid: no such option
    "Combien font deux plus deux ?": '{"choice": "quatre"}',  # call error (plan)
}


def test_hand_worked_numbers(chat_server):
    suite = LanguageSuite(EXAM)
    last = suite.prepare()[5].item.messages[-1]["content"]
    srv = chat_server(plan={last: ["400"]}, responder=exam_responder(SCRIPT))
    result = run_language(EXAM, srv.spec(), **RUN)
    ms = result.metrics
    # all: C=2 I=1 V=2 E=1 -> accuracy 2/5, format errors 2/5, accuracy on valid 2/3
    assert ms.get("Accuracy", language="all").value == pytest.approx(2 / 5)
    assert ms.get("FormatErrorRate", language="all").value == pytest.approx(2 / 5)
    assert ms.get("AccuracyOnValid", language="all").value == pytest.approx(2 / 3)
    assert ms.get("LanguageCounts", language="all").value == {
        "correct": 2,
        "incorrect": 1,
        "invalid": 2,
        "errors": 1,
    }
    # en: C=1 I=1 -> 1/2, 0, 1/2; es: C=1 V=1 -> 1/2, 1/2, 1
    assert ms.get("Accuracy", language="en").value == 0.5
    assert ms.get("FormatErrorRate", language="en").value == 0.0
    assert ms.get("AccuracyOnValid", language="es").value == 1.0
    assert ms.get("FormatErrorRate", language="es").value == 0.5
    # fr: V=1 E=1 -> accuracy 0, format error rate 1, accuracy on valid undefined
    assert ms.get("FormatErrorRate", language="fr").value == 1.0
    assert ms.get("Accuracy", language="fr").value == 0.0
    assert ms.get("AccuracyOnValid", language="fr").value is None


def test_languages_filter_and_order(chat_server):
    suite = LanguageSuite(EXAM, languages=["fr", "en"], seed=9)
    rows = suite.chosen()
    assert [r.position for r in rows] == [0, 1, 4, 5]  # file order, once each
    for p, row in zip(suite.prepare(), rows):
        assert p.info["order"] == lcg_permutation(len(row.options), 9 * row.position)
        shown = p.item.messages[-1]["content"].splitlines()[-len(row.options) :]
        assert shown == [row.options[i] for i in p.info["order"]]
    assert len(LanguageSuite(EXAM, max_queries=2).prepare()) == 2
    with pytest.raises(InvalidInputError, match="no row"):
        LanguageSuite(EXAM, languages=["de"]).prepare()


def test_parse_choice():
    opts = ["Rome", "Paris"]
    assert parse_choice('{"choice": "ROME"}', opts, 1)["outcome"] == "incorrect"
    assert parse_choice('<think>x</think>{"choice": "Paris"}', opts, 1)["outcome"] == "correct"
    for bad in ('{"answer": "Paris"}', '["Paris"]', '{"choice": 1}', "Paris", ""):
        assert parse_choice(bad, opts, 1)["outcome"] == "invalid"


def test_option_notations():
    assert split_options("['a' 'b c']") == ["a", "b c"]
    assert split_options("['a', 'b']") == ["a", "b"]
    assert split_options('["a", "it\'s"]') == ["a", "it's"]
    assert split_options("""['l\\'eau' "it's"]""")[1] == "it's"


@pytest.mark.parametrize(
    "body, field, line",
    [
        ("language,question,options,answer\nen,q,['a' 'b'],2\n", "answer", "line 2"),
        (
            "language,question,options,answer\nen,q,['a' 'b'],0\nen,q,['a' 'b'],x\n",
            "answer",
            "line 3",
        ),
        ("language,question,options,answer\nen,q,no list,0\n", "options", "line 2"),
        ("language,question,options,answer\nen,q,['a'],0\n", "options", "line 2"),
        ("language,question,answer\nen,q,0\n", "options", None),
        (
            "language,question,options,answer\nen,q,['a' 'b'],0\n all ,q,['a' 'b'],1\n",
            "language",
            "line 3",
        ),  # "all" names the overall records
    ],
)
def test_malformed_exam_rows_name_file_line_and_field(tmp_path, body, field, line):
    p = tmp_path / "exam.csv"
    p.write_text(body)
    with pytest.raises(InvalidInputError) as e:
        load_exam(p)
    msg = str(e.value)
    assert str(p) in msg and field in msg and (line is None or line in msg)


def test_evaluator_merges_languages_seen_on_either_side():
    a = LanguageEvaluator().add(["en"], ["correct"])
    b = LanguageEvaluator().add(["de", "en"], ["incorrect", "invalid"])
    ms = a.merge(b).compute()
    assert ms.get("LanguageCounts", language="en").value["invalid"] == 1
    assert ms.get("Accuracy", language="de").value == 0.0
    with pytest.raises(InvalidInputError):
        LanguageEvaluator().add(["en"], ["right"])


def test_a_language_named_all_is_refused_it_names_the_overall_records(tmp_path, chat_server):
    """Regression: a language ``all`` gave a second ``language="all"`` record of every
    metric; the exam loader (before any call) and the evaluator refuse it, naming it."""
    for ev in (LanguageEvaluator().add, LanguageEvaluator().item_tally):
        with pytest.raises(InvalidInputError, match="records over every language") as e:
            ev(["en", "all", "all"], ["correct", "incorrect", "correct"])
        assert e.value.record == "index 1" and e.value.field == "languages"
    exam = tmp_path / "exam.csv"
    exam.write_text("language,question,options,answer\nen,q1,['a' 'b'],0\nall,q2,['a' 'b'],1\n")
    srv = chat_server(responder=exam_responder(SCRIPT))
    r = CliRunner().invoke(app, ["llm", "language", "--data", str(exam), "-m", srv.spec(),
                                 "--no-cache", "--quiet"])  # fmt: skip
    assert r.exit_code == 2, r.output
    (line,) = r.output.strip().splitlines()
    assert "line 3" in line and "field 'language'" in line and "'all'" in line
    assert srv.calls == 0
