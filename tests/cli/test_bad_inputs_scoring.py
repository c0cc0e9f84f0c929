"""Bad inputs to ``assay scoring``: each gives exit 2, one message naming the file (or the
option) and the location, no traceback, and leaves an existing ``--out-dir`` untouched."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()

GOOD = "h,m,h2,g\n1,1.2,1,a\n2,2.4,,b\n3,2.9,3,a\n4,3.6,4,b\n2,2.2,,a\n3,3.4,2,b\n"


@dataclass
class Case:
    """``make(tmp)`` writes the inputs and returns extra arguments; ``expect`` must all appear
    in the message."""

    name: str
    make: Callable[[Path], list[str]]
    expect: tuple[str, ...]


def _data(name: str, content: bytes | str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        p = tmp / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return ["--data", str(p), "--human", "h", "--system", "m"]

    return make


def _data_with(name: str, content: str, *extra: str) -> Callable[[Path], list[str]]:
    make = _data(name, content)
    return lambda tmp: [*make(tmp), *extra]


def _good(*extra: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        p = tmp / "good.csv"
        p.write_text(GOOD)
        return ["--data", str(p), "--human", "h", "--system", "m", *extra]

    return make


def _dir_as_data(name: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        (tmp / name).mkdir()
        return ["--data", str(tmp / name), "--human", "h", "--system", "m"]

    return make


def _config(**extra: object) -> Callable[[Path], list[str]]:
    """An rsmeval configuration over GOOD (plus a flag and a candidate column), with ``extra``
    keys (a None value removes the key)."""

    def make(tmp: Path) -> list[str]:
        rows = GOOD.splitlines()
        lines = [rows[0] + ",id,ok,cand"]
        lines += [f"{r},r{i},{i % 2},c{i // 2}" for i, r in enumerate(rows[1:])]
        (tmp / "good.csv").write_text("\n".join(lines) + "\n")
        cfg = {
            "experiment_id": "x",
            "predictions_file": "good.csv",
            "system_score_column": "m",
            "human_score_column": "h",
            "id_column": "id",
            "trim_min": 1,
            "trim_max": 5,
            **extra,
        }
        cfg = {k: v for k, v in cfg.items() if v is not None}
        (tmp / "exp.json").write_text(json.dumps(cfg))
        return ["--config", str(tmp / "exp.json")]

    return make


def _out_dir_is_file(tmp: Path) -> list[str]:
    (tmp / "good.csv").write_text(GOOD)
    (tmp / "afile").write_text("keep\n")
    return [
        "--data",
        str(tmp / "good.csv"),
        "--human",
        "h",
        "--system",
        "m",
        "--out-dir",
        str(tmp / "afile"),
    ]


def _out_dir_under_file(tmp: Path) -> list[str]:
    (tmp / "good.csv").write_text(GOOD)
    (tmp / "afile").write_text("keep\n")
    out = tmp / "afile" / "sub"
    return ["--data", str(tmp / "good.csv"), "--human", "h", "--system", "m", "--out-dir", str(out)]


def _table_name_is_a_dir(tmp: Path) -> list[str]:
    (tmp / "good.csv").write_text(GOOD)
    (tmp / "out" / "eval.csv").mkdir(parents=True)
    return ["--data", str(tmp / "good.csv"), "--human", "h", "--system", "m"]


LATIN1 = "h,m,note\n1,1.5,café\n2,2.5,naïve\n".encode("latin-1")
UTF16 = GOOD.encode("utf-16")
BINARY = bytes(range(256)) * 8

CASES = [
    Case("cluster-without-ci", _good("--cluster", "g"), ("--cluster", "give ci too")),
    Case("unknown-cluster", _good("--ci", "0.9", "--cluster", "zone"), ("good.csv", "'zone'")),
    Case(
        "response-without-cluster",
        _data_with("c.csv", "h,m,c\n1,1,a\n2,2,\n3,3,b\n", "--ci", "0.9", "--cluster", "c"),
        ("field 'c'", "1 responses have no value"),
    ),
    Case("latin1-csv", _data("l1.csv", LATIN1), ("l1.csv", "UTF-8", "line ")),
    Case("utf16-csv", _data("u16.csv", UTF16), ("u16.csv",)),
    Case("binary-csv", _data("bin.csv", BINARY), ("bin.csv",)),
    Case("binary-parquet", _data("bin.parquet", BINARY), ("bin.parquet",)),
    Case(
        "latin1-jsonl",
        _data("l1.jsonl", '{"h": 1, "m": "caf\xe9"}\n'.encode("latin-1")),
        ("l1.jsonl", "UTF-8", "line "),
    ),
    Case("binary-json", _data("bin.json", BINARY), ("bin.json",)),
    Case("json-not-a-list", _data("obj.json", '{"h": 1, "m": 2}'), ("obj.json", "JSON list")),
    Case(
        "malformed-jsonl",
        _data("bad.jsonl", '{"h": 1, "m": 2}\n{"h": 2,\n'),
        ("bad.jsonl", "row 2"),
    ),
    Case("empty-file", _data("empty.csv", b""), ("empty.csv",)),
    Case("header-only", _data("head.csv", "h,m\n"), ("head.csv", "no rows")),
    Case("unknown-suffix", _data("d.txt", GOOD), ("d.txt", "unknown file type")),
    Case(
        "missing-file",
        lambda tmp: ["--data", str(tmp / "nope.csv"), "--human", "h", "--system", "m"],
        ("nope.csv", "not found"),
    ),
    Case("directory-as-data", _dir_as_data("adir"), ("adir",)),
    Case("directory-named-csv", _dir_as_data("adir.csv"), ("adir.csv",)),
    Case(
        "missing-human-column", _good("--human", "nope"), ("good.csv", "'nope'", "missing column")
    ),
    Case("missing-human2-column", _good("--human2", "nope"), ("good.csv", "'nope'")),
    Case("missing-group-column", _good("--subgroup", "nope"), ("good.csv", "'nope'")),
    Case(
        "human-not-numeric",
        _data("txt.csv", "h,m\na,1\nb,2\n"),
        ("txt.csv", "'h'", "no numeric values"),
    ),
    Case(
        "system-not-numeric",
        _data("txt.csv", "h,m\n1,x\n2,y\n"),
        ("txt.csv", "'m'", "no numeric values"),
    ),
    Case(
        "system-1e308",
        _data("big.csv", "h,m\n1,1\n2,1e308\n3,3\n"),
        ("big.csv", "row 2", "'m'", "out of range"),
    ),
    Case(
        "human-minus-1e308",
        _data("big.csv", "h,m\n1,1\n2,2\n-1e308,3\n"),
        ("big.csv", "row 3", "'h'"),
    ),
    Case("system-inf", _data("inf.csv", "h,m\n1,1\n2,inf\n"), ("inf.csv", "row 2", "'m'")),
    Case(
        "human2-1e308",
        _data_with("big.csv", "h,m,h2\n1,1,1\n2,2,1e308\n", "--human2", "h2"),
        ("big.csv", "row 2", "'h2'"),
    ),
    Case("all-human-zero", _data("zero.csv", "h,m\n0,1\n0,2\n"), ("zero.csv", "'h'", "non-zero")),
    Case("negative-variance", _good("--rater-error-variance", "-1"), ("--rater-error-variance",)),
    Case("nan-variance", _good("--rater-error-variance", "nan"), ("--rater-error-variance",)),
    Case("out-dir-is-a-file", _out_dir_is_file, ("--out-dir", "afile")),
    Case("out-dir-under-a-file", _out_dir_under_file, ("--out-dir", "afile")),
    Case("table-file-is-a-dir", _table_name_is_a_dir, ("--out-dir", "eval.csv")),
    Case("unknown-format", _good("--format", "xml"), ("--format",)),
]

# rsmeval configurations (``--config``): one line naming the file and the key or column
CONFIG_CASES = [
    Case(
        "config-flag-column-missing",
        _config(flag_column={"nope": [1]}),
        ("good.csv", "'nope'", "missing flag column"),
    ),
    Case(
        "config-flag-column-not-an-object",
        _config(flag_column=["ok"]),
        ("exp.json", "flag_column must be an object"),
    ),
    Case(
        "config-flags-exclude-everything",
        _config(flag_column={"ok": [7]}),
        ("exp.json", "'flag_column'", "no response has an allowed value"),
    ),
    Case(
        "config-min-items-without-candidate-column",
        _config(min_items_per_candidate=2),
        ("exp.json", "min_items_per_candidate needs candidate_column"),
    ),
    Case(
        "config-min-items-not-whole",
        _config(candidate_column="cand", min_items_per_candidate=1.5),
        ("exp.json", "min_items_per_candidate must be a whole number"),
    ),
    Case(
        "config-candidate-column-missing",
        _config(candidate_column="nope", min_items_per_candidate=2),
        ("good.csv", "'nope'", "missing column"),
    ),
    Case(
        "config-no-candidate-has-enough",
        _config(candidate_column="cand", min_items_per_candidate=3),
        ("exp.json", "no candidate has 3 or more responses"),
    ),
    Case(
        "config-min-n-not-integer",
        _config(subgroups=["g"], min_n_per_group="ten"),
        ("exp.json", "min_n_per_group must be a whole number", "'ten'"),
    ),
    Case(
        "config-min-n-float",
        _config(subgroups=["g"], min_n_per_group={"g": 2.5}),
        ("exp.json", "min_n_per_group['g'] must be a whole number"),
    ),
    Case(
        "config-min-n-keys-not-the-subgroups",
        _config(subgroups=["g"], min_n_per_group={"L1": 5}),
        ("exp.json", "keys of min_n_per_group"),
    ),
    Case(
        "config-file-format-unknown",
        _config(file_format="parquet"),
        ("exp.json", "file_format 'parquet'"),
    ),
    Case(
        "config-unknown-key",
        _config(flag_columns={"ok": [1]}),
        ("exp.json", "unknown configuration keys", "flag_columns"),
    ),
    Case(
        "config-human-is-the-system-score",
        _config(system_score_column="h"),
        ("exp.json", "human_score_column and system_score_column are the same column 'h'"),
    ),
    Case(
        "config-human-is-the-second-score",
        _config(second_human_score_column="h"),
        ("exp.json", "human_score_column and second_human_score_column"),
    ),
    Case(
        "config-candidate-is-the-id-column",
        _config(candidate_column="id"),
        ("exp.json", "id_column and candidate_column are the same column 'id'"),
    ),
    Case(
        "config-experiment-id-with-space",
        _config(experiment_id="my run"),
        ("exp.json", "experiment_id"),
    ),
]
CASES += CONFIG_CASES


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[c.name for c in CONFIG_CASES])
def test_bad_configuration_is_one_line(case: Case, tmp_path: Path) -> None:
    args = case.make(tmp_path)
    r = runner.invoke(app, ["scoring", *args, "--out-dir", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "out").exists()


def test_corpus_is_large():
    assert len(CASES) >= 25
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_exits_2_with_a_located_message(case: Case, tmp_path: Path) -> None:
    args = case.make(tmp_path)
    if "--out-dir" not in args:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        (out / "metrics.json").write_text("[]\n")
        (out / "eval_short.csv").write_text("old\n")
        args += ["--out-dir", str(out)]
    before = _snapshot(tmp_path)
    r = runner.invoke(app, ["scoring", *args])
    message = r.output
    assert r.exit_code == 2, f"exit {r.exit_code}: {message}\n{r.exception!r}"
    assert "Traceback" not in message
    for piece in case.expect:
        assert piece in message, f"{piece!r} not in {message!r}"
    assert _snapshot(tmp_path) == before, "files changed"
