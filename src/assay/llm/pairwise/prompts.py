"""The judge prompt (versioned package data) and the strict extraction of the judge's choice.

The prompt is one user message: the criteria (the row's evaluating guidance plus three
fixed rules), a plea for impartiality, the 2, 3 or 4 options, the reply format
(``Choice: X`` then the reasons), the question, the two responses and, when the row has
one, a reference answer. The texts live in ``prompts/*.v1.txt``; a change of wording is a
new version (``v2``), so cached judge calls and stored runs stay traceable to the words
that produced them.

What each option means:

======  ==========================  ==========================  ================================
option  2 options                   3 options                   4 options
======  ==========================  ==========================  ================================
A       Response 1 is better        Response 1 is better        only Response 1 is good
B       Response 2 is better        Response 2 is better        only Response 2 is good
C       (not offered)               both are good               both are good
D       (not offered)               (not offered)               neither is good
======  ==========================  ==========================  ================================

Extraction follows the original SubEval rule so that old records re-score to the same
numbers: the first ``Choice: X`` (exactly one space) or ``选择：X`` with X in A-D. A reply
without one is an extraction failure; so is a letter the prompt did not offer (C or D
with 2 options), which the original would have accepted. Nothing is guessed.

Example:
    >>> extract_choice("Choice: B\\nReason: ...", nopt=2)
    Choice(letter='B', reason=None)
    >>> extract_choice("I prefer the second one.", nopt=2).reason
    "no 'Choice: X' in the reply"
    >>> extract_choice("Choice: C", nopt=2).reason
    'option C is not one of the 2 options offered'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from assay.errors import InvalidInputError

__all__ = ["PROMPT_VERSION", "OPTION_LETTERS", "Choice", "build_prompt", "extract_choice"]

#: The version of the prompt files in use (part of every stored run's parameters).
PROMPT_VERSION = "v1"

#: The letters offered for each number of options.
OPTION_LETTERS = {2: "AB", 3: "ABC", 4: "ABCD"}

_CHOICE = re.compile(r"(?:选择：|Choice: )([ABCD])")
_SLOT = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Choice:
    """The extracted option letter, or ``None`` with the reason extraction failed."""

    letter: str | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.letter is not None


def check_nopt(nopt: int) -> int:
    """``nopt`` must be 2, 3 or 4."""
    if nopt not in OPTION_LETTERS:
        raise InvalidInputError(f"must be 2, 3 or 4, got {nopt!r}", source="--nopt")
    return int(nopt)


@cache
def _template(name: str) -> str:
    path = resources.files("assay.llm.pairwise").joinpath("prompts", f"{name}.{PROMPT_VERSION}.txt")
    return path.read_text(encoding="utf-8")


def _fill(template: str, values: dict[str, str]) -> str:
    """Replace each ``{{name}}`` once; text inside the values is never re-read as a slot."""
    return _SLOT.sub(lambda m: values[m.group(1)], template)


def build_prompt(
    *,
    question: str,
    response_1: str,
    response_2: str,
    guidance: str,
    nopt: int,
    reference_answer: str | None = None,
) -> str:
    """The judge's user message for one comparison.

    Example:
        >>> p = build_prompt(question="2+2?", response_1="4", response_2="5",
        ...                  guidance="Correctness.", nopt=3)
        >>> "C. Both responses are good." in p, "<response_2>\\n5\\n</response_2>" in p
        (True, True)
    """
    check_nopt(nopt)
    reference = ""
    if reference_answer is not None and str(reference_answer).strip():
        reference = _fill(_template("reference"), {"reference_answer": str(reference_answer)})
    values = {
        "criteria": str(guidance).strip(),
        "options": _template(f"options_{nopt}").rstrip("\n"),
        "question": str(question),
        "response_1": str(response_1),
        "response_2": str(response_2),
        "reference": reference,
    }
    return _fill(_template("judge"), values).rstrip("\n") + "\n"


def extract_choice(reply: str | None, *, nopt: int) -> Choice:
    """The option the judge chose (see the module docstring for the rule)."""
    if reply is None:
        return Choice(None, "no reply")
    m = _CHOICE.search(str(reply))
    if m is None:
        return Choice(None, "no 'Choice: X' in the reply")
    letter = m.group(1)
    if letter not in OPTION_LETTERS[check_nopt(nopt)]:
        return Choice(None, f"option {letter} is not one of the {nopt} options offered")
    return Choice(letter)
