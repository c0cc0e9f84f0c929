"""``assay text --repeats K``: K judgement calls per datum and metric (extractions once),
each cached (a rerun pays nothing); per-datum means, the aggregate over them, and the
JudgeRepeatability record (flakiness, the judge's noise and the between-item variance)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from judgekit import counts, verdicts
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()
N, K = 8, 3


def _data(tmp: Path) -> Path:
    rows = [{"uid": f"u{i}", "query": f"Q{i}?", "prediction": f"One {i}. Two {i}.",
             "groundtruth": "R.", "context": [f"C{i}."]} for i in range(N)]  # fmt: skip
    p = tmp / "t.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _noisy():
    """A judge that changes its mind: the datums whose text has an even number answer 'no'
    to their first claim on every second ask of the same prompt."""
    seen: Counter[str] = Counter()

    def rule(text: str, attempt: int) -> str:
        seen[text] += 1
        (n,) = counts(text)
        even = any(f"One {i}." in text for i in range(0, N, 2))
        first = "no" if even and seen[text] % 2 == 0 else "yes"
        return verdicts(first, *["yes"] * (n - 1))

    return rule


def test_repeats_calls_records_and_cache(scripted, tmp_path: Path) -> None:
    scripted.rules["faithfulness"] = _noisy()
    data, cache = _data(tmp_path), str(tmp_path / "c.sqlite")
    args = ["text", "--data", str(data), "--metrics", "faithfulness", "-m",
            scripted.server.spec(), "--repeats", str(K), "--cache", cache, "-q", "--ci", "0.9",
            "--num-bootstrap", "200"]  # fmt: skip
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert scripted.asked["claims"] == N and scripted.asked["faithfulness"] == K * N
    paid = scripted.server.calls
    assert paid == N + K * N
    records = json.loads(r.stdout)
    per = [m for m in records if m["type"] == "Faithfulness" and "datum_uid" in m["parameters"]]
    reps = [m["parameters"]["details"]["repeats"] for m in per]
    assert all(len(x) == K for x in reps)
    for m, x in zip(per, reps, strict=True):
        assert m["value"] == pytest.approx(np.mean(x))
    [agg] = [m for m in records if m["parameters"].get("aggregate") == "mean"]
    assert agg["value"] == pytest.approx(np.mean([np.mean(x) for x in reps]))
    [rep] = [m for m in records if m["type"] == "JudgeRepeatability"]
    v, p = rep["value"], rep["parameters"]
    a = np.array(reps)
    assert p["repeats"] == K and p["n"] == N and p["metric"] == "faithfulness"
    assert v["flakiness"] == pytest.approx(np.mean(a.std(axis=1) > 0)) and v["flakiness"] == 0.5
    noise = np.mean(a.var(axis=1, ddof=1))
    assert v["judge_noise_variance"] == pytest.approx(noise)
    assert v["between_item_variance"] == pytest.approx(
        max(0.0, np.var(a.mean(axis=1), ddof=1) - noise / K)
    )
    lo, hi = p["measure_ci"]["flakiness"]
    assert lo <= 0.5 <= hi
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and scripted.server.calls == paid  # every repeat cached


def test_one_repeat_is_a_plain_run_and_zero_is_refused(scripted, tmp_path: Path) -> None:
    data = _data(tmp_path)
    base = ["text", "--data", str(data), "--metrics", "faithfulness", "-m",
            scripted.server.spec(), "-q", "--no-cache"]  # fmt: skip
    r = runner.invoke(app, [*base, "--repeats", "0"])
    assert r.exit_code == 2 and scripted.server.calls == 0
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--repeats" in lines[0]
    plain = runner.invoke(app, base)
    one = runner.invoke(app, [*base, "--repeats", "1"])
    assert plain.exit_code == one.exit_code == 0
    assert json.loads(plain.stdout) == json.loads(one.stdout)
    assert not any(m["type"] == "JudgeRepeatability" for m in json.loads(one.stdout))
