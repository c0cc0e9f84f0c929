"""Command-line flags derived from declared options (:mod:`assay.options`).

A command offers an evaluator's options by decorating itself with :func:`declared_flags`
and taking them as ``**options``; :func:`build` turns what the command line gave back into
the evaluator's keyword arguments and builds it, its errors naming the flags. Nothing is
written twice: the flag, its type, default and help come from the declaration.

Example::

    @app.command("segmentation")
    @guarded
    @declared_flags(OPTIONS)
    def segmentation(groundtruths: Path = ..., **options: Any) -> None:
        ev = build(SegmentationEvaluator, OPTIONS, options)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import typer

from assay.errors import InvalidInputError
from assay.options import REQUIRED, Option, Options, flags_named

__all__ = ["build", "declared_flag", "declared_flags", "from_command_line"]

F = TypeVar("F", bound=Callable[..., Any])


def _parameter(o: Option) -> inspect.Parameter:
    """The typer parameter of one declared option."""
    c = o.cli()
    flag, help_ = str(c["flag"]), c["help"]
    shown = {"metavar": c["metavar"]} if c["metavar"] else {}
    kind: Any = c["type"]
    if c["many"]:
        annotation: Any = list[kind]
        default = typer.Option(c["default"] or [], flag, help=help_, **shown)
    elif kind is bool:
        annotation = bool
        default = typer.Option(o.default, f"{flag}/--no-{flag[2:]}", help=help_)
    else:
        if c["separator"] is not None:
            kind = str
        annotation = kind if o.default not in (None, REQUIRED) else kind | None
        start = ... if o.default is REQUIRED else _flag_text(o)
        default = typer.Option(start, flag, help=help_, **shown)
    return inspect.Parameter(
        o.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def declared_flag(o: Option) -> Any:
    """The typer option of one declared option (flag, default, help), for a command that
    writes its parameters out (``nopt: int = declared_flag(OPTIONS["nopt"])``)."""
    return _parameter(o).default


def _flag_text(o: Option) -> Any:
    """The default as the flag shows it (a list option split on a separator: its text)."""
    if o.separator is not None and o.default is not None:
        return o.separator.join(str(v) for v in o.default)
    return o.default


def declared_flags(
    options: Options, *, skip: tuple[str, ...] = (), only: tuple[str, ...] | None = None
) -> Callable[[F], F]:
    """Give the command a flag for every declared option that has one (but ``skip``; with
    ``only``, those options alone: a command offering a few of a large group, such as the
    LLM run options); the command takes them as ``**options``."""

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)
        mine = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        extra = [
            _parameter(o)
            for o in options
            if o.flag and o.name not in skip and (only is None or o.name in only)
        ]
        fn.__signature__ = sig.replace(parameters=[*mine, *extra])  # type: ignore[attr-defined]
        fn.__annotations__ = {**fn.__annotations__, **{p.name: p.annotation for p in extra}}
        return fn

    return decorate


def from_command_line(options: Options, given: Mapping[str, Any]) -> dict[str, Any]:
    """The evaluator's keyword arguments from what the command line gave: a repeated flag's
    values as a list (none given: the default), a separated one split."""
    out: dict[str, Any] = {}
    for name, value in given.items():
        o = options[name]
        if o.separator is not None and isinstance(value, str):
            value = _split(o, value)
        elif o.rule.many and o.separator is None and not value:
            value = o.default
        out[name] = value
    return out


def _split(o: Option, text: str) -> list[Any]:
    """A separated flag's text as the rule's values (numbers parsed)."""
    parts = [v.strip() for v in text.split(str(o.separator)) if v.strip()]
    kind = o.rule.cli_type
    if kind not in (int, float):
        return parts
    try:
        return [kind(v) for v in parts]
    except ValueError:
        what = "integers" if kind is int else "numbers"
        sep = o.separator
        how = f"comma-separated {what}" if sep == "," else f"{what} separated by {sep!r}"
        raise InvalidInputError(f"expected {how}, got {text!r}", source=str(o.flag)) from None


def build(cls: Callable[..., Any], options: Options, given: Mapping[str, Any]) -> Any:
    """``cls(**kwargs)`` from the command line's values, its errors naming the flags."""
    with flags_named(options):
        return cls(**from_command_line(options, given))
