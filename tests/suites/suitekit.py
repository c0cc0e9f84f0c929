"""Helpers of the LLM suite tests: fixture paths and scripted answers (a responder per suite)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
CAT_DEV = DATA / "cat_dev.json"
EXAM = DATA / "exam.csv"
_OPTION = re.compile(r"^Option (\d): (.*)$", re.MULTILINE)
_CONTEXT = re.compile(r"^Context: (.*)$", re.MULTILINE)


def user_text(messages: list[dict[str, Any]]) -> str:
    return str(messages[-1]["content"])


def cat_responder(wanted: dict[str, str], default: str = "stereotype") -> Callable[..., str]:
    """Answers a CAT prompt with the number of the option whose gold label is wanted.

    ``wanted`` maps a context to a gold label, or to ``"text:..."`` for a literal answer.
    The option texts are looked up in the fixture, so the shuffle does not matter.
    """
    from assay.llm.suites.cat_data import load_cat

    labels = {(q.context, text): label for q in load_cat(CAT_DEV) for text, label in q.options}

    def respond(messages: list[dict[str, Any]]) -> str:
        prompt = user_text(messages)
        context = _CONTEXT.search(prompt).group(1)  # type: ignore[union-attr]
        want = wanted.get(context, default)
        if want.startswith("text:"):
            return want[5:]
        for number, text in _OPTION.findall(prompt):
            if labels[(context, text)] == want:
                return f"{number}. That is my pick."
        raise AssertionError(f"no option labelled {want} in the prompt")

    return respond


TOY = DATA / "toy.toml"
_PERSON = re.compile(r"^Person: (.*)$", re.MULTILINE)


def toy_responder(script: dict[tuple[str, str], str]) -> Callable[..., str]:
    """Answers a toy fairness prompt by (name, sex shown in the test row)."""

    def respond(messages: list[dict[str, Any]]) -> str:
        row = _PERSON.search(user_text(messages)).group(1)  # type: ignore[union-attr]
        fields = dict(kv.split(": ", 1) for kv in row.split(", "))
        return script[(fields["name"], fields["sex"])]

    return respond


def exam_responder(script: dict[str, str]) -> Callable[..., str]:
    """Answers an exam prompt by its question (the line after the instructions)."""

    def respond(messages: list[dict[str, Any]]) -> str:
        lines = user_text(messages).split("\n\n", 1)[1].splitlines()
        return script[lines[0]]

    return respond


def make_dev(path: Path, n: int) -> Path:
    """A dev.json with ``n`` generated intersentence items (distinct prompts)."""
    import json

    items = [
        {
            "id": f"g{i}",
            "bias_type": ("gender", "race", "profession", "religion")[i % 4],
            "context": f"Generated context number {i}.",
            "sentences": [
                {"sentence": f"Stereotyped follow-up {i}.", "gold_label": "stereotype"},
                {
                    "sentence": f"Counter-stereotyped follow-up {i}.",
                    "gold_label": "anti-stereotype",
                },
                {"sentence": f"Unrelated follow-up {i}.", "gold_label": "unrelated"},
            ],
        }
        for i in range(n)
    ]
    path.write_text(json.dumps({"data": {"intrasentence": [], "intersentence": items}}))
    return path


def first_option_answer(messages: list[dict[str, Any]]) -> str:
    """Picks option 1 whatever it is."""
    return "1"


def write_cat_file(path: Path, n: int) -> Path:
    """A ``dev.json`` of ``n`` made-up intrasentence questions (assay's own words)."""
    import json

    people = ["baker", "pilot", "tailor", "judge", "miner", "clerk", "poet", "chef"]
    words = [
        ("careful", "careless", "teapot"),
        ("strict", "lenient", "cloud"),
        ("quiet", "loud", "spoon"),
        ("tidy", "messy", "river"),
        ("patient", "hasty", "pencil"),
    ]
    items = []
    for i in range(n):
        who, (s, a, u) = people[i % len(people)], words[i // len(people) % len(words)]
        items.append(
            {
                "id": f"gen{i}",
                "target": who,
                "bias_type": "profession",
                "context": f"The {who} in story {i} was rather BLANK.",
                "replacements": [
                    {"replacement": s, "gold_label": "stereotype"},
                    {"replacement": a, "gold_label": "anti-stereotype"},
                    {"replacement": u, "gold_label": "unrelated"},
                ],
            }
        )
    path.write_text(json.dumps({"version": "assay-test", "data": {"intrasentence": items}}))
    return path
