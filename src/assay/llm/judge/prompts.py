"""The judge's prompts: versioned text files shipped in the package (``prompts/v1/*.txt``).

Templates use ``$name`` placeholders (:class:`string.Template`); values are inserted as
they are, so braces and dollar signs in user text are safe. The version is recorded in
every judge record (``parameters["prompt_version"]``), so a change of wording is a new
folder, never a silent edit.

Example:
    >>> "$text" in template("statements")
    True
    >>> numbered(["a", "b"])
    '1. a\\n2. b'
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template
from typing import Any

__all__ = ["PROMPT_VERSION", "template", "render", "numbered", "messages"]

PROMPT_VERSION = "v1"


@cache
def template(name: str, version: str = PROMPT_VERSION) -> str:
    """The text of one prompt file."""
    return (resources.files("assay.llm.judge") / "prompts" / version / f"{name}.txt").read_text(
        encoding="utf-8"
    )


def render(name: str, **values: Any) -> str:
    """A prompt with its placeholders filled."""
    return Template(template(name)).substitute(**{k: str(v) for k, v in values.items()})


def numbered(items: list[str]) -> str:
    """``1. first`` / ``2. second`` ... (the lists the judge gives one verdict per line to)."""
    return "\n".join(f"{i}. {s}" for i, s in enumerate(items, start=1))


def messages(name: str, **values: Any) -> tuple[dict[str, str], ...]:
    """System and user messages of one judge call."""
    return (
        {"role": "system", "content": template("system").strip()},
        {"role": "user", "content": render(name, **values).strip()},
    )
