"""The deprecation policy (CHANGELOG.md), checked on the source itself.

A renamed keyword, function, class or flag keeps its old name one release, warning and naming
the new one; then the old name is removed, and a removed keyword or flag fails naming its
replacement. Every rename goes through :mod:`assay._compat`, so this test finds them all:

- it reads every module of ``src/assay`` for a use of the helpers (``deprecated_keywords``,
  ``removed_keywords``, ``deprecated_names``, ``DeprecatedFlag``), imports those modules and
  checks that each declared rename is registered and behaves: a deprecated one warns naming
  its replacement (and gives the same thing), a removed one fails naming it; the replacement
  exists (a parameter of the function, a name of the module);
- no module but ``assay._compat`` raises a ``DeprecationWarning`` itself or says
  "deprecated", so an alias cannot be added beside the helpers (a silent one, or one this
  test would not find).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import warnings
from pathlib import Path

import pytest

from assay import _compat
from assay._compat import (
    ALIASES,
    DeprecatedFlag,
    RemovedNameError,
    deprecated_keywords,
    deprecated_names,
    removed_flag_message,
    removed_keywords,
)
from assay.errors import InvalidInputError

SRC = Path(__file__).resolve().parents[1] / "src"
HELPERS = {"deprecated_keywords", "removed_keywords", "deprecated_names", "DeprecatedFlag"}
WARNINGS = {"DeprecationWarning", "PendingDeprecationWarning", "FutureWarning"}


def _modules() -> list[tuple[str, Path, ast.Module]]:
    out = []
    for p in sorted((SRC / "assay").rglob("*.py")):
        name = p.relative_to(SRC).with_suffix("").as_posix().replace("/", ".")
        out.append((name.removesuffix(".__init__"), p, ast.parse(p.read_text(), str(p))))
    return out


MODULES = _modules()


def _declared() -> dict[str, list[tuple[str, str]]]:
    """Module -> the (helper, old name) of every rename it declares with a helper."""
    found: dict[str, list[tuple[str, str]]] = {}
    for name, _, tree in MODULES:
        if name == "assay._compat":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            helper = getattr(node.func, "id", getattr(node.func, "attr", None))
            if helper not in HELPERS:
                continue
            if helper == "DeprecatedFlag":
                old = node.args[0]
                assert isinstance(old, ast.Constant), f"{name}: DeprecatedFlag(old, new) literals"
                found.setdefault(name, []).append((helper, str(old.value)))
            else:
                olds = [k.arg for k in node.keywords if k.arg is not None]
                assert olds, f"{name}: {helper} names its renames as old=new keywords"
                found.setdefault(name, []).extend((helper, o) for o in olds)
    return found


DECLARED = _declared()
for _module in DECLARED:
    importlib.import_module(_module)  # registers its renames in ALIASES

_KIND = {
    "deprecated_keywords": "keyword",
    "removed_keywords": "removed-keyword",
    "deprecated_names": "name",
    "DeprecatedFlag": "flag",
}


def test_every_rename_in_the_source_is_registered() -> None:
    declared = sorted((_KIND[h], old) for uses in DECLARED.values() for h, old in uses)
    flags = [("removed-flag", old) for old in _compat.REMOVED_FLAGS]
    # (the examples of assay._compat's docstrings and this file's own declare some too)
    registered = sorted(
        (a.kind, a.old)
        for a in ALIASES
        if a.module not in ("assay._compat", __name__) or a.kind == "removed-flag"
    )
    assert registered == sorted(declared + flags)
    # what 0.2.0 removed: the keywords the release notes list, each failing naming the new
    assert len(declared) >= 10 and {k for k, _ in declared} == {"removed-keyword"}


@pytest.mark.parametrize("alias", ALIASES, ids=[f"{a.where}:{a.old}" for a in ALIASES])
def test_every_alias_names_its_replacement(alias: _compat.Alias, capsys) -> None:
    if alias.kind == "keyword":
        with pytest.warns(DeprecationWarning, match=f"use {alias.new}="):
            assert alias.probe() == {alias.new: 0}
    elif alias.kind == "removed-keyword":
        with pytest.raises(RemovedNameError, match=f"{alias.old}= was renamed; use {alias.new}="):
            alias.probe()
    elif alias.kind == "name":
        with pytest.warns(DeprecationWarning, match=f"use {alias.target}.{alias.new}"):
            got = alias.probe()
        assert got is getattr(importlib.import_module(alias.target), alias.new)
    elif alias.kind == "flag":
        alias.probe()
        assert f"use {alias.new}" in capsys.readouterr().err
    else:
        assert alias.kind == "removed-flag"
        assert alias.probe() == f"No such option: {alias.old} (it was renamed: use {alias.new})"
    if alias.kind in ("keyword", "removed-keyword"):  # the replacement is a real parameter
        target = alias.target.__init__ if isinstance(alias.target, type) else alias.target
        params = inspect.signature(target).parameters
        assert alias.new in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
        assert alias.kind == "keyword" or alias.old not in params


def self_made(name: str, text: str, tree: ast.Module) -> list[str]:
    """Where module ``name`` (its ``text`` and ``tree``) deprecates something by itself:
    a ``warn(..., DeprecationWarning)`` or a line saying "deprecated" (filters of other
    libraries' warnings aside)."""
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Name) and f.id == "warn") or (
            isinstance(f, ast.Attribute) and f.attr == "warn"
        ):
            given = [*node.args, *(k.value for k in node.keywords)]
            used = {getattr(a, "id", getattr(a, "attr", None)) for a in given} & WARNINGS
            if used:
                bad.append(f"{name}:{node.lineno}: warns {sorted(used)} (use assay._compat)")
    for n, line in enumerate(text.splitlines(), 1):
        if re.search("deprecat", line, re.I) and "filterwarnings" not in line:
            bad.append(f"{name}:{n}: says deprecated (declare the rename in assay._compat)")
    return bad


def test_no_module_but_compat_deprecates_by_itself() -> None:
    bad = [
        line
        for name, path, tree in MODULES
        if name != "assay._compat"
        for line in self_made(name, path.read_text(), tree)
    ]
    assert not bad, bad


def test_the_source_check_finds_an_alias_made_by_hand() -> None:
    text = (
        "import warnings\n"
        "from warnings import warn\n"
        "def f(*, positive_label=1, pos_label=None):\n"
        "    warnings.warn('pos_label is old', DeprecationWarning)\n"
        "    warn('old', category=FutureWarning)\n"
        "def g(*, column=None):  # the deprecated name of group_column\n"
        "    warnings.filterwarnings('ignore', category=DeprecationWarning)\n"
    )
    found = self_made("pkg.mod", text, ast.parse(text))
    where = [line.split(": ", 1)[0] for line in found]  # line 4 twice: warns and says it
    assert where == ["pkg.mod:4", "pkg.mod:5", "pkg.mod:4", "pkg.mod:6"]


# ------------------------------------------------------------------- the helpers themselves


def test_a_deprecated_keyword_warns_names_the_new_one_and_works() -> None:
    @deprecated_keywords(pos_label="positive_label")
    def share(values: list[int], *, positive_label: int = 1) -> float:
        return sum(v == positive_label for v in values) / len(values)

    with pytest.warns(DeprecationWarning, match="share: pos_label= .* use positive_label="):
        assert share([0, 0, 1, 1], pos_label=0) == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert share([0, 0, 0, 1], positive_label=0) == 0.75
    with pytest.raises(InvalidInputError, match="give positive_label= only"):
        share([0], pos_label=0, positive_label=0)
    assert ALIASES[-1].kind == "keyword" and ALIASES[-1].new == "positive_label"
    ALIASES.pop()


def test_a_removed_keyword_fails_naming_the_new_one_on_functions_and_classes() -> None:
    @removed_keywords(max_concurrency="concurrency")
    class Options:
        def __init__(self, *, concurrency: int = 8) -> None:
            self.concurrency = concurrency

    with pytest.raises(TypeError, match="Options: max_concurrency= was renamed; use concurrency="):
        Options(max_concurrency=2)
    assert Options(concurrency=2).concurrency == 2
    ALIASES.pop()


def test_a_deprecated_name_and_flag() -> None:
    getattr_ = deprecated_names("assay.errors", Invalid="InvalidInputError")
    with pytest.warns(DeprecationWarning, match="use assay.errors.InvalidInputError"):
        assert getattr_("Invalid") is InvalidInputError
    with pytest.raises(AttributeError):
        getattr_("Nope")
    ALIASES.pop()
    flag = DeprecatedFlag("--n-boot", "--num-bootstrap")
    assert flag.value(None, 7) == 7
    with pytest.raises(InvalidInputError, match="give --num-bootstrap only"):
        flag.value(5, 7)
    ALIASES.pop()
    assert removed_flag_message("No such option: --confidence (Possible options: --cache)") == (
        "No such option: --confidence (it was renamed: use --ci)"
    )


def test_the_renamed_judge_option_fails_naming_the_new_one() -> None:
    from assay.llm.judge.run import judge
    from assay.llm.options import RunOptions

    with pytest.raises(RemovedNameError, match="max_concurrency= was renamed; use concurrency="):
        RunOptions(max_concurrency=4)
    with pytest.raises(TypeError, match="use concurrency="):  # judge(**run) builds RunOptions
        judge([], ["Faithfulness"], max_concurrency=4)
    assert RunOptions(concurrency=4).concurrency == 4
