"""Lazy package exports (PEP 562): a package names its public objects without importing
the modules that hold them until first use, so ``import assay.<domain>.cli`` (for
``assay --help``) stays light.

Example:
    >>> getattr_, dir_ = lazy_exports("pkg", {"sqrt": "math"})
    >>> getattr_("sqrt")(9.0)
    3.0
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``name`` is loaded from ``exports[name]``
    (a module path) on first access and then cached in the package's namespace."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        module = sys.modules.get(package)
        if module is not None:
            setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        module = sys.modules.get(package)
        return sorted({*(vars(module) if module else {}), *exports})

    return __getattr__, __dir__
