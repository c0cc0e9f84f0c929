"""The scripted judge: the real loopback chat server answering each judge prompt by rule.

A named module (not conftest) so tests can import its helpers whatever conftest pytest
loaded first."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from assay.llm.judge import JUDGE_METRICS
from assay.llm.judge.prompts import template
from assay.testing.llm import FakeChatServer

PROMPTS = ["statements", "opinions", "claims", *JUDGE_METRICS]
_HEADS = {template(p)[:60]: p for p in PROMPTS}


def prompt_name(user_text: str) -> str:
    for head, name in _HEADS.items():
        if user_text.startswith(head):
            return name
    raise AssertionError(f"unknown prompt: {user_text[:80]!r}")


def field(user_text: str, label: str) -> str:
    """The text after ``label:`` up to the end of its line (the last such line)."""
    found = re.findall(rf"^{re.escape(label)}: (.*)$", user_text, flags=re.M)
    return found[-1]


def counts(user_text: str) -> list[int]:
    """The list lengths the prompt asks for ("exactly N entries")."""
    return [int(n) for n in re.findall(r"exactly (\d+) entries", user_text)]


def verdicts(*vs: str) -> str:
    return json.dumps({"verdicts": [{"verdict": v, "reason": f"r{i}"} for i, v in enumerate(vs)]})


def _default(name: str, text: str) -> str:
    if name in ("statements", "claims"):
        body = field(text, "Text")
        items = [s.strip() + "." for s in body.split(".") if s.strip()]
        return json.dumps({name: items})
    if name == "opinions":
        body = field(text, "Text")
        return json.dumps({"opinions": [s.strip() for s in body.split(".") if "think" in s]})
    if name in ("coherence", "summary_coherence"):
        return json.dumps({"analysis": "reads well", "score": 4})
    if name == "answer_correctness":
        a, b = counts(text)
        return json.dumps(
            {
                "answer_verdicts": [{"verdict": "yes", "reason": ""}] * a,
                "reference_verdicts": [{"verdict": "yes", "reason": ""}] * b,
            }
        )
    (n,) = counts(text)
    return verdicts(*["yes"] * n)


class ScriptedJudge:
    """Answers by prompt kind; ``rules[kind](user_text, attempt)`` overrides the default."""

    def __init__(self) -> None:
        self.rules: dict[str, Callable[[str, int], str]] = {}
        self.asked: Counter[str] = Counter()
        self.server = FakeChatServer(responder=self.respond)

    def respond(self, messages: list[dict[str, Any]]) -> str:
        first = next(m["content"] for m in messages if m["role"] == "user")
        attempt = sum(m["role"] == "assistant" for m in messages)
        name = prompt_name(first)
        self.asked[name] += 1
        if name in self.rules:
            return self.rules[name](first, attempt)
        return _default(name, first)

    def reset(self) -> None:
        self.server.reset()
        self.asked = Counter()
        self.rules = {}
