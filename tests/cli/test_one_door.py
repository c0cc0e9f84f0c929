"""Every option refusal reads the same (issue 19, "one door"): exit 2 and one line
``error: <option>: <reason>``, through ``assay._validation`` and ``InvalidInputError``, where
these options used to print typer's multi-line "Invalid value" box."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

DET = ["detection", "--groundtruths", "g.json", "--predictions", "p.json"]
SEG = ["segmentation", "--groundtruths", "g.jsonl", "--predictions", "p.jsonl"]
CASES = [
    (["text", "--data", "x.jsonl", "--bleu-weights", "0.5,x"],
     "--bleu-weights: expected comma-separated numbers, got '0.5,x'"),
    ([*DET, "--metrics", "APX"], "--metrics: unknown ['APX']; choose from"),
    ([*DET, "--iou-type", "mask"], "--iou-type: must be bbox or segm, got 'mask'"),
    ([*DET, "--matching", "hungarian"], "--matching: must be coco or valor, got 'hungarian'"),
    ([*DET, "--max-detections", "-3"], "--max-detections: must be >= 1 or 'all' (every detection)"),
    ([*DET, "--iou-thresholds", "0.5,2"], "--iou-thresholds: IoU thresholds must be numbers in"),
    ([*SEG, "--metrics", "IoUX"], "--metrics: unknown ['IoUX']; choose from"),
    ([*SEG, "--zero-division", "nan"], "--zero-division: must be a finite number, got nan"),
    (["scoring", "--out-dir", "o"], "--data: give --data, --human and --system"),
]  # fmt: skip


@pytest.mark.parametrize("argv,line", CASES, ids=[" ".join(c[0][:1] + c[0][-2:-1]) for c in CASES])
def test_option_refusals_are_one_line(tmp_path, monkeypatch, argv, line):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.jsonl").write_text('{"uid": "1", "prediction": "a", "groundtruth": "a"}\n')
    for name in ("g.jsonl", "p.jsonl", "g.json", "p.json"):
        (tmp_path / name).write_text("")
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {line}"), res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "g.json",
        "g.jsonl",
        "p.json",
        "p.jsonl",
        "x.jsonl",
    ]


def test_values_from_numpy_are_shown_as_written(tmp_path):
    """No ``np.str_('fox')`` in a message: values are shown as the user wrote them."""
    data = tmp_path / "w.csv"
    data.write_text("y,cat,dog\nfox,0.5,0.5\n")
    argv = ["classification", "--data", str(data), "--y-true", "y", "--y-score-columns", "cat,dog"]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2 and "label 'fox' has no score column" in res.output, res.output
    assert "np." not in res.output


def test_mixed_column_values_are_shown_as_written():
    import numpy as np
    import pytest

    from assay.errors import InvalidInputError
    from assay.fairness.batch import kind_and_values

    a = np.array([np.str_("fox"), np.int64(3)], dtype=object)
    with pytest.raises(InvalidInputError) as e:
        kind_and_values(a, source="t.csv", field="group")
    assert "got 3 after 'fox'" in str(e.value) and "np." not in str(e.value)
