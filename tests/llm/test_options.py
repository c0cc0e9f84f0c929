"""The one run-options door (RunOptions, run_options) and load_model's options per kind."""

from __future__ import annotations

import math

import pytest

from assay.errors import InvalidInputError
from assay.llm import ChatModel, RunOptions, load_model
from assay.llm.models.spec import model_options
from assay.llm.options import OPTION_NAMES, run_options


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("concurrency", 0, "--concurrency: must be an integer >= 1, got 0"),
        ("concurrency", 2.5, "--concurrency: must be an integer >= 1, got 2.5"),
        ("concurrency", True, "--concurrency: must be an integer >= 1, got True"),
        ("rpm", 0, "--rpm: must be a number > 0 or None, got 0"),
        ("timeout", 0, "--timeout: must be a number > 0, got 0"),
        ("timeout", math.nan, "--timeout: must be a number > 0, got nan"),
        ("retries", -1, "--retries: must be an integer >= 0"),
        ("backoff", -0.5, "--backoff: must be a number >= 0"),
        ("max_errors", -1, "--max-errors: must be an integer >= 0 or None"),
        ("max_tokens", 0, "--max-tokens: must be an integer >= 1 or None"),
        ("max_tokens", -5, "--max-tokens: must be an integer >= 1 or None"),
        ("reasks", -1, "--judge-retries: must be an integer >= 0 or None"),
        ("cache", 3, "--cache: must be a file path, true or false"),
        ("ci", 1.5, "--ci: must be a confidence level in (0, 1)"),
        (
            "ci_method",
            "exact",
            "--ci-method: must be bootstrap, wilson, t, delong or bca, got 'exact'",
        ),
        ("num_bootstrap", 1, "--num-bootstrap: must be from 2 to 100,000"),
        ("seed", -1, "--seed: must be an integer >= 0"),
        ("by", [3], "--by: must be a list of column names"),
    ],
)
def test_nonsense_values_are_refused_naming_the_option(field, value, needle):
    with pytest.raises(InvalidInputError) as e:
        RunOptions(**{field: value})
    assert str(e.value).startswith(needle), str(e.value)


def test_every_field_has_its_option_and_defaults_are_valid():
    from dataclasses import fields

    assert {f.name for f in fields(RunOptions)} == set(OPTION_NAMES)
    o = RunOptions()
    assert (o.concurrency, o.max_errors, o.allowed_errors(), o.cache) == (8, None, 0, True)
    assert RunOptions(max_errors=3).allowed_errors() == 3


def test_the_declaration_is_the_dataclass():
    """RUN_OPTIONS declares every field once: the same names, order and defaults."""
    from dataclasses import fields

    from assay.llm.options import RUN_OPTIONS

    assert [(f.name, f.default) for f in fields(RunOptions)] == [
        (o.name, o.default) for o in RUN_OPTIONS
    ]
    assert RunOptions(by="topic").by == ("topic",) and RunOptions(by=None).by == ()
    assert RunOptions(structured=True).structured == "on"
    assert RunOptions(timeout=5).timeout == 5 and isinstance(RunOptions(timeout=5).timeout, int)


@pytest.mark.parametrize("name, bad", [(o.name, b) for o in __import__(
    "assay.llm.options", fromlist=["RUN_OPTIONS"]).RUN_OPTIONS for b in o.rule.bad])  # fmt: skip
def test_every_declared_rule_refuses_its_bad_values_naming_the_flag(name, bad):
    with pytest.raises(InvalidInputError) as e:
        RunOptions(**{name: bad})
    assert e.value.source == OPTION_NAMES[name]


def test_a_misspelt_or_old_option_gets_a_hint():
    """max_concurrency (the judge's old name) is refused naming concurrency, not with a
    bare TypeError."""
    with pytest.raises(InvalidInputError, match=r"unknown option 'max_concurrency' \(did you "
                       r"mean 'concurrency'\?\)"):  # fmt: skip
        RunOptions.of(max_concurrency=3)
    assert RunOptions.of(concurrency=3).concurrency == 3


def test_interval_options_and_slices():
    assert RunOptions().intervals(5) is None
    o = RunOptions(ci=0.9, num_bootstrap=50, by=["topic", "site", "topic"])
    assert o.by == ("topic", "site")
    ci = o.intervals(5)  # no seed given: the task's own
    assert (ci.level, ci.method, ci.num_bootstrap, ci.seed) == (0.9, "bootstrap", 50, 5)
    assert RunOptions(ci=0.9, seed=2).intervals(5).seed == 2
    assert RunOptions(by="topic").by == ("topic",)


def test_run_options_from_cli_values(tmp_path):
    assert run_options(no_cache=True).cache is False
    assert run_options(cache=tmp_path / "c.sqlite").cache == tmp_path / "c.sqlite"
    assert run_options(timeout=None).timeout == 60.0  # None keeps the default
    with pytest.raises(InvalidInputError, match="--cache FILE or --no-cache"):
        run_options(cache=tmp_path / "c.sqlite", no_cache=True)
    with pytest.raises(InvalidInputError, match="did you mean 'concurrency'"):
        run_options(max_concurrency=3)
    with pytest.raises(InvalidInputError, match="--cache"):
        run_options(cache=tmp_path)  # a folder


def test_load_model_refuses_what_a_kind_cannot_honour():
    kinds = model_options()
    assert kinds["timeout"] == ("embedded", "openai") and kinds["n_ctx"] == ("embedded",)
    assert "api_key" in kinds and kinds["api_key"] == ("openai",)
    with pytest.raises(InvalidInputError) as e:
        load_model("http://127.0.0.1:9/v1#m", n_ctx=4096)
    assert "'n_ctx'" in str(e.value) and "openai kind" in str(e.value)
    with pytest.raises(InvalidInputError) as e:
        load_model("embedded", api_key="k")
    assert "'api_key'" in str(e.value) and "embedded kind" in str(e.value)
    with pytest.raises(InvalidInputError, match="field 'warp': unknown"):
        load_model("http://127.0.0.1:9/v1#m", warp=9)
    # None means "not given": every kind accepts every option left unset
    assert load_model("http://127.0.0.1:9/v1#m", n_ctx=None, timeout=5).name == "m"


def test_the_embedded_kind_takes_timeout_and_a_wider_window():
    pytest.importorskip("llama_cpp")
    m = load_model("embedded", timeout=30)  # enforced by the runner, not the model
    assert m.n_ctx == 4096 and m.spec == "embedded"  # type: ignore[attr-defined]
    assert load_model("embedded", n_ctx=1024).n_ctx == 1024  # type: ignore[attr-defined]


def test_display_name_is_on_the_protocol_and_masks_credentials():
    m = load_model("http://me:s3cret@127.0.0.1:9/v1#m")
    assert isinstance(m, ChatModel)
    assert m.spec == "http://me:***@127.0.0.1:9/v1#m" and "s3cret" not in m.spec


@pytest.mark.parametrize("spec", ["http://#m", "https:///v1#m", "http://:80/v1#m"])
def test_a_url_spec_without_host_is_refused(spec):
    with pytest.raises(InvalidInputError, match="needs a host"):
        load_model(spec)
