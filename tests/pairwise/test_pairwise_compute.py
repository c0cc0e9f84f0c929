"""Consistency, old and new win rates, extraction: every case of the original's rules."""

from __future__ import annotations

import pandas as pd
import pytest

from assay.llm.pairwise import PairwiseEvaluator, analyze, build_prompt, extract_choice
from assay.llm.pairwise.compute import consistent_mask, new_win_rates, old_win_tables

REF = "r"


def _rows(pairs, *, task="uml_class-general", model="m"):
    """Dual-mode rows: for each question, (choice with ref first, choice with model first)."""
    rows = []
    for i, (c1, c2) in enumerate(pairs):
        q = f"p{i}_{task}"
        for a, b, c in ((REF, model, c1), (model, REF, c2)):
            if c is None:
                continue
            st = "ok" if c in "ABCD" and c else ("em" if c == "EM" else "unparsed")
            rows.append(
                {
                    "index": q,
                    "model_a": a,
                    "model_b": b,
                    "task": task,
                    "status": st,
                    "choice": c if st == "ok" else "",
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "pair, consistent",
    [
        (("A", "B"), True),
        (("B", "A"), True),
        (("C", "C"), True),
        (("D", "D"), True),
        (("A", "A"), False),
        (("B", "B"), False),
        (("C", "D"), False),
        (("A", "C"), False),
        (("D", "B"), False),
    ],
)
def test_each_consistency_case(pair, consistent):
    mask = consistent_mask(_rows([pair]))
    assert mask.tolist() == [consistent, consistent]


def test_a_row_whose_reverse_is_missing_counts_as_consistent():
    rows = _rows([("A", None), ("A", "EM"), ("B", "x")])
    ok = rows[rows["status"] == "ok"]
    assert len(ok) == 3
    assert consistent_mask(rows).tolist() == [True, True, True]


def test_consistency_rate_and_extraction_rate_records():
    rows = _rows([("A", "B"), ("A", "A"), ("B", "garbage"), ("EM", "EM")])
    ms = PairwiseEvaluator(reference_model=REF, num_bootstrap=5).add(rows).compute()
    ext, cons = ms.get("ExtractionRate"), ms.get("ConsistencyRate")
    assert (ext.parameters["extracted"], ext.parameters["compared"]) == (5, 6)
    assert ext.value == pytest.approx(5 / 6)
    assert (cons.parameters["consistent"], cons.parameters["extracted"]) == (3, 5)
    assert cons.value == pytest.approx(3 / 5)


def test_old_rates_for_two_options_are_win_over_win_plus_lose():
    # model wins q0 (ref first: B), loses q1 (ref first: A), wins q2; q3 inconsistent is dropped.
    rows = _rows([("B", "A"), ("A", "B"), ("B", "A"), ("A", "A")])
    a = analyze(rows, reference_model=REF, num_bootstrap=5)
    overall = a.old[a.old["column"] == "Overall-lang"].iloc[0]
    assert (overall.win, overall.lose, overall.tot) == (4, 2, 6)
    assert overall.win_both_good == overall.win_half_draw == pytest.approx(4 / 6)


def test_old_rates_for_three_and_four_options():
    rows = _rows([("B", "A"), ("C", "C"), ("D", "D"), ("A", "B")])
    old = old_win_tables(rows, REF)
    r = old[old["column"] == "uml_class-general"].iloc[0]
    assert (r.win, r.lose, r.both, r.neither, r.tot) == (2, 2, 2, 2, 8)
    assert r.win_both_good == pytest.approx((2 + 2) / 8)
    assert r.win_half_draw == pytest.approx((2 + (2 + 2) / 2) / 8)


def test_old_rate_columns_filter_by_task_substring():
    rows = pd.concat(
        [
            _rows([("B", "A")], task="uml_class-general"),
            _rows([("A", "B")], task="architecture_design-faithfulness"),
        ]
    )
    rows["index"] = [f"x{i}_{t}" for i, t in enumerate(rows["task"])]
    old = old_win_tables(rows, REF).set_index("column")
    assert list(old.index) == [
        "Overall-lang",
        "EN",
        "architecture_design",
        "uml_class",
        "architecture_design-faithfulness",
        "uml_class-general",
    ]
    assert old.loc["uml_class", "win_both_good"] == 1.0
    assert old.loc["architecture_design", "win_both_good"] == 0.0
    assert old.loc["Overall-lang", "win_both_good"] == 0.5


def test_new_rates_count_inconsistent_pairs_as_ties():
    # q0: consistent win for m; q1: inconsistent (A, A) -> tie on both orders.
    rows = _rows([("B", "A"), ("A", "A")])
    new = new_win_rates(rows, REF).set_index(["model", "opponent"])
    m = new.loc[("m", REF)]
    assert (m.cnt, m.tie, m.tot) == (2, 2, 4)
    assert m.with_tie == pytest.approx((2 + 0.5 * 2) / 4)
    assert m.without_tie == pytest.approx(2 / (4 - 2))
    r = new.loc[(REF, "m")]
    assert (r.cnt, r.tie, r.tot) == (0, 2, 4)


def test_new_rates_both_good_is_a_tie_and_neither_good_only_adds_to_the_total():
    rows = _rows([("C", "C"), ("D", "D")])
    m = new_win_rates(rows, REF).set_index(["model", "opponent"]).loc[("m", REF)]
    assert (m.cnt, m.tie, m.tot) == (0, 2, 4)
    assert m.with_tie == pytest.approx(0.25)
    assert m.without_tie == pytest.approx(0.0)


def test_new_rates_pool_design_files_by_metric_and_undefined_is_none_in_records():
    rows = pd.concat(
        [
            _rows([("A", "A")], task="uml_class-general"),
            _rows([("B", "A")], task="architecture_design-general"),
        ]
    )
    rows["index"] = [f"x{i // 2}_{t}" for i, t in enumerate(rows["task"])]
    rows = pd.concat([rows, _rows([("A", "A")], task="uml_class-faithfulness")])
    new = new_win_rates(rows, REF).set_index(["metric", "model"])
    assert new.loc[("general", "m"), "tot"] == 4
    assert new.loc[("faithfulness", "m"), "tie"] == 2
    ms = PairwiseEvaluator(reference_model=REF, num_bootstrap=5).add(rows).compute()
    wo = ms.get("WinRateWithoutTie", model="m", metric="faithfulness")
    assert wo.value is None and wo.parameters["undefined"] == "every comparison was a tie"


def test_new_rates_keep_keys_that_contain_the_reference_name_as_a_substring():
    rows = _rows([("B", "A")], model="r-large")
    rows = pd.concat([rows, _rows([("B", "A")], model="other")])
    rows["index"] = [f"x{i // 2}_uml_class-general" for i in range(len(rows))]
    new = new_win_rates(rows, REF)
    assert set(new["model"]) == {"r", "r-large", "other"}


@pytest.mark.parametrize("nopt, letters", [(2, "AB"), (3, "ABC"), (4, "ABCD")])
def test_prompts_offer_the_options_and_extraction_accepts_only_those(nopt, letters):
    p = build_prompt(question="Q", response_1="x", response_2="y", guidance="G", nopt=nopt)
    assert f"Choose one of these {nopt} options:" in p
    for letter in "ABCD":
        assert (f"\n{letter}. " in p) == (letter in letters)
        got = extract_choice(f"Choice: {letter}\nReason: ...", nopt=nopt)
        assert got.letter == (letter if letter in letters else None)
    assert "Reference" not in p
    with_ref = build_prompt(
        question="Q", response_1="x", response_2="y", guidance="G", nopt=nopt, reference_answer="R!"
    )
    assert "<reference_answer>\nR!\n</reference_answer>" in with_ref


def test_extraction_follows_the_original_pattern_and_never_guesses():
    assert extract_choice("Choice: B", nopt=2).letter == "B"
    assert extract_choice("选择：A", nopt=2).letter == "A"
    assert extract_choice("Reason first.\nChoice: A then Choice: B", nopt=2).letter == "A"
    for reply in ("Choice:B", "choice: a", "I pick B", "", None):
        assert extract_choice(reply, nopt=2).letter is None


def test_user_text_with_slot_markers_is_not_substituted():
    p = build_prompt(
        question="{{response_1}}",
        response_1="one",
        response_2="two",
        guidance="{{options}}",
        nopt=2,
    )
    assert "<question>\n{{response_1}}\n</question>" in p
    assert p.count("Choose one of these") == 1


@pytest.mark.parametrize(
    "change, field",
    [
        ({"status": ["done"]}, "status"),
        ({"choice": ["C"]}, "choice"),
        ({"model_b": [""]}, "model_b"),
    ],
)
def test_evaluator_refuses_a_bad_batch_naming_row_and_field(change, field):
    batch = {
        "index": ["q"],
        "model_a": ["m"],
        "model_b": [REF],
        "task": ["t-g"],
        "status": ["ok"],
        "choice": ["A"],
        **change,
    }
    ev = PairwiseEvaluator(reference_model=REF, nopt=2)
    with pytest.raises(ValueError, match=f"row 1: field '{field}'"):
        ev.add(batch)
    assert ev.is_empty


def test_a_column_without_consistent_rows_is_zero_in_the_original_table_and_none_in_records():
    from assay.llm.pairwise.report import original_win_table

    # m: general inconsistent only, faithfulness a consistent win; m2 has a consistent
    # general row, so the column exists (columns come from the consistent rows, as in the
    # original).
    rows = pd.concat(
        [
            _rows([("A", "A")], task="uml_class-general"),
            _rows([("B", "A")], task="uml_class-faithfulness"),
            _rows([("A", "B")], task="uml_class-general", model="m2"),
        ]
    )
    rows["index"] = [f"x{i // 2}_{t}" for i, t in enumerate(rows["task"])]
    a = analyze(rows, reference_model=REF, num_bootstrap=5)
    table = original_win_table(a.old, "win+bothgood").set_index("model")
    assert table.loc["m", "uml_class-general"] == 0.0
    assert table.loc["m", "Overall-lang"] == 1.0
    rec = a.metrics.get("WinRate", counting="win+bothgood", task="uml_class-general", model="m")
    assert rec.value is None and rec.parameters["undefined"] == "no consistent comparison"


def test_original_record_table_statuses(tmp_path):
    from assay.llm.pairwise.recordfile import FAIL_MSG, original_tsv, read_records

    rows = pd.DataFrame(
        {
            "index": ["q1", "q1", "q2", "q3"],
            "model_a": ["r", "m", "r", "m"],
            "model_b": ["m", "r", "m", "r"],
            "task": ["t-general"] * 4,
            "question": ["Q"] * 4,
            "answer1": ["a", "b", "same", "c"],
            "answer2": ["b", "a", "same", "d"],
            "reference_answer": [""] * 4,
            "evaluating_guidance": ["g"] * 4,
            "status": ["ok", "ok", "em", "failed"],
            "reply": ["Choice: B\nReason: 1.", "no choice here", None, None],
        }
    )
    path = tmp_path / "record_j_2.tsv"
    path.write_text(original_tsv(rows, judge="j"))
    raw = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    assert list(raw["j"]) == ["Choice: B\nReason: 1.", "no choice here", FAIL_MSG, "EM"]
    back, judge = read_records(path, nopt=2)
    assert judge == "j"
    assert sorted(back["status"]) == ["em", "failed", "ok", "unparsed"]
    assert list(back.loc[back["status"] == "ok", "choice"]) == ["B"]
    c = analyze(back, reference_model="r", num_bootstrap=5).counts
    assert c == {"total": 4, "failed": 1, "non_em": 3, "extracted": 1, "consistent": 1}
