"""A dataset TOML may only name files in its own folder; files elsewhere come from the CLI.

The template and the splits a TOML names are read into prompts and sent to the model, so a
shared dataset file must not pull ``../../secret`` or ``/etc/...`` into them. Each refusal
is exit 2 naming the TOML and the key, before any model call.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.llm.suites.datasets import dataset_spec
from assay.llm.suites.fairness import load_fairness_data
from assay.testing.llm import FakeChatServer

DATA = Path(__file__).parent / "data"
runner = CliRunner()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The toy dataset copied into tmp/ds, and a secret file beside the folder."""
    ds = tmp_path / "ds"
    ds.mkdir()
    for name in ("toy.toml", "toy.txt", "toy_train.csv", "toy_test.csv"):
        shutil.copy(DATA / name, ds / name)
    (tmp_path / "secret.txt").write_text("SECRET-TOKEN $row\n")
    return ds


def _with(folder: Path, key: str, value: str) -> Path:
    toml = folder / "toy.toml"
    lines = [ln for ln in toml.read_text().splitlines() if not ln.startswith(f"{key} =")]
    toml.write_text("\n".join([f'{key} = "{value}"', *lines]) + "\n")
    return toml


@pytest.mark.parametrize(
    "key, value",
    [
        ("template_file", "../secret.txt"),
        ("template_file", "{secret}"),  # an absolute path
        ("template_file", "link.txt"),  # a link inside the folder to a file outside
        ("train", "../secret.txt"),
        ("test", "sub/../../secret.txt"),
    ],
)
def test_a_path_leaving_the_folder_is_refused_before_any_call(folder, key, value) -> None:
    (folder / "link.txt").symlink_to(folder.parent / "secret.txt")
    toml = _with(folder, key, value.format(secret=folder.parent / "secret.txt"))
    with pytest.raises(InvalidInputError) as e:
        data = load_fairness_data(toml)
        data.spec.prompt_template()
    assert e.value.field == key and "outside" in str(e.value)
    with FakeChatServer(responder=lambda m: "Y") as srv:
        r = runner.invoke(app, ["llm", "fairness", "--dataset-file", str(toml), "-m", srv.spec(),
                                "--no-save", "--quiet"])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert "outside" in r.output and "SECRET" not in r.output
        assert srv.calls == 0


def test_files_inside_the_folder_are_read(folder) -> None:
    (folder / "templates").mkdir()
    shutil.copy(folder / "toy.txt", folder / "templates" / "mine.txt")
    spec = dataset_spec(_with(folder, "template_file", "templates/mine.txt"))
    assert spec.prompt_template().template == (folder / "toy.txt").read_text()


def test_a_template_given_on_the_command_line_may_live_anywhere(folder) -> None:
    toml = folder / "toy.toml"
    secret = folder.parent / "secret.txt"
    r = runner.invoke(app, ["llm", "fairness", "--dataset-file", str(toml),
                            "--template-file", str(secret), "--dry-run", "1"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "SECRET-TOKEN" in r.stdout
