"""Package namespaces whose names load on first use (PEP 562).

A domain package re-exports its public names from submodules; importing them eagerly would
make ``import assay.<domain>.cli`` (done for ``assay --help``) load the domain's numpy and
pandas code. :func:`lazy_exports` returns the module ``__getattr__`` and ``__dir__`` that
import a name's submodule only when the name is first used.

Example:
    >>> where = {"PR_CURVE_SCORE_THRESHOLDS": "assay.thresholds"}
    >>> getattr_, dir_ = lazy_exports("assay.thresholds", where)
    >>> getattr_("PR_CURVE_SCORE_THRESHOLDS")[0]
    0.05
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``where`` maps name -> module."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
