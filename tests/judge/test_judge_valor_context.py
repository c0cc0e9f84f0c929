"""Context precision and recall against valor-lite's own functions, verdict for verdict.

Both libraries get the same verdicts for each (ground truth, context) pair: assay from the
scripted judge on the loopback server, valor-lite from a client callable reading the ground
truth out of its prompt. With several ground truths both pool the precision verdicts (a
context is useful when any ground truth finds it useful); with none, precision is 0 in both.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judgekit import verdicts

from assay.llm.judge import Datum, judge

computation = pytest.importorskip("valor_lite.text_generation.computation")


def _grid(draw_rows):
    return {f"GT{k}": row for k, row in enumerate(draw_rows)}


class ValorClient:
    """valor-lite's ClientWrapper: a callable from messages to the reply text."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls = 0

    def __call__(self, messages: list[dict[str, str]]) -> str:
        self.calls += 1
        (gt,) = re.findall(r"Ground Truth:\n(GT\d+)", messages[-1]["content"])
        return json.dumps({"verdicts": [{"analysis": "a", "verdict": v} for v in self.table[gt]]})


matrices = st.integers(1, 5).flatmap(
    lambda n: st.lists(st.lists(st.sampled_from(["yes", "no"]), min_size=n, max_size=n), max_size=4)
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=matrices, n_extra=st.integers(1, 5))
def test_context_precision_equals_valor_lite(scripted, rows, n_extra) -> None:
    scripted.reset()
    n = len(rows[0]) if rows else n_extra
    table = _grid(rows)
    contexts = [f"context {i}" for i in range(n)]
    scripted.rules["context_precision"] = lambda text, attempt: verdicts(
        *table[re.findall(r"Reference answer: (GT\d+)", text)[-1]]
    )
    d = Datum("u", "Q?", "p", tuple(table), tuple(contexts))
    ours = judge([d], ["context_precision"], model=scripted.server.spec(), cache=None)
    client = ValorClient(table)
    theirs = computation.calculate_context_precision(
        client=client,
        system_prompt="",
        query="Q?",
        predicted_context=contexts,
        groundtruth_context=list(table),
    )
    assert ours.metrics.get("ContextPrecision", datum_uid="u").value == pytest.approx(
        theirs, abs=1e-12
    )
    # the same calls: one per ground truth (none without one)
    assert scripted.server.calls == client.calls == len(table)


def test_no_ground_truth_precision_and_recall_against_valor_lite(scripted) -> None:
    contexts = ["c1", "c2"]
    res = judge(
        [Datum("u", "Q?", "p", (), tuple(contexts))],
        ["context_precision", "context_recall"],
        model=scripted.server.spec(),
        cache=None,
    )
    client = ValorClient({})
    kw = {"client": client, "system_prompt": "", "predicted_context": contexts}
    vp = computation.calculate_context_precision(query="Q?", groundtruth_context=[], **kw)
    vr = computation.calculate_context_recall(groundtruth_context=[], **kw)
    assert res.metrics.get("ContextPrecision", datum_uid="u").value == vp == 0.0
    # the deliberate difference (docs/text.md): valor-lite gives recall 0.0, assay null
    recall = res.metrics.get("ContextRecall", datum_uid="u")
    assert vr == 0.0 and recall.value is None
    assert recall.parameters["undefined"] == "the datum has no ground truth"
    assert scripted.server.calls == client.calls == 0
