"""The house rules that a reader of ``src/assay`` relies on, checked on the source itself.

- Lower floors never import higher ones. The command line, ``assay.cli`` (every module
  whose job is the command line), is the top floor: no module outside it imports it
  (``assay/__main__.py``, ``python -m assay``, aside). Below it, outside the store and the
  report, no module imports ``assay.store`` or ``assay.report``.
- No module imports another domain's private (``_x``) names.
- Bad user input raises ``InvalidInputError``: no ``raise ValueError(...)`` in the package.
- One LLM driver: only ``assay.llm.driver`` builds a ``Runner`` and only
  ``assay.llm.models.spec`` parses a model spec; ``assay.llm`` never imports ``assay.text``
  (``assay text`` delegates its judge metrics to ``assay.llm.judge``, not the reverse).
- One path per name: no module but a package's ``__init__`` (its public face) offers a name
  it does not define: none lists an imported name in its ``__all__``, and no import (nor a
  package's lazy export table) takes a name from a plain module that only imports it.
- No import circle: the modules' import graph (every import statement, those inside
  functions and under ``TYPE_CHECKING`` included) has no strongly connected component of
  more than one module.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
#: the top floor: the command line
CLI = "assay.cli"
#: the floors below it that only the command line (and themselves) import
HIGH = (CLI, "assay.store", "assay.report")
#: the one module outside ``assay.cli`` that may import it: ``python -m assay``
ENTRY_POINT = "assay.__main__"
SHARED_PRIVATE = {"assay._validation", "assay._lazy", "assay._compat"}


def _parsed(root: Path, package: str) -> list[tuple[str, ast.Module, bool]]:
    """Each module of ``package`` under ``root``: its dotted name, its tree and whether it is
    a package's ``__init__``."""
    out = []
    for p in sorted((root / package).rglob("*.py")):
        name = p.relative_to(root).with_suffix("").as_posix().replace("/", ".")
        is_package = name.endswith(".__init__")
        out.append((name.removesuffix(".__init__"), ast.parse(p.read_text(), str(p)), is_package))
    return out


PARSED = _parsed(SRC, "assay")
MODULES = [(name, tree) for name, tree, _ in PARSED]
assert len(MODULES) > 100


def _imports(tree: ast.Module) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module] if node.module else []


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_high(module: str) -> bool:
    return module == ENTRY_POINT or any(_within(module, h) for h in HIGH)


def _domain(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:3]) if len(parts) > 2 and parts[1] == "llm" else ".".join(parts[:2])


def test_no_import_runs_up_a_floor() -> None:
    bad = [
        f"{mod} imports {name} (line {node.lineno})"
        for mod, tree in MODULES
        if not _is_high(mod)
        for node in _imports(tree)
        for name in _names(node)
        if any(_within(name, h) for h in HIGH)
    ]
    assert not bad, bad


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Every dotted name an import statement may load: ``from p import m`` names ``p`` and
    ``p.m`` (``m`` may be a module); relative imports are resolved."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = _from(module, is_package, node)
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _cli_imported_from_below(parsed: list[tuple[str, ast.Module, bool]]) -> list[str]:
    """One line per import statement outside ``assay.cli`` that loads any of it."""
    return [
        f"{mod} imports {hits[0]} (line {node.lineno})"
        for mod, tree, is_package in parsed
        if not _within(mod, CLI) and mod != ENTRY_POINT
        for node in _imports(tree)
        if (hits := [n for n in _imported(mod, is_package, node) if _within(n, CLI)])
    ]


def test_nothing_outside_the_command_line_imports_it() -> None:
    assert _cli_imported_from_below(PARSED) == []
    # the check sees an import up, in every spelling, from a domain, the store or a package
    rogue = {
        "assay.store.rogue": "from assay.cli.support import note\n",
        "assay.io.rogue": "def f():\n    import assay.cli.options\n",
        "assay.llm.rogue": "from assay import cli\n",
        "assay.rogue": "from .cli import text\n",
        "assay.report": "from .rogue import x\n",  # assay.report.rogue: not the cli
    }
    parsed = [(m, ast.parse(s), m == "assay.report") for m, s in rogue.items()]
    assert _cli_imported_from_below(parsed) == [
        "assay.store.rogue imports assay.cli.support (line 1)",
        "assay.io.rogue imports assay.cli.options (line 2)",
        "assay.llm.rogue imports assay.cli (line 1)",
        "assay.rogue imports assay.cli (line 1)",
    ]


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
    rogue = ast.parse("def f():\n    from assay.text.records import bleu_record\n")
    assert _llm_to_text([("assay.llm.judge.rogue", rogue)]) == [
        "assay.llm.judge.rogue imports assay.text.records (line 2)"
    ]


# ------------------------------------------------------------------ no import circle


def _from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module that ``from ... import`` in ``module`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")[: len(module.split(".")) - node.level + is_package]
    return ".".join(parts + ([node.module] if node.module else []))


def _targets(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]
) -> list[str]:
    """The modules of ``known`` that an import statement of ``module`` names: ``from p import
    x`` is ``p`` and also ``p.x`` when that is a module; relative imports are resolved. The
    packages above a module, which every import runs first, are not counted."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    base = _from(module, is_package, node)
    # ``from p import m`` runs ``p/__init__`` as well as ``p.m``: both are edges (a module
    # inside ``p`` that does this goes through its package's public face, which may import it
    # back; ``import p.m as m`` names the module alone)
    found = [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
    return [t for t in found if t in known]


def import_graph(parsed: list[tuple[str, ast.Module, bool]]) -> dict[str, set[str]]:
    """Module -> the modules it imports, from every import statement anywhere in it."""
    known = {name for name, _, _ in parsed}
    return {
        name: {
            t
            for node in _imports(tree)
            for t in _targets(name, is_package, node, known)
            if t != name
        }
        for name, tree, is_package in parsed
    }


def import_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(circles, key=sorted)


#: Circles being cut on other branches (issue 29); the lead empties this when they merge.
#: A circle found here must lie inside one of these; one of these no longer found fails too.
ALLOWED_CIRCLES: dict[frozenset[str], str] = {}


def test_no_import_circle() -> None:
    circles = import_circles(import_graph(PARSED))
    bad = [sorted(c) for c in circles if not any(c <= allowed for allowed in ALLOWED_CIRCLES)]
    assert not bad, f"import circles: {bad}"
    stale = [
        why for allowed, why in ALLOWED_CIRCLES.items() if not any(c <= allowed for c in circles)
    ]
    assert not stale, f"these circles are cut: remove them from ALLOWED_CIRCLES: {stale}"


def _package(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, ast.Module, bool]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return _parsed(tmp_path, "pkg")


def test_the_circle_check_finds_a_circle_added_on_purpose(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "from pkg.a import A\n",
        "pkg/a.py": """
            from typing import TYPE_CHECKING
            from pkg import base
            A = 1
            if TYPE_CHECKING:
                from pkg.b import B
        """,
        "pkg/b.py": "from pkg import a\nB = 2\n",
        "pkg/base.py": "import os\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "def f():\n    from ..d import D\n",
        "pkg/d.py": "from pkg.sub.c import f\nD = 3\n",
    }
    parsed = _package(tmp_path, files)
    graph = import_graph(parsed)
    # ``from pkg import base`` inside pkg runs pkg's __init__, which imports a back: a circle
    assert graph["pkg"] == {"pkg.a"} and graph["pkg.a"] == {"pkg", "pkg.base", "pkg.b"}
    assert graph["pkg.sub.c"] == {"pkg.d"}
    assert import_circles(graph) == [
        frozenset({"pkg", "pkg.a", "pkg.b"}),
        frozenset({"pkg.d", "pkg.sub.c"}),
    ]
    # with the circles cut (a names the module alone; b no longer imports a; d's import moved
    # below c's), none is left
    files["pkg/a.py"] = files["pkg/a.py"].replace("from pkg import base", "import pkg.base as base")
    files["pkg/b.py"] = "B = 2\n"
    files["pkg/d.py"] = "D = 3\n"
    assert import_circles(import_graph(_package(tmp_path, files))) == []


# --------------------------------------------------------- one path per name (issue 35)

#: Old homes of names that moved, kept one release with a warning (the deprecation policy of
#: CHANGELOG.md): they may list what they import. One no longer found fails too. (0.2.0
#: removed the last ones, assay.stats.types and assay.llm.testing.)
DEPRECATED_PATHS: dict[str, str] = {}


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, those under a top-level ``if``, ``try``, ``with`` or ``for``
    included (they bind module names too); not those inside functions or classes."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.Try):
            blocks = [node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)]
        elif isinstance(node, (ast.If, ast.For, ast.While)):
            blocks = [node.body, node.orelse]
        elif isinstance(node, ast.With):
            blocks = [node.body]
        else:
            blocks = []
        for block in blocks:
            out += _top_level(block)
    return out


def _bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module defines (``def``, ``class``, assignments) and those it only
    imports."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return defined, imported - defined


def _all(tree: ast.Module) -> list[str]:
    return [
        e.value
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and "__all__"
        in [getattr(t, "id", None) for t in getattr(node, "targets", [])]
        + [getattr(getattr(node, "target", None), "id", None)]
        and isinstance(node.value, (ast.List, ast.Tuple))
        for e in node.value.elts
        if isinstance(e, ast.Constant)
    ]


def reexports(
    parsed: list[tuple[str, ast.Module, bool]], deprecated: frozenset[str] = frozenset()
) -> list[str]:
    """Every second path to a name: a plain module (not a package's ``__init__``, not one of
    ``deprecated``) listing an imported name in ``__all__``; an import taking a name from a
    plain module that does not define it; a package's lazy export table (``{name: module}``)
    pointing at such a module."""
    plain = {name: _bindings(tree) for name, tree, is_package in parsed if not is_package}
    known = {name for name, _, _ in parsed}

    def second_path(module: str, name: str) -> bool:
        return module in plain and name not in plain[module][0] and f"{module}.{name}" not in known

    bad = []
    for mod, tree, is_package in parsed:
        if mod in plain and mod not in deprecated:
            bad += [
                f"{mod} lists {name} in __all__ but imports it"
                for name in _all(tree)
                if name in plain[mod][1]
            ]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _from(mod, is_package, node)
                bad += [
                    f"{mod} imports {a.name} from {base} (line {node.lineno}): not defined there"
                    for a in node.names
                    if second_path(base, a.name)
                ]
            elif is_package and isinstance(node, ast.Dict):
                bad += [
                    f"{mod} exports {k.value} from {v.value} (line {v.lineno}): not defined there"
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant)
                    and isinstance(v, ast.Constant)
                    and isinstance(v.value, str)
                    and second_path(v.value, k.value)
                ]
    return bad


def test_one_path_per_name() -> None:
    assert reexports(PARSED, frozenset(DEPRECATED_PATHS)) == []
    names = {name for name, _, _ in PARSED}
    gone = [name for name in DEPRECATED_PATHS if name not in names]
    assert not gone, f"these modules are gone: remove them from DEPRECATED_PATHS: {gone}"


def test_the_one_path_check_finds_a_reexport_added_on_purpose(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": """
            from pkg.b import B
            __all__ = ["B"]
            _LAZY = {"A": "pkg.b", "B": "pkg.b"}
        """,
        "pkg/a.py": "A = 1\n",
        "pkg/b.py": """
            from typing import TYPE_CHECKING
            from pkg.a import A
            from pkg import sub
            __all__ = ["A", "B", "sub"]
            if TYPE_CHECKING:
                from pkg.a import A as Alias
            try:
                from pkg.a import A as Fallback
            except ImportError:
                Fallback = 0
            class B: ...
        """,
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": """
            from ..b import A, B, sub
            def f():
                from pkg.b import Alias
                from pkg.b import Fallback
        """,
    }
    assert reexports(_package(tmp_path, files)) == [
        "pkg exports A from pkg.b (line 4): not defined there",
        "pkg.b lists A in __all__ but imports it",
        "pkg.b lists sub in __all__ but imports it",
        "pkg.sub.c imports A from pkg.b (line 2): not defined there",
        "pkg.sub.c imports sub from pkg.b (line 2): not defined there",
        "pkg.sub.c imports Alias from pkg.b (line 4): not defined there",
    ]
    # a package's __init__ may offer what it imports; a deprecated old home may list it
    files["pkg/__init__.py"] = 'from pkg.a import A\n_LAZY = {"A": "pkg.a", "B": "pkg.b"}\n'
    files["pkg/sub/c.py"] = "from pkg import A, B, sub\nfrom pkg.b import Fallback\n"
    assert reexports(_package(tmp_path, files), frozenset({"pkg.b"})) == []
