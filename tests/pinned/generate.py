"""Write ``records/<case>.json`` for every pinned case (or the cases named on the command line).

Run it only on a commit whose records are known to be correct (see the docstring of
tests/test_pinned_records.py), from the repository root:

    .venv/bin/python tests/pinned/generate.py            # every case
    .venv/bin/python tests/pinned/generate.py NAME ...   # only these
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for ``pinned``

from pinned.cases import CASES, INPUTS, RECORDS, Ctx  # noqa: E402
from pinned.compare import dumps  # noqa: E402


def run_case(name: str, tmp: Path) -> list:
    """One case's records, in a fresh scratch folder with its own assay home."""
    os.environ["ASSAY_HOME"] = str(tmp / "assay-home")
    for var in ("ASSAY_DATABASE_URL", "ASSAY_LLM_CACHE", "ASSAY_MODEL"):
        os.environ.pop(var, None)
    return CASES[name].run(Ctx(INPUTS, tmp))


def main(names: list[str]) -> None:
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        raise SystemExit(f"unknown cases: {unknown}")
    RECORDS.mkdir(exist_ok=True)
    for name in names or sorted(CASES):
        with tempfile.TemporaryDirectory() as tmp:
            records = run_case(name, Path(tmp))
        (RECORDS / f"{name}.json").write_text(dumps(records), encoding="utf-8")
        print(f"{name}: {len(records)} records")


if __name__ == "__main__":
    main(sys.argv[1:])
