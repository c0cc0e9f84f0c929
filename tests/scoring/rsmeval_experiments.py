"""Generated rsmeval experiments for test_rsmeval_vs_rsmtool.py: the keys that filter responses
(flag columns, candidates), min_n_per_group, and the tsv/xlsx output formats.

rsmeval 12 crashes when it excludes candidates *and* responses for their scores (the
exclusion lists are numbered from 0 before being joined), so the experiment with candidates
below the minimum has no other exclusion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def frame(seed: int, n: int, second: bool) -> pd.DataFrame:
    """Responses with a human score 1..5, a machine score (some beyond 1..5), L1 and gender."""
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1.1, n)
    df = pd.DataFrame(
        {
            "resp": [f"r{i:04d}" for i in range(n)],
            "human": np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 5).astype(object),
            "machine": t * 1.1 + rng.normal(0, 0.6, n) - 0.2,
            "L1": rng.choice(["en", "fr", "de", "zh"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "gender": rng.choice(["F", "M"], n),
        }
    )
    if second:
        h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 5).astype(object)
        h2[rng.random(n) > 0.4] = np.nan
        df["human2"] = h2
    return df


def config(eid: str, predictions: str, *, second: bool, **extra: object) -> dict:
    """An rsmeval configuration over a :func:`frame` file, with ``extra`` keys."""
    cfg = {
        "experiment_id": eid,
        "predictions_file": predictions,
        "system_score_column": "machine",
        "human_score_column": "human",
        "id_column": "resp",
        "trim_min": 1,
        "trim_max": 5,
    }
    if second:
        cfg["second_human_score_column"] = "human2"
    return {**cfg, **extra}


def _flags_and_candidates(tmp: Path) -> dict:
    """Numeric and text flags with lists of allowed values (numbers match their text, "1.0"
    matches 1), candidates of 1..5 responses with a minimum of 3, min_n_per_group per
    column, a column named ``length`` (renamed ``##length##``), TSV output."""
    rng = np.random.default_rng(11)
    d = frame(7, 420, second=True)
    d["fnum"] = rng.choice([0, 1, 2, 3], len(d), p=[0.05, 0.8, 0.1, 0.05])
    d["fstr"] = rng.choice(["ok", "bad", "1.0", "1"], len(d), p=[0.75, 0.1, 0.1, 0.05])
    sizes = rng.integers(1, 6, 200)
    d["cand"] = np.repeat([f"c{i:03d}" for i in range(200)], sizes)[: len(d)]
    d["length"] = rng.integers(20, 200, len(d))
    d.loc[[20, 21], "human2"] = 0  # zero second score: missing
    d.to_csv(tmp / "d.csv", index=False)
    return config(
        "expD",
        "d.csv",
        second=True,
        subgroups=["L1", "gender"],
        flag_column={"fnum": [1, "2"], "fstr": ["ok", 1]},
        candidate_column="cand",
        min_items_per_candidate=3,
        min_n_per_group={"L1": 60, "gender": 5},
        file_format="tsv",
    )


def _single_flag_xlsx(tmp: Path) -> dict:
    """A single allowed value (not a list) on a float column with empty cells, candidates
    without a minimum, an int min_n_per_group, scores excluded, a key rsmeval ignores
    (``flag_column_test``), XLSX output with ids that start like a formula: assay writes them
    as text cells; rsmeval writes ``=...`` as formula cells, so those are only on responses
    the flag sets aside (in kept rows they would break rsmeval's own fairness tables, which
    its report computes from its re-read xlsx files: docs/scoring.md)."""
    rng = np.random.default_rng(12)
    e = frame(8, 360, second=True)
    batch = rng.choice([1.0, 2.0, np.nan], len(e), p=[0.15, 0.8, 0.05])
    e["batch"] = batch
    flagged = np.flatnonzero(batch != 2.0)[:10]
    kept = np.flatnonzero(batch == 2.0)[40:70]
    e.loc[flagged, "resp"] = "=" + e.loc[flagged, "resp"]
    e.loc[kept, "resp"] = [f"{'@+-'[k % 3]}{r}" for k, r in enumerate(e.loc[kept, "resp"])]
    e["cand"] = [f"k{i // 4}" for i in range(len(e))]
    e.loc[[3, 8], "human"] = "TD"
    e.loc[[5, 9, 17], "human"] = 0
    e.loc[[30, 31], "L1"] = ""
    e.to_csv(tmp / "e.csv", index=False)
    return config(
        "expE",
        "e.csv",
        second=True,
        subgroups=["L1"],
        scale_with="asis",
        flag_column={"batch": 2.0},
        flag_column_test={"batch": [1]},
        candidate_column="cand",
        min_n_per_group=10,
        file_format="xlsx",
    )


def _nothing_excluded(tmp: Path) -> dict:
    """Every response kept: a flag every row passes, every candidate at the minimum, the
    subgroups as one comma-separated text (rsmeval splits it)."""
    f = frame(9, 240, second=False)
    f["cand"] = [f"p{i // 2}" for i in range(len(f))]
    f["task"] = "A"
    f.to_csv(tmp / "f.csv", index=False)
    return config(
        "expF",
        "f.csv",
        second=False,
        subgroups="L1, gender",
        flag_column={"task": ["A"]},
        candidate_column="cand",
        min_items_per_candidate=2,
    )


def filter_experiments(tmp: Path) -> list[tuple[str, dict]]:
    """(name, configuration) for the experiments above; their data written into ``tmp``."""
    return [
        ("d", _flags_and_candidates(tmp)),
        ("e", _single_flag_xlsx(tmp)),
        ("f", _nothing_excluded(tmp)),
    ]
