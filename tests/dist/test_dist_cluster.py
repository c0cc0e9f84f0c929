"""Every evaluator on a real ``dask.distributed.LocalCluster`` (2 worker processes) gives the
records of one ``add`` of all the data: byte-identical JSON.

The evaluators and their data are the contract cases (``tests/contract``): every domain,
the LLM ones included. Each batch of a case is one partition of a Dask bag, added on a worker,
its state shipped back and merged in a tree (``split_every=2``, so merges happen on the
workers too).

Evaluators whose state holds float *sums* (scoring's sufficient statistics, fairness with
float sample weights) regroup additions when merging; their records are byte-identical when
the sums are exact (scores and weights on a 1/16 grid, the second test) and equal to 1e-12
otherwise (the third test). See docs/dist.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import dask.bag as db
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster, get_task_stream

from assay.classification import ClassificationEvaluator
from assay.dist import evaluate_dask, evaluate_table
from assay.evaluator import Evaluator
from assay.fairness import FairnessEvaluator
from contract import ContractCase, assert_same_metrics
from test_evaluator_contract import CASES

pytestmark = pytest.mark.slow  # a cluster of worker processes takes a few seconds to start

# Cases whose state is float sums: the additions regroup when partitions merge.
FLOAT_SUMS = {
    "fairness-crossed-weighted",
    "fairness-control-weighted",
    "fairness-by-weighted",
    "fairness-weighted-ci-by",
    "fairness-cluster-weighted-mean-ci",
    "scoring-all-tables",
    "scoring-plain",
    "scoring-half-points-given-variance",
    "scoring-ci",
    "scoring-fairness-consistency-by-ci-cluster",
    "scoring-smd-options",
    "scoring-cluster-g-by-ci",
}
# Cases whose slices' values come from per-group sums taken apart and put back in another
# order: even on the grid they agree with one add to the last bits only (checked to 1e-12).
NEAR = {"scoring-by-slices", "scoring-by-slices-ci-bca-prmse"}


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def _in_memory(case: ContractCase, batches: list) -> str:
    ev = case.make()
    case.add(ev, case.concat(batches))
    return ev.compute().to_json()


def _on_cluster(case: ContractCase, batches: list, client: Client) -> Evaluator:
    bag = db.from_sequence(batches, npartitions=len(batches))
    ev = evaluate_dask(
        case.make(),
        bag,
        add=lambda ev, part, add=case.add: [add(ev, b) for b in part],
        split_every=2,
        scheduler=client,
    )
    return ev


def _on_grid(batches: list) -> list:
    """Float columns of table batches rounded to multiples of 1/16: sums of them are exact."""
    out = []
    for b in batches:
        if isinstance(b, pd.DataFrame):
            b = b.copy()
            for c in b.columns:
                if b[c].dtype.kind == "f":
                    b[c] = np.round(b[c] * 16) / 16
        out.append(b)
    return out


def test_the_cases_cover_every_domain() -> None:
    prefixes = {c.name.split("-")[0].split(".")[0].split("_")[0] for c in CASES}
    for domain in ("classification", "fairness", "detection", "segmentation", "scoring"):
        assert domain in prefixes
    for domain in ("stats", "text", "judge", "pairwise", "suites"):
        assert domain in prefixes


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in NEAR], ids=lambda c: c.name)
def test_cluster_records_are_byte_identical_to_one_add(case: ContractCase, client: Client) -> None:
    batches = _on_grid(list(case.batches)) if case.name in FLOAT_SUMS else list(case.batches)
    expected = _in_memory(case, batches)
    got = _on_cluster(case, batches, client).compute().to_json()
    assert len(json.loads(got)) > 0
    assert got == expected


@pytest.mark.parametrize("name", sorted(FLOAT_SUMS | NEAR))
def test_float_sums_equal_to_rounding_on_any_data(name: str, client: Client) -> None:
    case = next(c for c in CASES if c.name == name)
    ev = case.make()
    case.add(ev, case.concat(case.batches))
    n = assert_same_metrics(
        ev.compute(), _on_cluster(case, list(case.batches), client).compute(), rel=1e-12
    )
    assert n > 0


def test_work_runs_on_both_worker_processes(client: Client) -> None:
    case = next(c for c in CASES if c.name == "classification-binary-arrays")
    batches = list(case.batches) * 8  # 24 partitions: enough for both workers to take some
    with get_task_stream(client) as stream:
        _on_cluster(case, batches, client)
    workers = {t["worker"] for t in stream.data if "leaf_state" in str(t["key"])}
    assert len(workers) == 2
    pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()


def _binary_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1), 3)
    group = rng.choice(["a", "b", "c"], n)
    return pd.DataFrame({"y": y, "score": score, "yhat": (score >= 0.5).astype(int), "g": group})


def _add_binary(ev: ClassificationEvaluator, df: pd.DataFrame) -> None:
    ev.add_arrays(df["y"].to_numpy(), df["score"].to_numpy(), labels=[0, 1])


def test_parquet_dataset_on_the_cluster_and_streamed(tmp_path: Path, client: Client) -> None:
    """A Parquet directory: Dask DataFrame partitions on the cluster, row groups streamed in
    process, and the whole frame in memory give the same bytes."""
    frames = [_binary_frame(n, seed) for seed, n in enumerate((3000, 1, 2500, 4000))]
    for i, f in enumerate(frames):
        f.to_parquet(tmp_path / f"part-{i:02d}.parquet", row_group_size=700)
    whole = pd.concat(frames, ignore_index=True)

    def make() -> ClassificationEvaluator:
        return ClassificationEvaluator(pr_curve_max_examples=0, score_thresholds=[0.0, 0.5])

    expected = make().add_arrays(whole["y"], whole["score"], labels=[0, 1]).compute().to_json()
    on_cluster = evaluate_table(make(), tmp_path, add=_add_binary, scheduler=client)
    streamed = evaluate_table(make(), str(tmp_path / "part-*.parquet"), add=_add_binary)
    assert on_cluster.compute().to_json() == expected
    assert streamed.compute().to_json() == expected

    def add_fair(ev: FairnessEvaluator, df: pd.DataFrame) -> None:
        ev.add(df, label="y", prediction="yhat")

    fair = FairnessEvaluator(group_columns=["g"])
    want = FairnessEvaluator(group_columns=["g"]).add(whole, label="y", prediction="yhat")
    got = evaluate_table(fair, tmp_path, add=add_fair, scheduler=client, columns=["y", "yhat", "g"])
    assert got.compute().to_json() == want.compute().to_json()


def test_an_empty_dataset_refuses(client: Client) -> None:
    from assay.errors import InvalidInputError

    bag = db.from_sequence([[], []], npartitions=2)
    with pytest.raises(InvalidInputError, match="every partition was empty"):
        evaluate_dask(
            ClassificationEvaluator(),
            bag,
            add=lambda ev, part: None,
            scheduler=client,
        )


@pytest.mark.parametrize("command", ["classification", "fairness", "scoring"])
def test_cli_scheduler_gives_the_in_process_records(
    tmp_path: Path, client: Client, command: str
) -> None:
    from test_dist_cli import COMMANDS, table, write_dataset
    from typer.testing import CliRunner

    from assay.cli.main import app

    df = table()
    df.to_csv(tmp_path / "all.csv", index=False)
    folder = write_dataset(df, tmp_path / "ds")
    address = client.scheduler.address
    assert address.startswith("tcp://")
    results = []
    for data, extra in ((tmp_path / "all.csv", []), (folder, ["--scheduler", address])):
        if command == "scoring":
            out_dir = tmp_path / f"out-{len(results)}"
            args = ["scoring", "--human", "h", "--system", "m", "--out-dir", str(out_dir)]
        else:
            args = COMMANDS[command]
        r = CliRunner().invoke(app, [*args, "--data", str(data), *extra])
        assert r.exit_code == 0, r.stdout + r.stderr
        text = (out_dir / "metrics.json").read_text() if command == "scoring" else r.stdout
        results.append(json.loads(text))
    assert len(results[0]) > 5 and results[1] == results[0]


def test_cli_unreachable_scheduler_exits_2(tmp_path: Path) -> None:
    from test_dist_cli import COMMANDS, table, write_dataset
    from typer.testing import CliRunner

    from assay.cli.main import app

    folder = write_dataset(table(100), tmp_path / "ds")
    args = [*COMMANDS["classification"], "--data", str(folder), "--scheduler", "tcp://127.0.0.1:9"]
    r = CliRunner().invoke(app, args)
    text = r.stdout + r.stderr
    assert r.exit_code == 2 and "cannot connect to the Dask scheduler" in text, text
    assert "Traceback" not in text


@pytest.mark.parametrize("command", ["stats", "text"])
def test_cli_scores_and_text_on_the_cluster_give_the_records_of_one_file(
    tmp_path: Path, client: Client, command: str
) -> None:
    """stats --scores and text --data with --scheduler: a Parquet directory, a glob and the
    one file (JSONL, CSV) on the cluster give the bytes of the one file in process."""
    from test_dist_cli_scores_text import STATS, TEXT, outputs, stats_inputs, text_inputs

    if command == "stats":
        base, option, inputs = STATS, "--scores", stats_inputs(tmp_path)
    else:
        base, option, inputs = TEXT, "--data", text_inputs(tmp_path, uids=False)
    address = client.scheduler.address
    (expected,) = outputs(base, option, inputs[:1])
    on_cluster = outputs(base, option, inputs, ["--scheduler", address])
    assert len(json.loads(expected)) >= 6
    assert on_cluster == [expected] * 3


def test_cli_bad_rows_on_the_cluster_exit_2_with_one_line(tmp_path: Path, client: Client) -> None:
    """A bad row found on a worker is reported as in process: one line, exit 2."""
    from test_dist_cli_scores_text import TEXT, run, text_frame, write_dataset

    df = text_frame(60)
    df.loc[45, "prediction"] = None
    folder = write_dataset(df, tmp_path / "ds", row_group=10)
    code, text = run([*TEXT, "--data", str(folder), "--scheduler", client.scheduler.address])
    assert code == 2 and "u45" in text and "missing value" in text, text
    assert len(text.strip().splitlines()) == 1 and "Traceback" not in text
