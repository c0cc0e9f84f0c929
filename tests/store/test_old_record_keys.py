"""A run stored by assay 0.1 (interval keys written twice, under the old and the new name)
loads, exports and compares as one of 0.2.0 (``assay.store.record_keys``); its rows are
never rewritten by a read."""

from __future__ import annotations

import sqlite3

import pytest

from assay.results import Metric, MetricSet, undefined
from assay.store import Store, compare
from assay.store.record_keys import current_parameters


def _run(old: bool, shift: float = 0.0) -> MetricSet:
    """Records as 0.1 (``old``) or 0.2.0 wrote them; ``shift`` moves every value."""

    def keys(new: dict, removed: dict) -> dict:
        return {**removed, **new} if old else new

    interval = {"ci_low": 0.4, "ci_high": 0.6, "confidence_level": 0.9, "ci_method": "t"}
    boot = {"ci_method": "bootstrap", "num_bootstrap": 50, "seed": 2}
    return MetricSet(
        [
            Metric(
                "BLEU", 0.5 + shift, keys({"aggregate": "mean", **interval}, {"confidence": 0.9})
            ),
            Metric(
                "BradleyTerryRating",
                1010.0 + shift,
                keys({"model": "m1", "num_bootstrap": 30, "seed": 0}, {"bootstrap_samples": 30}),
            ),
            Metric(
                "Ci",
                {"lower": 0.4 + shift, "upper": 0.6},
                keys({"cluster": None, **interval}, {"level": 0.9, "method": "t"}),
            ),
            Metric(
                "Ci",
                {"lower": 0.3 + shift, "upper": 0.7},
                keys(
                    {"cluster": "doc", **interval, **boot, "confidence_level": 0.8},
                    {"level": 0.8, "method": "bootstrap", "num_samples": 50},
                ),
            ),
            # an undefined interval: 0.1 wrote only the factory's names
            undefined("CiWilson", "requires at least 1 score, got 0", cluster=None, level=0.95)
            if old
            else undefined(
                "CiWilson",
                "requires at least 1 score, got 0",
                cluster=None,
                confidence_level=0.95,
                ci_method="wilson",
            ),
            # other types' level and method are what they measure: kept
            Metric("KrippendorffAlpha", 0.7 + shift, {"level": "ordinal"}),
            Metric("DemographicParityDifference", 0.1 + shift, {"method": "to_overall"}),
        ]
    )


def test_a_0_1_run_reads_as_a_0_2_0_run(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with Store(url) as st:
        old = st.save(_run(old=True), kind="stats", dataset="d", model="m")
        new = st.save(_run(old=False, shift=0.01), kind="stats", dataset="d", model="m")
        read_old, read_new = st.get(old).metrics, st.get(new).metrics
        assert [m.parameters for m in read_old] == [m.parameters for m in read_new]
        assert read_new.to_list() == _run(old=False, shift=0.01).to_list()  # 0.2.0: as written
        df = compare([old, new], store=st)
    # every record matched across the versions, each difference the shift
    assert len(df) == 5  # the scalar records (BLEU, rating, CiWilson undefined, alpha, parity)
    assert df[f"value_{old}"].notna().sum() == 4 and df[f"value_{new}"].notna().sum() == 4
    assert df[f"diff_{new}"].dropna().tolist() == pytest.approx([0.01] * 4)
    # reading changed nothing in the store: the 0.1 rows keep their keys
    with sqlite3.connect(tmp_path / "old.db") as db:
        rows = [
            r[0]
            for r in db.execute(
                "SELECT parameters FROM assay_metrics WHERE evaluation_id = ? ORDER BY position",
                (old,),
            )
        ]
    assert '"confidence": 0.9' in rows[0] and '"bootstrap_samples": 30' in rows[1]


def test_current_parameters_renames_only_what_0_1_wrote_twice() -> None:
    assert current_parameters("Accuracy", {"n": 3}) == {"n": 3}
    p = {"level": 0.9, "method": "bootstrap", "num_samples": 20, "seed": 1}
    assert current_parameters("Ci", p) == {
        "confidence_level": 0.9,
        "ci_method": "bootstrap",
        "num_bootstrap": 20,
        "seed": 1,
    }
    assert current_parameters("CiWilson", {"level": 0.8}) == {
        "confidence_level": 0.8,
        "ci_method": "wilson",
    }
    assert current_parameters("KrippendorffAlpha", {"level": "interval"}) == {"level": "interval"}
    # where both were written the new key's value stays (0.1 wrote the same number twice)
    both = {"confidence": 0.9, "confidence_level": 0.9, "n": 4}
    assert current_parameters("ROUGE", both) == {"confidence_level": 0.9, "n": 4}
