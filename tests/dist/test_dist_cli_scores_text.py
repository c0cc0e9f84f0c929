"""``assay stats --scores`` and ``assay text --data`` take a Parquet dataset (a directory or a
glob), stream it by row group in process, and give the records of the same rows in one JSONL
(stats) or CSV (text) file. The ``--scheduler`` runs are in ``test_dist_cluster.py``.
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

WORDS = "the cat sat on a mat dog ran far away quick brown fox".split()


def score_rows(n: int = 600, seed: int = 0) -> list[dict]:
    """Sample scores over two epochs: values on a 1/16 grid, failed (null) scores, a topic,
    and samples without an epoch (default 1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        value = None if i % 37 == 0 else float(np.round(rng.random() * 16) / 16)
        row = {"value": value, "sample_id": i // 2, "epoch": i % 2 + 1}
        row["sample_metadata"] = {"topic": ["a", "b", "c"][i % 3]}
        rows.append(row)
    meta = {"topic": "a"}
    rows += [
        {"value": float(i % 2), "sample_id": 10_000 + i, "sample_metadata": meta} for i in range(20)
    ]
    return rows


def text_frame(n: int = 500, seed: int = 0, uids: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "prediction": [" ".join(rng.choice(WORDS, 6)) for _ in range(n)],
            "groundtruth": [" ".join(rng.choice(WORDS, 7)) for _ in range(n)],
        }
    )
    if uids:
        df.insert(0, "uid", [f"u{i}" for i in range(n)])
    return df


def write_dataset(df: pd.DataFrame, folder: Path, parts: int = 3, row_group: int = 70) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[chunk].to_parquet(folder / f"part-{i:03d}.parquet", row_group_size=row_group)
    return folder


def write_jsonl(rows: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


STATS = ["stats", "--metric", "mean", "--metric", "stderr", "--metric",
         'grouped(mean(), "topic")', "--reducer", "mean", "--reducer", "max"]  # fmt: skip
TEXT = ["text", "--metrics", "rouge,bleu"]


def run(args: list[str]) -> tuple[int, str]:
    r = runner.invoke(app, args)
    return r.exit_code, r.stdout + r.stderr


def stats_inputs(tmp_path: Path) -> list[str]:
    rows = score_rows()
    one = write_jsonl(rows, tmp_path / "scores.jsonl")
    folder = write_dataset(pd.DataFrame(rows), tmp_path / "sds")
    return [str(one), str(folder), f"{folder}/part-*.parquet"]


def text_inputs(tmp_path: Path, uids: bool = True) -> list[str]:
    df = text_frame(uids=uids)
    df.to_csv(tmp_path / "text.csv", index=False)
    folder = write_dataset(df, tmp_path / "tds")
    return [str(tmp_path / "text.csv"), str(folder), f"{folder}/part-*.parquet"]


def outputs(base: list[str], option: str, inputs: list[str], extra: list[str] = []) -> list:
    got = []
    for data in inputs:
        code, text = run([*base, option, data, *extra])
        assert code == 0, text
        got.append(text)
    return got


def test_stats_directory_and_glob_give_the_records_of_one_jsonl_file(tmp_path: Path) -> None:
    one, by_dir, by_glob = outputs(STATS, "--scores", stats_inputs(tmp_path))
    records = json.loads(one)
    assert len(records) >= 6 and {r["type"] for r in records} >= {"Mean", "Stderr"}
    assert by_dir == one and by_glob == one  # byte-identical JSON


@pytest.mark.parametrize("uids", [True, False], ids=["uids", "numbered"])
def test_text_directory_and_glob_give_the_records_of_one_csv_file(
    tmp_path: Path, uids: bool
) -> None:
    """Without a uid column the rows are numbered by their position in the whole dataset,
    not in their row group."""
    one, by_dir, by_glob = outputs(TEXT, "--data", text_inputs(tmp_path, uids))
    records = json.loads(one)
    assert len(records) > 1000
    assert records[499]["parameters"]["datum_uid"] == ("u499" if uids else "499")
    assert by_dir == one and by_glob == one


def test_text_duplicate_uids_across_files_are_refused(tmp_path: Path) -> None:
    df = text_frame(100)
    df.loc[80, "uid"] = "u3"  # the first file has u3, the last file its copy
    folder = write_dataset(df, tmp_path / "ds", row_group=10)
    code, text = run([*TEXT, "--data", str(folder)])
    assert code == 2 and "duplicate uid" in text and "u3" in text, text
    assert len(text.strip().splitlines()) == 1


def _bad_cases(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    rows = score_rows(40)
    good = write_dataset(pd.DataFrame(rows), tmp_path / "good")
    no_value = write_dataset(pd.DataFrame(rows).drop(columns="value"), tmp_path / "nv")
    no_pred = write_dataset(text_frame(40).drop(columns="prediction"), tmp_path / "np")
    (tmp_path / "empty").mkdir()
    no_rows = write_dataset(pd.DataFrame(rows).iloc[:0], tmp_path / "nr", parts=1)
    no_text = write_dataset(text_frame(5).iloc[:0], tmp_path / "nt", parts=1)
    glob = f"{tmp_path}/nothing-*.parquet"
    judged = ["text", "--metrics", "rouge,faithfulness", "--data", str(tmp_path / "x.csv")]
    return {
        "stats-empty-glob": (["stats", "--scores", glob], "no file matches the pattern"),
        "stats-empty-dir": (["stats", "--scores", str(tmp_path / "empty")], "no Parquet file"),
        "stats-missing-value": (["stats", "--scores", str(no_value)], "value"),
        "stats-bad-scheduler": (
            ["stats", "--scores", str(good), "--scheduler", "localhost"],
            "expected a scheduler address",
        ),
        "stats-no-rows": (["stats", "--scores", str(no_rows)], "the dataset holds no scores"),
        "text-no-rows": ([*TEXT, "--data", str(no_text)], "no rows"),
        "text-empty-glob": ([*TEXT, "--data", glob], "no file matches the pattern"),
        "text-missing-prediction": (
            [*TEXT, "--data", str(no_pred)],
            "metric rouge needs the 'prediction' column",
        ),
        "text-judge-with-scheduler": (
            [*judged, "--scheduler", "tcp://127.0.0.1:9"],
            "judge metrics (faithfulness) run through the LLM driver",
        ),
    }


CASES = [
    "stats-empty-glob",
    "stats-empty-dir",
    "stats-missing-value",
    "stats-bad-scheduler",
    "stats-no-rows",
    "text-no-rows",
    "text-empty-glob",
    "text-missing-prediction",
    "text-judge-with-scheduler",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_datasets_exit_2_with_one_line(tmp_path: Path, case: str) -> None:
    args, fragment = _bad_cases(tmp_path)[case]
    code, text = run(args)
    assert code == 2, text
    assert fragment in text and "Traceback" not in text, text
    assert len(text.strip().splitlines()) == 1, text


def test_judge_metrics_read_a_dataset_whole_in_process(tmp_path: Path) -> None:
    """Judge metrics keep their path (one read, the LLM driver): a dry run over a dataset
    prints the same calls as over the CSV file."""
    df = text_frame(6)
    df["query"] = "what?"
    df["context"] = '["ctx"]'
    df.to_csv(tmp_path / "t.csv", index=False)
    folder = write_dataset(df, tmp_path / "ds", parts=2, row_group=2)
    args = ["text", "--metrics", "faithfulness", "--dry-run", "--model", "openai/x"]
    one, ds = outputs(args, "--data", [str(tmp_path / "t.csv"), str(folder)])
    assert one == ds and len(one.strip().splitlines()) >= 1
