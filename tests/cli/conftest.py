"""The harness of the LLM commands' bad-input corpus (tests/cli/test_bad_inputs_llm_*.py).

``refused(argv, files, needles)`` writes ``files`` into a fresh folder, runs ``assay`` with
``argv`` (``{d}``: that folder, ``{m}``: the counting loopback judge's spec, ``{out}``: an
existing ``--out`` file, ``{runs}``: a folder for run folders, ``{S}``: the samples shipped
with assay, ``{T}``: tests/suites/data) and checks what every refusal must be: exit 2, one
line ``error: ...`` holding every needle, no traceback, no model call, and nothing written
(the folder, ``--out`` and the isolated assay home byte for byte as before).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer

SHIPPED = Path(__file__).parents[2] / "src" / "assay" / "llm" / "suites" / "data"
TEST_DATA = Path(__file__).parents[1] / "suites" / "data"


@pytest.fixture(scope="module")
def counting_judge() -> Iterator[FakeChatServer]:
    """One loopback chat server per module; every refusal must leave its call count as is."""
    srv = FakeChatServer(hang_seconds=5).start()
    yield srv
    srv.stop()


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


Refused = Callable[..., str]


@pytest.fixture
def refused(tmp_path: Path, counting_judge: FakeChatServer) -> Refused:
    """``refused(argv, files, needles, env=None)`` -> the error line (see the module doc);
    ``env`` values are formatted like ``argv``."""

    def check(
        argv: Sequence[str],
        files: Mapping[str, str | bytes],
        needles: Sequence[str],
        env: Mapping[str, str] | None = None,
    ) -> str:
        d = tmp_path / "in"
        d.mkdir()
        for name, content in files.items():
            p = d / name
            p.parent.mkdir(parents=True, exist_ok=True)
            (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)  # type: ignore[operator]
        out = tmp_path / "out.json"
        out.write_text("previous\n")
        names: dict[str, Any] = {
            "d": d,
            "m": counting_judge.spec(),
            "out": out,
            "runs": tmp_path / "runs",
            "S": SHIPPED,
            "T": TEST_DATA,
        }
        args = [a.format(**names) for a in argv]
        before, calls = _snapshot(tmp_path), counting_judge.calls
        environ = {k: v.format(**names) for k, v in (env or {}).items()}
        res = CliRunner().invoke(app, args, env=environ)
        text = res.output
        assert res.exit_code == 2, (res.exit_code, text)
        assert "Traceback" not in text
        assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
        lines = [x for x in text.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), text
        for n in needles:
            assert n.format(**names) in lines[0], (n, lines[0])
        assert counting_judge.calls == calls, "a model call was paid before the refusal"
        assert _snapshot(tmp_path) == before, "something was written"
        return lines[0]

    return check
