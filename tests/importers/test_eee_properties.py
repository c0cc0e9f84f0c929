"""Every Eval Ever round trip as a property: any run's numeric records come back exactly
(type, value, parameters), and its items' units and scores too."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.importers.eee import eee_run
from assay.importers.eee_write import every_eval_ever_files

_names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**31), 2**31), _names,
    st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
_records = st.lists(
    st.fixed_dictionaries({
        "type": st.sampled_from(["Mean", "Accuracy", "Stderr", "QWK", "AP"]),
        "value": st.floats(allow_nan=False, allow_infinity=False),
        "parameters": st.dictionaries(_names, _scalars, max_size=4),
    }),
    max_size=6,
)  # fmt: skip
_items = st.lists(
    st.fixed_dictionaries({
        "item_id": _names,
        "epoch": st.integers(1, 3),
        "ok": st.booleans(),
        "score": st.one_of(st.sampled_from(["C", "I", "P"]), st.floats(0, 1), st.none()),
    }),
    max_size=5,
    unique_by=lambda d: (d["item_id"], d["epoch"]),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(records=_records, items=_items, model=st.one_of(st.none(), _names))
def test_round_trip(records, items, model):
    run = {
        "id": 3, "created": "2026-01-01T00:00:00+00:00", "kind": "stats", "dataset": "d",
        "model": model, "parameters": {"a": 1}, "assay_version": "0",
        "metrics": records,
        "items": [
            {"item_id": i["item_id"], "prompt": "p", "ok": i["ok"], "raw_answer": "x",
             "parsed": {"s": i["score"] if i["ok"] else None}, "params": {"epoch": i["epoch"]},
             "error": None if i["ok"] else "boom"}
            for i in items
        ],
    }  # fmt: skip
    if not records and not items:
        return
    files = every_eval_ever_files(run, retrieved="1")
    with tempfile.TemporaryDirectory() as d:
        agg = Path(d) / files.aggregate_name
        agg.write_text(json.dumps(files.aggregate))
        if files.samples:
            (Path(d) / files.samples_name).write_text(files.samples_text())
        back = eee_run(agg)
    assert back.metrics.to_list() == records
    assert (back.kind, back.dataset, back.model) == ("stats", "d", model or None)
    got = {(i["item_id"], i["params"]["epoch"]): (i["ok"], i["parsed"]) for i in back.items}
    want = {
        (i["item_id"], i["epoch"]): (i["ok"], {"s": i["score"] if i["ok"] else None}) for i in items
    }
    assert got == want
