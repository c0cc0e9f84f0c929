"""Records pinned byte for byte: every LLM evaluation's output before the one-driver refactor.

The JSON files under ``tests/data/records_pinned/`` were written by this test
(``ASSAY_PIN_RECORDS=write``) from the code as it was *before* the suites, the judge and
pairwise judging moved onto one driver (issue 20), and committed with it. Each scenario runs
a CLI command against the loopback chat server with a scripted, deterministic responder
(some invalid replies, one failing prompt) and compares:

* the metric records (``--out``), byte for byte;
* the item rows stored for the run (prompt, params, raw answer, parsed result, error,
  attempts, cached), i.e. every call behind the numbers and its prompt.

The evaluator contract cases of the suites, the judge and pairwise (their records over the
joined batches) and the shipped DevBench record table re-scored by ``assay pairwise score``
are pinned the same way.
"""

from __future__ import annotations

import importlib
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

TESTS = Path(__file__).resolve().parents[1]
PINNED = TESTS / "data" / "records_pinned"
SUITES = TESTS / "suites" / "data"
DEVBENCH = TESTS / "data" / "devbench"
WRITE = os.environ.get("ASSAY_PIN_RECORDS") == "write"
_ITEM_KEYS = (
    "item_id", "prompt", "params", "ok", "raw_answer", "parsed", "error_kind", "status",
    "error", "attempts", "cached",
)  # fmt: skip


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def _last_user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")


class _FailWhen(dict):
    """A server plan: every call whose prompt matches ``pred`` gets a 400 (not retried)."""

    def __init__(self, pred: Callable[[str], bool]) -> None:
        super().__init__()
        self.pred = pred

    def get(self, prompt: str, default: Any = None) -> Any:  # type: ignore[override]
        return ["400"] if self.pred(prompt) else default


def _pick(options: list[str]) -> Callable[[list[dict[str, Any]]], str]:
    return lambda messages: options[_crc(_last_user(messages)) % len(options)]


def _judge_reply(messages: list[dict[str, Any]]) -> str:
    """Valid judge replies, except a first attempt whose prompt hashes to 0 mod 5 (re-asked)
    and every attempt of prompts hashing to 7 mod 13 (kept invalid after the re-asks)."""
    import re

    text = next(str(m["content"]) for m in messages if m["role"] == "user")
    attempt = sum(m["role"] == "assistant" for m in messages)
    h = _crc(text)
    if (attempt == 0 and h % 5 == 0) or h % 13 == 7:
        return "I would rather not answer in JSON."
    for kind in ("statements", "opinions", "claims"):
        if f'{{"{kind}": [' in text and "Text:" in text:
            body = re.findall(r"^Text: (.*)$", text, flags=re.M)[-1]
            return json.dumps({kind: [s.strip() + "." for s in body.split(".") if s.strip()]})
    n = [int(x) for x in re.findall(r"exactly (\d+) entries", text)]
    vs = ["yes", "no", "idk"]

    def verdicts(k: int, salt: int) -> list[dict[str, str]]:
        return [{"verdict": vs[(h + salt + i) % 3], "reason": f"r{i}"} for i in range(k)]

    if len(n) == 2:
        return json.dumps(
            {"answer_verdicts": verdicts(n[0], 0), "reference_verdicts": verdicts(n[1], 1)}
        )
    if n:
        return json.dumps({"verdicts": verdicts(n[0], 0)})
    return json.dumps({"analysis": "ok", "score": 1 + h % 5})


_TEXT_ROWS = [
    {
        "uid": "a",
        "query": "Where is the tower?",
        "prediction": "The tower is in Paris. I think it is lovely. It is tall.",
        "groundtruth": ["The tower is in Paris.", "It is in France."],
        "context": ["Paris has a tower.", "France is in Europe."],
    },
    {
        "uid": "b",
        "query": "How tall is it?",
        "prediction": "It is 330 metres tall. I think that is a lot.",
        "groundtruth": "The tower is 330 metres tall.",
        "context": ["The tower is 330 metres tall.", "It was built in 1889."],
    },
    {
        "uid": "c",
        "query": "Who built it?",
        "prediction": "Gustave Eiffel's company built it.",
        "groundtruth": ["Eiffel's company built it."],
        "context": ["Eiffel's engineers designed the tower."],
    },
]
_JUDGE_METRICS = (
    "rouge,bleu,answer_correctness,answer_relevance,bias,toxicity,coherence,summary_coherence,"
    "context_precision,context_recall,context_relevance,faithfulness,hallucination"
)


def _pairwise_table(path: Path) -> Path:
    rules = ["quality", "first", "second", "both", "garbage", "letter:Z", "neither", "quality"]
    table = make_table(rules, {"m1": [3, 1, 2, 2, 2, 2, 2, 4], "m2": [1, 3, -1, 2, 2, 2, 2, 4],
                               "ref": [2, 2, 2, 2, 2, 2, 2, 4]})  # fmt: skip
    table.loc[7, "answer-m1"] = table.loc[7, "answer-ref"]  # an exact match, never sent
    table.to_csv(path, index=False)
    return path


def _scenarios(tmp: Path) -> dict[str, tuple[list[str], Any, Callable[[str], bool], str]]:
    """name -> (CLI args, responder, failing prompts, kind of the stored run)."""
    text_data = tmp / "text.jsonl"
    text_data.write_text("".join(json.dumps(r) + "\n" for r in _TEXT_ROWS))
    table = _pairwise_table(tmp / "pairs.csv")
    pw = ["pairwise", "judge", "--data", str(table), "--models", "m1,m2", "--reference-model",
          "ref", "--out-dir", str(tmp / "runs"), "--num-bootstrap", "20", "--no-cache", "--quiet",
          "--retries", "0", "--save"]  # fmt: skip
    return {
        "suite_cat": (
            ["llm", "cat", "--data", str(SUITES / "cat_dev.json"), "--seed", "3"],
            _pick(["1", "2. I pick two", "3", "I refuse", "2", "1"]),
            lambda p: _crc(p) % 6 == 1,
            "llm_cat",
        ),
        "suite_fairness": (
            ["llm", "fairness", "--dataset-file", str(SUITES / "toy.toml"), "--seed", "3"],
            _pick(["Y", "N", "maybe", "N", "Y"]),
            lambda p: _crc(p) % 7 == 2,
            "llm_fairness",
        ),
        "suite_language": (
            ["llm", "language", "--data", str(SUITES / "exam.csv")],
            _pick(['{"choice": "Paris"}', '{"choice": "eight"}', "B", "zz", '{"choice": "siete"}']),
            lambda p: _crc(p) % 6 == 0,
            "llm_language",
        ),
        "judge_text": (
            [
                "text",
                "--data",
                str(text_data),
                "--metrics",
                _JUDGE_METRICS,
                "--no-cache",
                "--save",
                "--seed",
                "4",
            ],  # fmt: skip
            _judge_reply,
            lambda p: _crc(p) % 11 == 3,
            "text",
        ),
        "pairwise_dual": (
            [*pw, "--nopt", "4"],
            scripted_judge(),
            lambda p: "Question 6" in p and "quality=2\n</response_1>" in p,
            "pairwise",
        ),
        "pairwise_random": (
            [*pw, "--nopt", "3", "--mode", "random", "--seed", "7"],
            scripted_judge(),
            lambda p: "Question 2 " in p,
            "pairwise",
        ),
    }


def _pinned(name: str, value: Any) -> None:
    path = PINNED / f"{name}.json"
    text = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if WRITE:
        PINNED.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} missing (ASSAY_PIN_RECORDS=write creates it)"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name}: records differ from the pinned ones"


def _read_records(out: Path) -> list[Any]:
    text = out.read_text(encoding="utf-8")
    if out.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines()]
    return json.loads(text)


@pytest.mark.parametrize(
    "name",
    [
        "suite_cat",
        "suite_fairness",
        "suite_language",
        "judge_text",
        "pairwise_dual",
        "pairwise_random",
    ],  # fmt: skip
)
def test_cli_records_and_item_rows_are_pinned(name: str, tmp_path: Path) -> None:
    args, responder, fails, kind = _scenarios(tmp_path)[name]
    out = tmp_path / ("out.jsonl" if name.startswith("judge") else "out.json")
    db = tmp_path / "store.db"
    with FakeChatServer(responder=responder, hang_seconds=5) as srv:
        srv.plan = _FailWhen(fails)
        model_opt = "--judge" if name.startswith("pairwise") else "--model"
        extra = [] if name.startswith(("judge", "pairwise")) else ["--no-cache", "--retries", "0"]
        result = CliRunner().invoke(
            app, [*args, *extra, model_opt, srv.spec(), "--out", str(out), "--db", str(db)]
        )
        calls = srv.calls
    assert out.exists(), result.output
    records = _read_records(out)
    with Store(str(db)) as store:
        (ev,) = store.list(kind=kind)
        full = store.get(ev.id, items=True)
    items = [{k: it.to_dict()[k] for k in _ITEM_KEYS} for it in full.items or []]
    assert sum(it["attempts"] for it in items) == calls  # every paid call has its row
    assert any(not it["ok"] for it in items)  # the scenario has a failing call
    _pinned(name, {"records": records, "items": items})


def test_devbench_rescored_records_are_pinned(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(DEVBENCH / "record_gpt-4-1106-preview_2.tsv"),
            "--reference-model",
            "gpt-3.5-turbo-1106",
            "--nopt",
            "2",
            "--out-dir",
            str(tmp_path / "runs"),
            "--out",
            str(out),
        ],  # fmt: skip
    )
    assert result.exit_code == 0, result.output
    _pinned("pairwise_devbench_score", json.loads(out.read_text()))


def _contract_cases() -> list[Any]:
    cases = []
    for module in ("cases_suites", "cases_judge", "cases_pairwise"):
        cases.extend(importlib.import_module(f"contract.{module}").CASES)
    return cases


@pytest.mark.parametrize("case", _contract_cases(), ids=lambda c: c.name)
def test_contract_case_records_are_pinned(case: Any) -> None:
    ev = case.make()
    case.add(ev, case.concat(case.batches))
    _pinned(f"contract_{case.name}", ev.compute().to_list())
