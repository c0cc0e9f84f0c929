"""``assay pairwise judge --repeats K``: K calls per comparison (distinct seeds, cached per
repeat), the records of repeat 0 unchanged, and a JudgeRepeatability record."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

runner = CliRunner()
N, K = 6, 3


def _noisy():
    """The scripted judge, except that on questions 0 and 1 every second ask of the same
    prompt picks the other response."""
    base, seen = scripted_judge(), Counter()

    def respond(messages: list[dict]) -> str:
        text = str(messages[-1]["content"])
        seen[text] += 1
        reply = base(messages)
        if ("Question 0 " in text or "Question 1 " in text) and seen[text] % 2 == 0:
            return (
                reply.replace("Choice: A", "Choice: X")
                .replace("Choice: B", "Choice: A")
                .replace("Choice: X", "Choice: B")
            )
        return reply

    return respond


def _judge(srv, tmp: Path, *extra: str):
    data = tmp / "t.csv"
    make_table(["quality"] * N, {"m1": [3] * N, "ref": [1] * N}).to_csv(data, index=False)
    return runner.invoke(
        app,
        ["pairwise", "judge", "--data", str(data), "--models", "m1", "--reference-model", "ref",
         "--judge", srv.spec(), "--out-dir", str(tmp / "runs"), "--quiet", "--num-bootstrap",
         "50", "--cache", str(tmp / "c.sqlite"), *extra],
    )  # fmt: skip


def test_repeats_calls_and_record(tmp_path: Path) -> None:
    with FakeChatServer(responder=_noisy()) as srv:
        r = _judge(srv, tmp_path, "--repeats", str(K))
        assert r.exit_code == 0, r.output
        paid = srv.calls
        assert paid == K * 2 * N  # both orders of every question, K times
        again = _judge(srv, tmp_path, "--repeats", str(K))
        assert again.exit_code == 0 and srv.calls == paid  # cached per repeat
    records = json.loads(r.stdout)
    [rep] = [m for m in records if m["type"] == "JudgeRepeatability"]
    v, p = rep["value"], rep["parameters"]
    assert p["repeats"] == K and p["n"] == N and p["n_calls"] == 2 * N
    # questions 0 and 1 flip on the second ask of each order: both orders flip together,
    # so the debiased outcome goes 1, 0, 1 there
    assert v["choice_flakiness"] == pytest.approx(4 / (2 * N))
    assert v["flakiness"] == pytest.approx(2 / N)
    noise = (2 * 1 / 3) / N  # var([1, 0, 1], ddof=1) = 1/3 on two of N outcomes
    assert v["judge_noise_variance"] == pytest.approx(noise)
    rest = [m for m in records if m["type"] != "JudgeRepeatability"]
    assert rest  # the records of repeat 0


def test_repeats_zero_refused_before_any_call(tmp_path: Path) -> None:
    with FakeChatServer(responder=scripted_judge()) as srv:
        r = _judge(srv, tmp_path, "--repeats", "0")
        assert srv.calls == 0
    assert r.exit_code == 2 and "--repeats" in r.output and "Traceback" not in r.output
