"""LLM tasks run through the one driver with a scripted in-process model (contract cases).

:class:`Scripted` answers every prompt of a CAT suite, the judge metrics and pairwise judging
deterministically (by a hash of the prompt, so answers vary), counts its calls per prompt,
and can raise SIGINT in its own process after ``interrupt_after`` answers (an interrupted
run, as Ctrl-C would stop it). :func:`tasks` builds the three tasks on small generated data.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from assay.llm.models.base import ChatResponse, Usage
from assay.testing.pairwise import make_table, scripted_judge

_PAIRWISE = scripted_judge()


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def answer(messages: list[dict[str, Any]]) -> str:
    """The scripted reply to any prompt of the three tasks."""
    text = str(messages[-1]["content"])
    first = next(str(m["content"]) for m in messages if m["role"] == "user")
    h = _crc(first)
    if "Option 1:" in text:
        return ["1", "2", "3", "no idea"][h % 4]
    if "<response_1>" in text:
        return _PAIRWISE(messages)
    for kind in ("statements", "opinions", "claims"):
        if f'{{"{kind}": [' in first:
            body = re.findall(r"^Text: (.*)$", first, flags=re.M)[-1]
            return json.dumps({kind: [s.strip() + "." for s in body.split(".") if s.strip()]})
    n = [int(x) for x in re.findall(r"exactly (\d+) entries", first)]
    verdicts = [{"verdict": ["yes", "no", "idk"][(h + i) % 3], "reason": "r"} for i in range(n[0])]
    return json.dumps({"verdicts": verdicts}) if n else json.dumps({"analysis": "a", "score": 3})


class Scripted:
    """A scripted in-process chat model (see the module docstring)."""

    name = spec = identity = "scripted"

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.asked: Counter[str] = Counter()
        self.interrupt_after = interrupt_after

    async def chat(self, messages: Any, **params: Any) -> ChatResponse:
        await asyncio.sleep(0)
        if self.interrupt_after is not None and sum(self.asked.values()) >= self.interrupt_after:
            self.interrupt_after = None  # one Ctrl-C (a second one means "stop at once")
            signal.raise_signal(signal.SIGINT)
            await asyncio.sleep(5)  # the interrupt lands while this call is in flight
        self.asked[json.dumps(list(messages), sort_keys=True)] += 1
        return ChatResponse(answer(list(messages)), Usage(1, 1), 0.0)


_DIR = Path(tempfile.mkdtemp(prefix="assay-contract-llm-"))


def _cat_dev(n: int) -> Path:
    items = [
        {
            "id": f"g{i}",
            "bias_type": ("gender", "race", "profession", "religion")[i % 4],
            "context": f"Generated context number {i}.",
            "sentences": [
                {"sentence": f"Stereotyped follow-up {i}.", "gold_label": "stereotype"},
                {"sentence": f"Counter follow-up {i}.", "gold_label": "anti-stereotype"},
                {"sentence": f"Unrelated follow-up {i}.", "gold_label": "unrelated"},
            ],
        }
        for i in range(n)
    ]
    path = _DIR / "dev.json"
    path.write_text(json.dumps({"data": {"intrasentence": [], "intersentence": items}}))
    return path


def tasks() -> dict[str, Any]:
    """Fresh suite, judge and pairwise tasks on small generated data."""
    from assay.llm.judge import Datum
    from assay.llm.judge.run import JudgeTask
    from assay.llm.pairwise.task import PairwiseTask
    from assay.llm.suites.cat import CATSuite

    data = [
        Datum(f"d{i}", f"Question {i}?", f"It is {i}. I think so. Done {i}.", ("g",), ("c",))
        for i in range(12)
    ]
    n = 9
    table = make_table(
        ["quality", "first", "second"] * 3,
        {"m1": [3, 1, 2] * 3, "m2": [1, 2, 3] * 3, "ref": [2] * n},
    )
    return {
        "suite": CATSuite(str(_cat_dev(36))),
        "judge": JudgeTask(data, ["faithfulness", "bias", "answer_relevance"], num_bootstrap=50),
        "pairwise": PairwiseTask(
            table, models=["m1", "m2"], reference_model="ref", num_bootstrap=20
        ),
    }
