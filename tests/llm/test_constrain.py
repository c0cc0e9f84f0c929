"""Constrained replies (assay.llm.constrain): which server gets which constraint, the pairwise
choice grammar and schema, and replies rendered back into the same parsed result."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InvalidInputError
from assay.llm import RunOptions
from assay.llm.constrain import (
    choice_constraint,
    choice_reply,
    choice_schema,
    json_constraint,
    resolve,
    support,
)
from assay.llm.judge.schemas import Verdicts, reply_format
from assay.llm.models.openai_compat import OpenAIChatModel
from assay.llm.pairwise import judge as pairwise_judge
from assay.llm.pairwise.prompts import extract_choice
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge


def test_structured_modes_are_checked_before_any_call() -> None:
    assert RunOptions().structured == "auto"
    assert RunOptions(structured=True).structured == "on"
    assert RunOptions(structured=False).structured == "off"
    with pytest.raises(InvalidInputError, match="--structured: use auto, on or off"):
        RunOptions(structured="yes")


class _Models(BaseHTTPRequestHandler):
    owner: str | None = None
    auth: list[str | None] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        type(self).auth.append(self.headers.get("Authorization"))
        if self.path != "/v1/models" or self.owner is None:
            self.send_response(404)
            self.end_headers()
            return
        body = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": self.owner}]}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def models_server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    _Models.auth = []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize(
    ("owner", "kind"),
    [("me", "grammar"), ("llamacpp", "grammar"), ("vllm", "json_schema"), ("acme", None)],
)
def test_an_endpoint_is_asked_who_serves_it(models_server, owner, kind) -> None:
    _Models.owner = owner
    url = f"http://127.0.0.1:{models_server.server_address[1]}/v1"
    model = OpenAIChatModel("m", base_url=url, api_key="k1")
    assert support(model) == kind
    assert resolve(model, "auto") == kind
    assert resolve(model, "on") == (kind or "json_schema")
    assert resolve(model, "off") is None
    assert _Models.auth[0] == "Bearer k1"  # the model's own credentials


def test_no_models_list_means_unconstrained_under_auto(models_server) -> None:
    _Models.owner = None  # 404
    url = f"http://127.0.0.1:{models_server.server_address[1]}/v1"
    assert support(OpenAIChatModel("m", base_url=url, api_key="k")) is None
    dead = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert support(dead) is None  # nothing listens: no constraint, no error
    assert support(OpenAIChatModel("gpt-4o-mini", base_url="https://api.openai.com/v1")) == (
        "json_schema"
    )


def test_llama_servers_get_the_schema_as_a_grammar() -> None:
    # llama-cpp-python's server refuses response_format "json_schema"; llama.cpp servers
    # and the embedded model get the schema as GBNF from llama-cpp-python's converter
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = reply_format(Verdicts, {"verdicts": 2})
    assert json_constraint(schema, "json_schema") == {"response_format": schema}
    gbnf = json_constraint(schema, "grammar")["grammar"]
    theirs = json_schema_to_gbnf(json.dumps(schema["json_schema"]["schema"]))
    assert theirs.splitlines() != gbnf.splitlines()
    changed = [(a, b) for a, b in zip(theirs.splitlines(), gbnf.splitlines()) if a != b]
    # only the string character rule differs: no raw control character (a literal newline
    # in a string is not JSON: a 135M model wrote one and the reply did not parse)
    assert len(changed) == 1 and len(theirs.splitlines()) == len(gbnf.splitlines())
    assert changed[0][0].startswith('char ::= [^"\\\\] |')
    assert changed[0][1].startswith('char ::= [^"\\\\\\x7F\\x00-\\x1F] |')
    assert LlamaGrammar.from_string(gbnf, verbose=False)._grammar == gbnf


def test_the_choice_grammar_leaves_room_for_the_choice() -> None:
    g = choice_constraint("ABC", "grammar", 1024)["grammar"]
    assert g == 'root ::= free "Choice: " [ABC]\nfree ::= [^:：]{0,1000}'
    assert choice_constraint("AB", "grammar", 5)["grammar"] == 'root ::= "Choice: " [AB]'
    schema = choice_constraint("ABCD", "json_schema", 1024)["response_format"]
    props = schema["json_schema"]["schema"]["properties"]
    assert props["choice"]["enum"] == ["A", "B", "C", "D"]
    assert schema == choice_schema("ABCD", 970)


@given(st.text(alphabet=st.characters(blacklist_characters=":："), max_size=80), st.data())
def test_a_json_choice_reads_as_the_same_choice(reasoning: str, data: st.DataObject) -> None:
    letters = data.draw(st.sampled_from(["AB", "ABC", "ABCD"]))
    letter = data.draw(st.sampled_from(list(letters)))
    reply = json.dumps({"reasoning": reasoning, "choice": letter})
    text = choice_reply(reply, letters)
    assert text is not None and text.endswith(f"Choice: {letter}")
    assert extract_choice(text, nopt=len(letters)).letter == letter


def test_other_replies_pass_unchanged() -> None:
    odd = ('{"choice": "A"}', '{"reasoning": "x", "choice": "E"}', "{")
    for text in (None, "", "Choice: A", *odd):
        assert choice_reply(text, "AB") == text


def _json_judge():
    text_judge = scripted_judge()

    def respond(messages):
        letter = extract_choice(text_judge(messages), nopt=2).letter
        return json.dumps({"reasoning": "scripted, compared by quality", "choice": letter})

    return respond


def test_pairwise_under_json_schema_scores_like_text_replies(tmp_path) -> None:
    # The same choices as JSON (constrained, --structured on) and as text (off): the same
    # numbers; every request carried the choice schema; no call made twice.
    table = make_table(["quality"] * 4, {"m1": [3, 1, 4, 2], "ref": [2, 2, 2, 2]})
    runs = {}
    for mode, responder in (("on", _json_judge()), ("off", scripted_judge())):
        with FakeChatServer(responder=responder) as srv:
            runs[mode] = pairwise_judge(
                table,
                models=["m1"],
                reference_model="ref",
                num_bootstrap=20,
                model=srv.spec(),
                options=RunOptions(cache=False, structured=mode),
            )
            formats = [r.get("response_format") for r in srv.requests]
            assert srv.calls == len(runs[mode].calls) == 8
        if mode == "on":
            assert all(f["json_schema"]["name"] == "Choice" for f in formats)
            assert runs[mode].parameters["constraint"] == "json_schema"
        else:
            assert formats == [None] * 8 and "constraint" not in runs[mode].parameters
    on, off = runs["on"], runs["off"]
    assert [c.parsed for c in on.calls] == [c.parsed for c in off.calls]
    assert None not in [c.parsed for c in on.calls]
    assert [(m.type, m.value) for m in on.metrics] == [(m.type, m.value) for m in off.metrics]


def test_auto_sends_nothing_to_a_server_it_does_not_know(tmp_path) -> None:
    table = make_table(["quality"], {"m1": [3], "ref": [2]})
    with FakeChatServer(responder=scripted_judge()) as srv:
        run = pairwise_judge(
            table, models=["m1"], reference_model="ref", num_bootstrap=20, model=srv.spec(),
            options=RunOptions(cache=False),
        )  # fmt: skip
        assert [set(r) & {"response_format", "grammar"} for r in srv.requests] == [set(), set()]
    assert "constraint" not in run.parameters


def test_a_bad_structured_mode_exits_2_before_any_call(tmp_path) -> None:
    from typer.testing import CliRunner

    from assay.cli.main import app

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"uid": "a", "query": "q", "prediction": "p"}) + "\n")
    with FakeChatServer() as srv:
        args = ["text", "--data", str(data), "--metrics", "answer_relevance", "-m", srv.spec()]
        result = CliRunner().invoke(app, [*args, "--structured", "yes", "--no-cache"])
        assert srv.calls == 0
    assert result.exit_code == 2
    assert "--structured: use auto, on or off, got 'yes'" in result.output
    assert "Traceback" not in result.output
