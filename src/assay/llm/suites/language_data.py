"""Reading a Kaleidoscope-style exam CSV: ``language, question, options, answer``.

``options`` is a list of texts in JSON (``["a", "b"]``), Python (``['a', 'b']``) or numpy
(``['a' 'b']``, the form of the original export) notation; ``answer`` is the 0-based index
of the right option. A missing column, an unreadable option list, fewer than two options,
or an answer index that is not an integer in range, or an empty language or one named
``all`` (:data:`OVERALL`, the name of the records over every language) is an
:class:`~assay.errors.InvalidInputError` naming the file, the line and the field.

Example:
    >>> split_options("['Rome' 'Paris' \\"Côte d'Ivoire\\"]")
    ['Rome', 'Paris', "Côte d'Ivoire"]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import InvalidInputError

__all__ = ["ExamRow", "load_exam", "split_options", "EXAM_COLUMNS", "OVERALL"]

EXAM_COLUMNS = ("language", "question", "options", "answer")
#: ``parameters.language`` of the records over every language (no language may be named so)
OVERALL = "all"
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


@dataclass(frozen=True)
class ExamRow:
    """One question; ``position`` is its 0-based row number in the file."""

    position: int
    language: str
    question: str
    options: tuple[str, ...]
    answer: int
    #: every cell of the row by column (what slices may name: ``language``, ``subject``, ...)
    columns: Mapping[str, str] = field(default_factory=dict, compare=False)


def split_options(text: str) -> list[str]:
    """The option texts of one ``options`` cell (see the module docstring)."""
    t = text.strip()
    try:
        doc = json.loads(t)
        if isinstance(doc, list) and all(isinstance(x, str) for x in doc):
            return doc
    except ValueError:
        pass
    if not (t.startswith("[") and t.endswith("]")):
        raise InvalidInputError("expected a bracketed list of quoted texts", field="options")
    return [a if a or not b else b for a, b in _QUOTED.findall(t[1:-1])]


def load_exam(path: str | Path) -> list[ExamRow]:
    """Every row of an exam CSV, validated before any model call."""
    import pandas as pd

    src = str(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read the CSV: {e}", source=src) from None
    for col in EXAM_COLUMNS:
        if col not in df.columns:
            raise InvalidInputError("missing column", source=src, field=col)
    if df.empty:
        raise InvalidInputError("no rows", source=src)
    out = []
    cells = df.to_dict(orient="records")
    for pos, rec in enumerate(df[list(EXAM_COLUMNS)].itertuples(index=False)):
        line = f"line {pos + 2}"
        try:
            options = split_options(rec.options)
        except InvalidInputError as e:
            raise InvalidInputError(e.reason, source=src, record=line, field="options") from None
        if len(options) < 2:
            raise InvalidInputError(
                "needs at least two options", source=src, record=line, field="options"
            )
        try:
            answer = int(rec.answer)
        except ValueError:
            raise InvalidInputError(
                f"expected an integer, got {rec.answer!r}", source=src, record=line, field="answer"
            ) from None
        if not 0 <= answer < len(options):
            raise InvalidInputError(
                f"index {answer} is out of range for {len(options)} options",
                source=src,
                record=line,
                field="answer",
            )
        if not rec.language.strip():
            raise InvalidInputError("empty", source=src, record=line, field="language")
        if rec.language.strip() == OVERALL:
            raise InvalidInputError(
                f"{OVERALL!r} names the records over every language; rename this language",
                source=src, record=line, field="language",
            )  # fmt: skip
        row = ExamRow(pos, rec.language.strip(), rec.question, tuple(options), answer, cells[pos])
        out.append(row)
    return out
