"""Pinned records: every domain's records, with and without intervals, clusters and slices.

Each case of ``tests/pinned/cases.py`` (an API call or a CLI command over the small files in
``tests/pinned/inputs/``; LLM cases answered by a scripted loopback model) is run again and
its records compared with ``tests/pinned/records/<case>.json``: the same records (type and
parameters), numbers within 1e-9 relative or absolute, ``None`` and NaN in the same places
(``tests/pinned/compare.py``; the order of the records is not compared). A failure names the
case, the record and the field.

Coverage (146 cases): classification (binary, multiclass, long form; bootstrap, Wilson, DeLong;
clusters, slices, filters, examples), fairness (definitions and their mean, group columns,
crossed groups, control columns, weights), detection (tiny COCO bbox and segm, JSONL; slices,
clusters, filters, valor matching), segmentation, scoring (the records, SMD options, rsmeval's
tables cell by cell), score statistics (Inspect-style metrics and reducers, clustered stderr,
panels, aggregates, frames), text (ROUGE/BLEU with their default interval), judged text
metrics, the CAT / LLM fairness / language suites, pairwise judging and scoring (the DevBench
record file), ``llm average``; every domain under each of bootstrap, wilson, t, delong and
bca (a method a metric does not offer falls back to the bootstrap, pinned as it is); each
evaluator fed in batches, merged and rebuilt from its state; Parquet streamed by row group;
states reduced by Dask. Runtime: about 37 CPU seconds (``-n 2``).

The pins were generated on commit 42adf69 (main before the one-engine refactor, issue 29).
They hold the records as that commit computed them: when a change makes this test fail, the
change is wrong, not the pin, unless the change is *meant* to change a record (then say so
in its commit and regenerate that case alone).

Regenerate only on a commit whose records are known to be correct, from the repository root:

    .venv/bin/python tests/pinned/generate.py             # every case
    .venv/bin/python tests/pinned/generate.py CASE ...    # only these cases

and review ``git diff tests/pinned/records``. The inputs are committed files
(``tests/pinned/make_inputs.py`` drew them once from fixed seeds); never redraw them without
regenerating every pin on a known-good commit.

Nothing in the records varies between runs (no timestamps, run ids, durations or paths
reach them; every bootstrap is seeded; ``bootstrap_stderr``, unseeded by default, gets a
seed), so no field is excluded from the comparison.
"""

from __future__ import annotations

import json

import pytest

from pinned.cases import CASES, INPUTS, RECORDS, Ctx
from pinned.compare import differences


@pytest.mark.parametrize("name", sorted(CASES))
def test_records_are_pinned(name: str, tmp_path) -> None:
    path = RECORDS / f"{name}.json"
    assert path.exists(), f"{name}: no pinned file {path} (tests/pinned/generate.py {name})"
    pinned = json.loads(path.read_text(encoding="utf-8"))
    assert pinned, f"{name}: the pinned file holds no records"
    new = CASES[name].run(Ctx(INPUTS, tmp_path))
    diffs = differences(pinned, new)
    if diffs:
        pytest.fail(f"case {name}: records differ from the pins:\n" + "\n".join(diffs), False)


def test_every_pinned_file_has_a_case() -> None:
    stale = sorted(p.stem for p in RECORDS.glob("*.json") if p.stem not in CASES)
    assert not stale, f"pinned files without a case (delete them or restore the case): {stale}"


def test_the_comparison_names_what_differs() -> None:
    rec = {"type": "F1", "value": 0.5, "parameters": {"label": "a", "ci_low": 0.25, "n": 3}}
    same = [rec, {**rec, "parameters": {**rec["parameters"], "label": "b"}}]
    assert differences(same, list(reversed(same))) == []  # order is not compared
    near = {
        **rec,
        "value": 0.5 + 4e-10,
        "parameters": {**rec["parameters"], "ci_low": 0.25 * (1 + 5e-10)},
    }
    assert differences([rec], [near]) == []  # within 1e-9
    moved = {**rec, "parameters": {**rec["parameters"], "ci_low": 0.2500001}}
    (line,) = differences([rec], [moved])
    assert line.startswith("F1 ") and "record.parameters.ci_low: 0.25 pinned, 0.2500001 new" in line
    extra = {**rec, "parameters": {**rec["parameters"], "cluster": "doc"}}
    assert any("record missing" in d for d in differences([rec], [extra]))
    assert any("record added" in d and "cluster" in d for d in differences([rec], [extra]))
    assert differences([{**rec, "value": None}], [rec]) == [
        f"F1 {json.dumps(rec['parameters'], sort_keys=True)}: record.value: None pinned, 0.5 new"
    ]
    nan = {**rec, "value": float("nan")}
    assert differences([nan], [nan]) == []
    assert differences([nan], [rec]) != []
    assert differences([{**rec, "value": {"tp": 1}}], [{**rec, "value": {"tp": 2}}]) != []
