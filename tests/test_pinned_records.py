"""Pinned records: every domain's records, with and without intervals, clusters and slices.

Each case of ``tests/pinned/cases.py`` (an API call or a CLI command over the small files in
``tests/pinned/inputs/``; LLM cases answered by a scripted loopback model) is run again and
its records compared with ``tests/pinned/records/<case>.json``: the same records (type and
parameters), numbers within 1e-9 relative or absolute, ``None`` and NaN in the same places
(``tests/pinned/compare.py``; the order of the records is not compared). A failure names the
case, the record and the field.

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
    assert not diffs, f"case {name}: records differ from the pins:\n" + "\n".join(diffs)


def test_every_pinned_file_has_a_case() -> None:
    stale = sorted(p.stem for p in RECORDS.glob("*.json") if p.stem not in CASES)
    assert not stale, f"pinned files without a case (delete them or restore the case): {stale}"
