"""Bad input to ``assay llm run|ask``: exit 2, one line naming file/option and location.

Every case also checks that no traceback is printed and that an existing ``--out`` file
is left exactly as it was. The model URL points at a closed port: bad input must be
refused before any call is made.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer

DEAD_MODEL = "http://127.0.0.1:9/v1#m"
OK_LINE = b'{"id": "ok", "prompt": "hi"}\n'

# (case id, bytes of items.jsonl, substrings the message must contain)
ITEM_CASES = [
    ("messages-int", b'{"id": "a", "messages": 5}\n', ["row 1", "messages", "list"]),
    ("messages-no-role", b'{"id": "a", "messages": [{"content": "x"}]}\n', ["row 1", "role"]),
    ("messages-empty", b'{"id": "a", "messages": []}\n', ["row 1", "messages"]),
    ("id-list", b'{"id": ["x"], "prompt": "hi"}\n', ["row 1", "'id'", "string or an integer"]),
    ("id-null", b'{"id": null, "prompt": "hi"}\n', ["row 1", "'id'", "null"]),
    ("id-bool", b'{"id": true, "prompt": "hi"}\n', ["row 1", "'id'"]),
    ("id-missing", b'{"prompt": "hi"}\n', ["row 1", "'id'", "missing"]),
    ("system-int", b'{"id": "a", "prompt": "hi", "system": 5}\n', ["row 1", "'system'"]),
    ("prompt-int", b'{"id": "a", "prompt": 5}\n', ["row 1", "'prompt'"]),
    ("params-int", b'{"id": "a", "prompt": "hi", "params": 5}\n', ["row 1", "'params'"]),
    ("no-prompt", b'{"id": "a"}\n', ["row 1", "prompt"]),
    ("not-object", OK_LINE + b"[1, 2]\n", ["row 2", "object"]),
    ("not-json", OK_LINE + b"{nope\n", ["row 2", "not JSON"]),
    (
        "duplicate-id",
        OK_LINE
        + b'{"id": "x"}\n'.replace(b"}", b', "prompt": "a"}')
        + b'{"id": "ok", "prompt": "b"}\n',
        ["row 3", "duplicate", "'ok'"],
    ),
    (
        "duplicate-int-str",
        b'{"id": 1, "prompt": "a"}\n{"id": "1", "prompt": "b"}\n',
        ["row 2", "duplicate"],
    ),
    ("latin-1", OK_LINE + '{"id": "b", "prompt": "café"}\n'.encode("latin-1"), ["row 2", "UTF-8"]),
    ("utf-16", '{"id": "a", "prompt": "hi"}\n'.encode("utf-16"), ["row 1", "UTF-16"]),
    ("binary", bytes(range(256)), ["row 1", "not text"]),
]


@pytest.fixture
def out(tmp_path):
    p = tmp_path / "out.jsonl"
    p.write_text("previous\n")
    return p


def _check(res, out, *needles):
    assert res.exit_code == 2, (res.exit_code, res.output)
    text = res.output
    assert (
        "Traceback" not in text and res.exception is None or isinstance(res.exception, SystemExit)
    )
    for n in needles:
        assert n in text, (n, text)
    if out is not None:
        assert out.read_text() == "previous\n"


@pytest.mark.parametrize("case,data,needles", ITEM_CASES, ids=[c[0] for c in ITEM_CASES])
def test_bad_items_file(tmp_path, out, case, data, needles):
    items = tmp_path / "items.jsonl"
    items.write_bytes(data)
    res = CliRunner().invoke(app, ["llm", "run", str(items), "-m", DEAD_MODEL, "--out", str(out)])
    _check(res, out, "items.jsonl", *needles)


def _items(tmp_path):
    p = tmp_path / "items.jsonl"
    p.write_bytes(OK_LINE)
    return p


@pytest.mark.parametrize(
    "args,needles",
    [
        (["--retries", "-1"], ["--retries"]),
        (["--concurrency", "0"], ["--concurrency"]),
        (["--timeout", "0"], ["--timeout"]),
        (["--rpm", "0"], ["--rpm"]),
        (["--backoff", "-1"], ["--backoff"]),
        (["--model", "ftp://x#m"], ["model spec"]),
        (["--model", "http://u:s3cret@h/v1"], ["model spec", "u:***@"]),
    ],
    ids=["retries", "concurrency", "timeout", "rpm", "backoff", "spec", "spec-secret"],
)
def test_bad_run_options(tmp_path, out, args, needles):
    argv = ["llm", "run", str(_items(tmp_path)), "-m", DEAD_MODEL, "--out", str(out), *args]
    res = CliRunner().invoke(app, argv)
    _check(res, out, *needles)
    assert "s3cret" not in res.output


def test_paths_that_are_directories_or_under_files(tmp_path, out):
    items = _items(tmp_path)
    run = ["llm", "run", "-m", DEAD_MODEL]
    cases = [
        ([*run, str(tmp_path), "--out", str(out)], [str(tmp_path), "directory"]),
        ([*run, str(tmp_path / "missing.jsonl"), "--out", str(out)], ["missing.jsonl"]),
        ([*run, str(items), "--out", str(tmp_path)], ["--out", "directory"]),
        ([*run, str(items), "--out", str(out / "x.jsonl")], ["--out", "is a file"]),
        ([*run, str(items), "--out", str(out), "--cache", str(tmp_path)], ["--cache"]),
        ([*run, str(items), "--out", str(out), "--cache", str(out / "c")], ["--cache"]),
    ]
    for argv, needles in cases:
        _check(CliRunner().invoke(app, argv), out, *needles)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl", "out.jsonl"]


def test_duplicate_ids_name_the_file(tmp_path, out):
    items = tmp_path / "items.jsonl"
    items.write_bytes(OK_LINE * 2)
    res = CliRunner().invoke(app, ["llm", "run", str(items), "-m", DEAD_MODEL, "--out", str(out)])
    _check(res, out, str(items), "row 2", "duplicate id 'ok' (first at item 1)")


def test_ask_bad_options():
    for args, needle in [
        (["--max-tokens", "0"], "--max-tokens"),
        (["--retries", "-1"], "--retries"),
        (["--temperature", "-1"], "--temperature"),
    ]:
        res = CliRunner().invoke(app, ["llm", "ask", "-m", DEAD_MODEL, "hi", *args])
        _check(res, None, needle)


def test_error_messages_are_printed_verbatim(tmp_path, out):
    items = tmp_path / "[bold]x[red].jsonl"
    items.write_bytes(b'{"id": "[/x]", "prompt": 5}\n')
    res = CliRunner().invoke(app, ["llm", "run", str(items), "-m", DEAD_MODEL, "--out", str(out)])
    _check(res, out, "[bold]x[red].jsonl", "'prompt'")


def test_a_good_file_passes_the_same_checks(tmp_path):
    with FakeChatServer() as srv:
        _run_good(tmp_path, srv)


def _run_good(tmp_path, srv):
    items = tmp_path / "items.jsonl"
    items.write_bytes(OK_LINE + b'{"id": 2, "messages": [{"role": "user", "content": "yo"}]}\n')
    out = tmp_path / "o.jsonl"
    res = CliRunner().invoke(
        app, ["llm", "run", str(items), "-m", srv.spec(), "-q", "--no-cache", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in recs] == ["ok", "2"] and all(r["ok"] for r in recs)
