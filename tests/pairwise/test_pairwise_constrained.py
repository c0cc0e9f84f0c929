"""Pairwise judging on the real embedded model (SmolLM2-135M on llama.cpp) with the choice
grammar: every reply ends in ``Choice: X`` with X among the offered options."""

from __future__ import annotations

import pytest

from assay.llm import RunOptions, evaluate, load_model
from assay.llm.pairwise.task import PairwiseTask
from assay.testing.pairwise import make_table

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("nopt", [2, 4])
def test_every_choice_is_extracted_on_the_embedded_model(tmp_path, nopt) -> None:
    table = make_table(["quality"] * 3, {"m1": [3, 1, 4], "ref": [2, 2, 2]})
    task = PairwiseTask(
        table, models=["m1"], reference_model="ref", nopt=nopt, max_tokens=48, num_bootstrap=20
    )
    run = evaluate(task, load_model("embedded"), RunOptions(cache=tmp_path / "cache.sqlite"))
    assert run.parameters["constraint"] == "grammar"
    assert all("grammar" in c.item.params for c in run.calls)
    assert len(run.calls) == run.paid_calls == 6  # 3 questions, both orders, one call each
    assert all(c.parsed in "ABCD"[:nopt] for c in run.calls)
    assert task.rows is not None and list(task.rows["status"]) == ["ok"] * 6
    rate = run.metrics.get("ExtractionRate")
    assert rate.value == 1.0 and rate.parameters["extracted"] == 6
