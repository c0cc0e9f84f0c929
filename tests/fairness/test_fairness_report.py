"""The table view of fairness records shows each record's number in its grid cell."""

from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from assay.fairness import FairnessEvaluator, PrivilegedGroup
from assay.fairness.report import fairness_tables


def _render(ms) -> list[str]:
    console = Console(width=160, file=io.StringIO(), record=True)
    console.print(*fairness_tables(ms))
    return console.export_text().splitlines()


def _row(lines: list[str], first_cell: str) -> list[str]:
    (line,) = [ln for ln in lines if ln.startswith(f"│ {first_cell} ")]
    return [c.strip() for c in line.strip("│").split("│")]


def test_by_group_grid_shows_every_rate_and_size() -> None:
    rng = np.random.default_rng(3)
    n = 400
    y, yhat = rng.integers(0, 2, n), rng.integers(0, 2, n)
    sex, race = rng.choice(["F", "M"], n), rng.choice(["a", "b"], n)
    y[(sex == "M") & (race == "b")] = 0  # no positives there: TPR undefined, shown as "-"
    ms = (
        FairnessEvaluator(group_columns=[("sex", "race")])
        .add_arrays(y, yhat, {"sex": sex, "race": race}, sample_weight=rng.uniform(0.5, 2, n))
        .compute()
    )
    lines = _render(ms)
    assert "by group: sex × race (weighted)" in "\n".join(lines)
    checked = 0
    for counts in ms.filter("GroupCounts"):
        group = counts.parameters["group"]
        cells = _row(lines, ", ".join(group))
        assert cells[1] == str(sum(counts.value[k] for k in ("tp", "fp", "fn", "tn")))
        for i, rate in enumerate(["SelectionRate", "TruePositiveRate", "FalsePositiveRate"]):
            v = ms.get(rate, group=group).value
            assert cells[2 + i] == ("-" if v is None else f"{v:.4f}")
            checked += 1
    assert checked == 12 and ms.get("TruePositiveRate", group=["M", "b"]).value is None
    dpd = ms.get("DemographicParityDifference").value
    assert f"difference {dpd:.4f}" in "\n".join(lines)


def test_definitions_grid_has_a_row_per_definition_and_the_mean() -> None:
    rng = np.random.default_rng(4)
    n = 300
    groups = [PrivilegedGroup("sex", values=["F"]), PrivilegedGroup("age", 40.0)]
    data = {"sex": rng.choice(["F", "M"], n), "age": rng.integers(18, 80, n)}
    ev = FairnessEvaluator(groups).add_arrays(rng.integers(0, 2, n), rng.integers(0, 2, n), data)
    ms = ev.compute()
    lines = _render(ms)
    for g in groups:
        cells = _row(lines, g.describe())
        spd = ms.get("StatisticalParityDifference", group_column=g.group_column).value
        assert cells[1] == f"{spd:.4f}"
    mean = [m for m in ms.filter("DisparateImpact") if "average_over" in m.parameters][0]
    assert _row(lines, "mean over 2 definitions")[2] == f"{mean.value:.4f}"
    want = [f"{ms.get(t, positive_label=1).value:.4f}" for t in ("Accuracy", "Precision", "Recall")]
    rows = [[c.strip() for c in ln.strip("│ ").split("│")] for ln in lines if ln.startswith("│")]
    assert want in rows
