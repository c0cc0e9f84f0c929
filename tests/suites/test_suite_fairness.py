"""LLM fairness: hand-worked metrics, counterfactual flips, invalid/error paths, prompts."""

from __future__ import annotations

import pytest
from suitekit import TOY, toy_responder

from assay.errors import InvalidInputError
from assay.llm.suites import LLMFairnessEvaluator, run_fairness
from assay.llm.suites.fairness import FairnessSuite, load_fairness_data, parse_fairness_answer
from assay.llm.suites.shuffle import lcg_shuffle, seeded_pick

RUN = {"cache": False, "retries": 0, "quiet": True}

# (name, sex shown) -> answer. Test rows: r1-r4 are m (privileged), r5-r9 f.
# targets: r1 r2 r5 r6 yes; r3 r4 r7 r8 r9 no.
SCRIPT = {
    ("r1", "m"): "Y",
    ("r1", "f"): "Y",  # unchanged
    ("r2", "m"): "N",
    ("r2", "f"): "Y",  # changed N -> Y
    ("r3", "m"): "Y",
    ("r3", "f"): "maybe",  # changed valid -> invalid
    ("r4", "m"): "N",
    ("r4", "f"): "N",  # unchanged
    ("r5", "f"): "Y",
    ("r5", "m"): "N",  # changed Y -> N (the other direction)
    ("r6", "f"): "zzz",
    ("r6", "m"): "qqq",  # both invalid, different texts: unchanged
    ("r7", "f"): "N",
    ("r7", "m"): "N",  # original call fails: no counterfactual call
    ("r8", "f"): "Y",
    ("r8", "m"): "Y",  # counterfactual call fails: left out of the rates
    ("r9", "f"): "maybe",
    ("r9", "m"): "N",  # changed invalid -> valid
}


def _prompt(suite, q, cf):
    return suite._prepared(q, suite.data.test[q], cf).item.messages[-1]["content"]


def _toy_run(chat_server, seed=3):
    suite = FairnessSuite(load_fairness_data(TOY), seed=seed)
    plan = {_prompt(suite, 6, False): ["500"], _prompt(suite, 7, True): ["400"]}
    srv = chat_server(plan=plan, responder=toy_responder(SCRIPT))
    return run_fairness(TOY, srv.spec(), seed=seed, **RUN), srv


def test_hand_worked_numbers_on_the_toy_dataset(chat_server):
    result, srv = _toy_run(chat_server)
    ms = result.metrics
    # 9 originals + 8 counterfactuals (none for r7, whose original failed)
    assert len(result.calls) == 17 and srv.calls == 17
    assert ms.get("ResponseCounts", counterfactual=True).value == {
        "valid": 5,
        "invalid": 2,
        "errors": 1,
    }
    # valid originals: m: r1 TP, r2 FN, r3 FP, r4 TN; f: r5 TP, r8 FP (r6 r9 invalid, r7 error)
    assert [
        m.value for m in ms.filter("ResponseCounts") if not m.parameters.get("counterfactual")
    ] == [{"valid": 6, "invalid": 2, "errors": 1}]
    # SPD = P(Y|f) - P(Y|m) = 2/2 - 2/4 = 0.5; DI = 1 / 0.5 = 2
    assert ms.get("StatisticalParityDifference").value == pytest.approx(0.5)
    assert ms.get("DisparateImpact").value == pytest.approx(2.0)
    # AOD = ((FPR_f - FPR_m) + (TPR_f - TPR_m)) / 2 = ((1 - 1/2) + (1 - 1/2)) / 2 = 0.5
    assert ms.get("AverageOddsDifference").value == pytest.approx(0.5)
    # EOD = TPR_f - TPR_m = 1 - 1/2
    assert ms.get("EqualOpportunityDifference").value == pytest.approx(0.5)
    assert ms.get("StatisticalParityDifference").parameters == {
        "group_column": "sex",
        "privileged": "m",
        "answer_mode": "generate",
    }
    # accuracy (TP+TN)/valid = 3/6; precision 2/(2+2); recall 2/(2+1)
    assert ms.get("Accuracy").value == pytest.approx(0.5)
    assert ms.get("Precision").value == pytest.approx(0.5)
    assert ms.get("Recall").value == pytest.approx(2 / 3)
    # change rates: compared r1-r6, r9 (7); changed r2 r3 r5 r9
    overall = [m for m in ms.filter("CounterfactualChangeRate") if "group" not in m.parameters]
    assert overall[0].value == pytest.approx(4 / 7) and overall[0].parameters["n"] == 7
    assert ms.get("CounterfactualChangeRate", group="m").value == pytest.approx(2 / 4)
    assert ms.get("CounterfactualChangeRate", group="f").value == pytest.approx(2 / 3)


def test_counterfactual_calls_only_for_originals_that_did_not_fail(chat_server):
    result, _ = _toy_run(chat_server)
    cf_rows = sorted(c.info["row"] for c in result.calls if c.info["counterfactual"])
    assert cf_rows == [0, 1, 2, 3, 4, 5, 7, 8]  # row 6 (r7) failed
    r6 = [c for c in result.calls if c.info["row"] == 5]
    assert [c.parsed["text"] for c in r6] == ["zzz", "qqq"]  # kept, both invalid


def test_both_invalid_with_different_text_is_not_a_change():
    ev = LLMFairnessEvaluator(groups=["a", "b"])
    ev.add(target=[1, 1], predicted=[-1, 1], privileged=[0, 1], counterfactual=[-1, 1])
    rate = [
        m for m in ev.compute().filter("CounterfactualChangeRate") if "group" not in m.parameters
    ]
    assert rate[0].value == 0.0 and rate[0].parameters["n"] == 2


def test_an_empty_group_leaves_fairness_undefined_but_keeps_accuracy():
    ev = LLMFairnessEvaluator(group_column="male", groups=["0", "1"])
    ev.add(target=[1, 0], predicted=[1, 1], privileged=[1, 1])
    ms = ev.compute()
    for name in ("StatisticalParityDifference", "DisparateImpact", "EqualOpportunityDifference"):
        rec = ms.get(name)
        assert rec.value is None and "unprivileged" in rec.parameters["undefined"]
    assert ms.get("Accuracy").value == 0.5 and ms.get("Precision").value == 0.5
    ms2 = LLMFairnessEvaluator().add(target=[0, 0], predicted=[0, -1], privileged=[0, 1]).compute()
    assert ms2.get("Precision").value is None and ms2.get("Recall").value is None
    assert ms2.get("Accuracy").value == 1.0
    none = LLMFairnessEvaluator().add(target=[1], predicted=[-2], privileged=[0]).compute()
    assert none.get("Accuracy").value is None


def test_parse_is_exact_after_cleaning():
    assert parse_fairness_answer("<think>L?</think> H ", ("L", "H"))["predicted"] is True
    assert parse_fairness_answer("L", ("L", "H"))["predicted"] is False
    for bad in ("h", "H.", "High", "", "L H"):
        assert parse_fairness_answer(bad, ("L", "H"))["valid"] is False
    assert parse_fairness_answer("0", ("0", "1")) == {
        "valid": True,
        "predicted": False,
        "text": "0",
    }


def test_few_shot_examples_follow_the_seed_rules():
    data = load_fairness_data(TOY)
    suite = FairnessSuite(data, seed=11)
    train = data.train
    cells = [
        [r for r in train if r["sex"] == s and r["outcome"] == o]
        for s, o in (("m", "yes"), ("m", "no"), ("f", "yes"), ("f", "no"))
    ]
    for q in range(3):
        picked = [seeded_pick(c, k * (11 + q)) for k, c in enumerate(cells, 1)]
        expected = [suite.example_text(r) for r in lcg_shuffle(picked, 5 * (11 + q))]
        prompt = _prompt(suite, q, False)
        positions = [prompt.index(e) for e in expected]
        assert positions == sorted(positions)  # the four examples, in the shuffled order
        assert "sex:" not in prompt.split("Person:")[0]  # examples hide the sensitive column
    assert "hours: 41, name: r1, sex: m" in _prompt(suite, 0, False)
    assert "hours: 41, name: r1, sex: f" in _prompt(suite, 0, True)
    assert "id:" not in _prompt(suite, 0, False)  # hidden column


def test_compas_counterfactual_swaps_black_and_white():
    data = load_fairness_data("compas", sample=True)
    suite = FairnessSuite(data)
    for q, row in enumerate(data.test[:6]):
        orig, cf = _prompt(suite, q, False), _prompt(suite, q, True)
        other = {"Black": "White", "White": "Black"}[row["race"]]
        assert f"race: {row['race']}" in orig.splitlines()[-2]
        assert f"race: {other}" in cf.splitlines()[-2]
        o_lines, c_lines = orig.splitlines(), cf.splitlines()
        assert o_lines[:-2] == c_lines[:-2]  # everything but the test row is the same
        assert o_lines[-2].replace(f"race: {row['race']}", f"race: {other}") == c_lines[-2]


def test_pisa_counterfactual_swaps_male_both_ways():
    data = load_fairness_data("pisa", sample=True)
    suite = FairnessSuite(data)
    seen = set()
    for q, row in enumerate(data.test[:8]):
        other = {"0": "1", "1": "0"}[row["male"]]
        assert f"male: {other}" in _prompt(suite, q, True).splitlines()[-2]
        seen.add(row["male"])
    assert seen == {"0", "1"}


def test_dataset_file_errors_name_the_file_and_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(TOY.read_text().replace('label_column = "outcome"\n', ""))
    with pytest.raises(InvalidInputError, match="label_column"):
        load_fairness_data(bad)
    # a split file missing a declared column
    (tmp_path / "toy.txt").write_text((TOY.parent / "toy.txt").read_text())
    (tmp_path / "toy_train.csv").write_text((TOY.parent / "toy_train.csv").read_text())
    (tmp_path / "toy_test.csv").write_text("id,name,sex,outcome\n1,r1,m,yes\n")
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY.read_text())
    with pytest.raises(InvalidInputError) as e:
        load_fairness_data(spec)
    assert "toy_test.csv" in str(e.value) and "hours" in str(e.value)
    # a label value that was not declared
    (tmp_path / "toy_test.csv").write_text("id,name,sex,hours,outcome\n1,r1,m,3,perhaps\n")
    with pytest.raises(InvalidInputError) as e:
        load_fairness_data(spec)
    assert "line 2" in str(e.value) and "outcome" in str(e.value)
    with pytest.raises(InvalidInputError, match="no data"):
        load_fairness_data("pisa")
    with pytest.raises(InvalidInputError, match="unknown dataset"):
        load_fairness_data("nope")


def test_no_valid_answer_leaves_the_change_rate_undefined_not_zero():
    # every compared point has two invalid answers: nothing was measured, so no 0.0
    ev = LLMFairnessEvaluator(group_column="male", groups=["0", "1"])
    ev.add(
        target=[1, 0, 1], predicted=[-1, -1, -1], privileged=[0, 1, 1], counterfactual=[-1, -1, -1]
    )
    rates = list(ev.compute().filter("CounterfactualChangeRate"))
    assert len(rates) == 3
    for rec in rates:
        assert rec.value is None
        assert "no valid answer" in rec.parameters["undefined"]
    overall = [m for m in rates if "group" not in m.parameters][0]
    assert overall.parameters["n"] == 3


def test_change_rate_undefined_in_one_group_only():
    # group "1" has one valid answer (a change), group "0" only invalid pairs
    ev = LLMFairnessEvaluator(group_column="male", groups=["0", "1"])
    ev.add(target=[1, 0, 1], predicted=[-1, 1, 0], privileged=[0, 1, 1], counterfactual=[-1, 0, 0])
    ms = ev.compute()
    assert ms.get("CounterfactualChangeRate", group="0").value is None
    assert ms.get("CounterfactualChangeRate", group="1").value == pytest.approx(0.5)
    overall = [m for m in ms.filter("CounterfactualChangeRate") if "group" not in m.parameters]
    assert overall[0].value == pytest.approx(1 / 3)


def test_an_undefined_change_rate_is_left_out_of_the_average():
    from assay.llm.suites.average import average_fairness

    ev = LLMFairnessEvaluator(groups=["0", "1"])
    ev.add(target=[1, 1], predicted=[-1, -1], privileged=[0, 1], counterfactual=[-1, -1])
    other = LLMFairnessEvaluator(groups=["0", "1"])
    other.add(target=[1, 1], predicted=[1, 0], privileged=[0, 1], counterfactual=[0, 0])
    avg = average_fairness({"a": (1, ev.compute()), "b": (2, other.compute())})
    rec = avg.get("CounterfactualChangeRate")
    assert rec.value == pytest.approx(0.5) and rec.parameters["n"] == 1
