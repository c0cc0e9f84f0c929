"""The house rules that a reader of ``src/assay`` relies on, checked on the source itself.

- Lower floors never import higher ones: outside the CLI layer (``cli.py`` and
  ``__main__.py`` files, ``assay.cli``, ``assay.cli_support``), the store and the report,
  no module imports ``assay.cli``, ``assay.cli_support``, ``assay.store`` or
  ``assay.report``.
- No module imports another domain's private (``_x``) names.
- Bad user input raises ``InvalidInputError``: no ``raise ValueError(...)`` in the package.
- One LLM driver: only ``assay.llm.driver`` builds a ``Runner`` and only
  ``assay.llm.models.spec`` parses a model spec; ``assay.llm`` never imports ``assay.text``
  (``assay text`` delegates its judge metrics to ``assay.llm.judge``, not the reverse).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
HIGH = ("assay.cli", "assay.cli_support", "assay.store", "assay.report")
SHARED_PRIVATE = {"assay._validation", "assay._lazy", "assay._compat"}


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for p in sorted((SRC / "assay").rglob("*.py")):
        name = p.relative_to(SRC).with_suffix("").as_posix().replace("/", ".")
        out.append((name.removesuffix(".__init__"), ast.parse(p.read_text(), str(p))))
    assert len(out) > 100
    return out


MODULES = _modules()


def _imports(tree: ast.Module) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module] if node.module else []


def _is_cli_layer(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return last in ("cli", "__main__") or last.endswith("_cli") or module.startswith(HIGH)


def _domain(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:3]) if len(parts) > 2 and parts[1] == "llm" else ".".join(parts[:2])


def test_no_import_runs_up_a_floor() -> None:
    bad = [
        f"{mod} imports {name} (line {node.lineno})"
        for mod, tree in MODULES
        if not _is_cli_layer(mod)
        for node in _imports(tree)
        for name in _names(node)
        if any(name == h or name.startswith(h + ".") for h in HIGH)
    ]
    assert not bad, bad


def test_no_import_of_another_domains_private_names() -> None:
    bad = []
    for mod, tree in MODULES:
        for node in _imports(tree):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("assay."):
                continue
            target = node.module or ""
            if _domain(target) == _domain(mod) or target in SHARED_PRIVATE:
                continue
            private = [a.name for a in node.names if a.name.startswith("_")]
            segments = [s for s in target.split(".")[1:] if s.startswith("_")]
            if private or segments:
                bad.append(f"{mod} imports {target}:{private or segments} (line {node.lineno})")
    assert not bad, bad


@pytest.mark.parametrize("exc", ["ValueError"])
def test_bad_input_is_never_a_plain_value_error(exc: str) -> None:
    bad = [
        f"{mod} line {node.lineno}"
        for mod, tree in MODULES
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise)
        and node.exc is not None
        and (
            (isinstance(node.exc, ast.Call) and getattr(node.exc.func, "id", None) == exc)
            or getattr(node.exc, "id", None) == exc
        )
    ]
    assert not bad, bad


# ------------------------------------------------------- one LLM driver (issue 20)

#: The one place that builds a ``Runner`` and the one place that parses a model spec.
ONE_PLACE = {"Runner": "assay.llm.driver", "parse_model_spec": "assay.llm.models.spec"}


def _called(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _second_places(modules: list[tuple[str, ast.Module]]) -> list[str]:
    return [
        f"{mod} calls {name} (line {getattr(node, 'lineno', '?')}); only {ONE_PLACE[name]} may"
        for mod, tree in modules
        for node in ast.walk(tree)
        if (name := _called(node)) in ONE_PLACE and mod != ONE_PLACE[name]
    ]


def _llm_to_text(modules: list[tuple[str, ast.Module]]) -> list[str]:
    return [
        f"{mod} imports {name} (line {node.lineno})"
        for mod, tree in modules
        if mod == "assay.llm" or mod.startswith("assay.llm.")
        for node in _imports(tree)
        for name in _names(node)
        if name == "assay.text" or name.startswith("assay.text.")
    ]


def test_runner_built_and_model_spec_parsed_in_one_place() -> None:
    assert _second_places(MODULES) == []
    # the check sees a second place
    rogue = ast.parse("from assay.llm.runner import Runner\nr = Runner(m)\nparse_model_spec('x')")
    assert len(_second_places([("assay.llm.suites.rogue", rogue)])) == 2


def test_llm_never_imports_text() -> None:
    assert _llm_to_text(MODULES) == []
    rogue = ast.parse("def f():\n    from assay.text.records import aggregate\n")
    assert _llm_to_text([("assay.llm.judge.rogue", rogue)]) == [
        "assay.llm.judge.rogue imports assay.text.records (line 2)"
    ]
