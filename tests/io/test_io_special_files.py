"""Outputs never replace a special file: a FIFO, a character device, standard output.

Every output goes through :mod:`assay.io.files`. A rename over ``/dev/null`` would replace
the machine's ``/dev/null`` with a regular file (as root), so a special file is opened and
written in place, ``-`` is standard output, and a SQLite store or cache refuses one.
Each test checks the special file is still what it was after the write.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.io.files import (
    check_database_file,
    is_special_file,
    write_atomic,
    write_files_atomic,
)


class FifoReader:
    """A thread reading everything written to a FIFO (the writer blocks until it opens)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as fh:
            self.data = fh.read()

    def result(self) -> bytes:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "nothing opened the FIFO for writing"
        return self.data


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    p = tmp_path / "pipe"
    os.mkfifo(p)
    return p


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A character device with /dev/null's numbers (1, 3), made here; needs root."""
    p = tmp_path / "null"
    try:
        os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot create a character device here ({e})")
    return p


def _is_fifo(p: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(p).st_mode)


def _is_chardev(p: Path) -> bool:
    st = os.lstat(p)
    return stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3


def test_write_atomic_writes_into_a_fifo_and_keeps_it(fifo: Path) -> None:
    reader = FifoReader(fifo)
    write_atomic(fifo, '{"a": 1}\n')
    assert reader.result() == b'{"a": 1}\n'
    assert _is_fifo(fifo)
    assert sorted(p.name for p in fifo.parent.iterdir()) == ["pipe"]  # no temp file left


def test_write_atomic_keeps_a_character_device(null_device: Path) -> None:
    write_atomic(null_device, "x" * 1000)
    assert _is_chardev(null_device)
    assert sorted(p.name for p in null_device.parent.iterdir()) == ["null"]


def test_out_dir_files_that_are_fifos_are_written_in_place(fifo: Path) -> None:
    reader = FifoReader(fifo)
    write_files_atomic(fifo.parent, {"a.csv": "x\n", "pipe": "to the pipe\n"})
    assert reader.result() == b"to the pipe\n"
    assert _is_fifo(fifo) and (fifo.parent / "a.csv").read_text() == "x\n"


def test_dash_and_dev_stdout_are_standard_output(capfd) -> None:
    write_atomic("-", "first\n")
    write_atomic("/dev/stdout", "second\n")
    assert capfd.readouterr().out == "first\nsecond\n"
    assert is_special_file("/dev/stdout") and is_special_file("/dev/fd/1")
    assert is_special_file("/proc/self/fd/1") and not is_special_file("/dev/shm/new.json")


def test_a_link_to_a_regular_file_is_followed_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_a_database_refuses_a_special_file(fifo: Path) -> None:
    with pytest.raises(InvalidInputError, match="not a regular file"):
        check_database_file(fifo, what="response cache")
    assert _is_fifo(fifo)


# ---------------------------------------------------------------- through the commands


@pytest.fixture
def inputs(tmp_path: Path) -> list[str]:
    pd.DataFrame({"uid": ["1", "2"], "value": ["cat", "dog"]}).to_csv(
        tmp_path / "gts.csv", index=False
    )
    pd.DataFrame({"uid": ["1", "2"], "value": ["cat", "cat"], "score": [0.9, 0.6]}).to_csv(
        tmp_path / "pds.csv", index=False
    )
    return [
        "classification",
        "--groundtruths",
        str(tmp_path / "gts.csv"),
        "--predictions",
        str(tmp_path / "pds.csv"),
        "--metrics",
        "Accuracy",
    ]


def test_classification_out_fifo(inputs: list[str], fifo: Path) -> None:
    reader = FifoReader(fifo)
    r = CliRunner().invoke(app, [*inputs, "--out", str(fifo)])
    assert r.exit_code == 0, r.output
    assert {m["type"] for m in json.loads(reader.result())} == {"Accuracy"}
    assert _is_fifo(fifo)


def test_classification_out_character_device(inputs: list[str], null_device: Path) -> None:
    r = CliRunner().invoke(app, [*inputs, "--out", str(null_device)])
    assert r.exit_code == 0, r.output
    assert _is_chardev(null_device)


def test_classification_save_to_a_special_db_is_refused(inputs: list[str], fifo: Path) -> None:
    r = CliRunner().invoke(app, [*inputs, "--save", "--db", str(fifo)])
    assert r.exit_code == 2, r.output
    assert "not a regular file" in r.output and "Traceback" not in r.output
    assert _is_fifo(fifo) and sorted(p.name for p in fifo.parent.iterdir()) == [
        "gts.csv",
        "pds.csv",
        "pipe",
    ]


def test_classification_out_dash_is_stdout(inputs: list[str], tmp_path: Path) -> None:
    r = CliRunner().invoke(app, [*inputs, "--out", "-"])
    assert r.exit_code == 0, r.output
    assert {m["type"] for m in json.loads(r.stdout)} == {"Accuracy"}
    assert not (Path.cwd() / "-").exists() and not (tmp_path / "-").exists()
