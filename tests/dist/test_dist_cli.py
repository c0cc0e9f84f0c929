"""The CLI takes a Parquet dataset (a directory or a glob) wherever it takes a table, streams
it by row group in process, and gives the records of the same rows in one file.

The ``--scheduler`` runs on a real cluster are in ``test_dist_cluster.py`` (one cluster per
module); here the in-process path and the bad inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()


def table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Binary labels, scores on a 1/1000 grid, groups, and human/system scores on a 1/16 grid
    (so every float sum is exact and streamed sums equal one pass to the bit)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1), 3)
    h = np.clip(np.rint(rng.normal(3, 1, n)), 1, 6)
    return pd.DataFrame(
        {
            "y": y,
            "score": score,
            "yhat": (score >= 0.5).astype(int),
            "g": rng.choice(["a", "b", "c"], n),
            "h": h,
            "m": np.round((h + rng.normal(0, 0.7, n)) * 16) / 16,
        }
    )


def write_dataset(df: pd.DataFrame, folder: Path, parts: int = 3, row_group: int = 400) -> Path:
    """``df`` as ``parts`` Parquet files of ``row_group``-row groups under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[chunk].to_parquet(folder / f"part-{i:03d}.parquet", row_group_size=row_group)
    return folder


COMMANDS = {
    "classification": ["classification", "--y-true", "y", "--y-score", "score",
                       "--score-thresholds", "0.0,0.5", "--pr-curve-max-examples", "2"],
    "fairness": ["fairness", "--label", "y", "--prediction", "yhat", "--group", "g",
                 "--sensitive", "g=a"],
}  # fmt: skip


def _run(args: list[str]) -> tuple[int, str]:
    r = runner.invoke(app, args)
    return r.exit_code, r.stdout + r.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_directory_and_a_glob_give_the_records_of_one_file(tmp_path: Path, command: str) -> None:
    df = table()
    df.to_csv(tmp_path / "all.csv", index=False)
    folder = write_dataset(df, tmp_path / "ds")
    outputs = []
    for data in (tmp_path / "all.csv", folder, f"{folder}/part-*.parquet"):
        code, text = _run([*COMMANDS[command], "--data", str(data)])
        assert code == 0, text
        outputs.append(json.loads(text))
    one, by_dir, by_glob = outputs
    assert len(one) > 5
    # Only the dataset's name in the records may differ; here no record names it.
    assert by_dir == one and by_glob == one


def test_scoring_reads_a_dataset_by_row_group(tmp_path: Path) -> None:
    df = table()
    df.to_csv(tmp_path / "all.csv", index=False)
    folder = write_dataset(df, tmp_path / "ds")
    texts = []
    for data in (tmp_path / "all.csv", folder):
        out_dir = tmp_path / f"out-{len(texts)}"
        args = ["scoring", "--data", str(data), "--human", "h", "--system", "m"]
        code, text = _run([*args, "--out-dir", str(out_dir)])
        assert code == 0, text
        texts.append(json.loads((out_dir / "metrics.json").read_text()))
    assert len(texts[0]) > 10 and texts[1] == texts[0]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--data", "{empty}"], "is a directory with no Parquet file"),
        (["--data", "{tmp}/nothing-*.parquet"], "no file matches the pattern"),
        (["--data", "{ds}", "--scheduler", "localhost"], "expected a scheduler address"),
        (["--groundtruths", "{csv}", "--predictions", "{csv}", "--scheduler", "tcp://x:1"],
         "field 'uid': missing column"),  # long form is joined by uid on the cluster
        (["--data", "{ds}", "--y-true", "nope"], "nope"),
    ],
)  # fmt: skip
def test_bad_datasets_exit_2_with_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    folder = write_dataset(table(200), tmp_path / "ds", row_group=50)
    (tmp_path / "empty").mkdir()
    table(5).to_csv(tmp_path / "t.csv", index=False)
    paths = {"empty": tmp_path / "empty", "tmp": tmp_path, "ds": folder, "csv": tmp_path / "t.csv"}
    filled = [a.format(**paths) for a in args]
    if "--y-true" not in filled:
        filled += ["--y-true", "y", "--y-score", "score"]
    else:
        filled += ["--y-score", "score"]
    code, text = _run(["classification", *filled])
    assert code == 2, text
    assert fragment in text and "Traceback" not in text
    assert len(text.strip().splitlines()) == 1, text


def test_compact_classification_gives_the_same_records(tmp_path: Path) -> None:
    folder = write_dataset(table(), tmp_path / "ds")
    args = [*COMMANDS["classification"], "--data", str(folder)]
    args[args.index("--pr-curve-max-examples") + 1] = "0"
    code, plain = _run(args)
    assert code == 0, plain
    code, compact = _run([*args, "--compact"])
    assert code == 0, compact
    assert compact == plain
    code, text = _run([*args, "--compact", "--where", "uid > 3"])
    assert code == 2 and "--compact" in text and "--where" in text, text
    code, text = _run([*COMMANDS["classification"], "--data", str(folder), "--compact"])
    assert code == 2 and "pr_curve_max_examples" in text.replace("-", "_"), text


def test_long_form_files_may_be_parquet_datasets(tmp_path: Path) -> None:
    """--groundtruths and --predictions join by uid in one process: a dataset is read whole."""
    rng = np.random.default_rng(5)
    n = 500
    gts = pd.DataFrame({"uid": np.arange(n), "value": rng.choice(["cat", "dog", "bird"], n)})
    pds = pd.DataFrame(
        {
            "uid": np.repeat(np.arange(n), 2),
            "value": np.tile(["cat", "dog"], n),
            "score": rng.random(2 * n).round(2),
        }
    )
    gts.to_csv(tmp_path / "g.csv", index=False)
    pds.to_csv(tmp_path / "p.csv", index=False)
    write_dataset(gts, tmp_path / "g", parts=2, row_group=100)
    write_dataset(pds, tmp_path / "p", parts=3, row_group=100)
    base = ["classification", "--score-thresholds", "0.0,0.5"]
    code, one = _run([*base, "--groundtruths", str(tmp_path / "g.csv"), "--predictions",
                      str(tmp_path / "p.csv")])  # fmt: skip
    assert code == 0, one
    code, ds = _run([*base, "--groundtruths", str(tmp_path / "g"), "--predictions",
                     f"{tmp_path}/p/*.parquet"])  # fmt: skip
    assert code == 0, ds
    assert json.loads(ds) == json.loads(one) and len(json.loads(one)) > 10
