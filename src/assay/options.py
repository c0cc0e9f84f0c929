"""Options declared once: each evaluator option's default, rule, command-line flag and help.

An evaluator lists its options as one :class:`Options` of :class:`Option` entries (the idea
of scikit-learn's ``_parameter_constraints``). Everything else is derived from that one
declaration:

* the checks: :class:`~assay.evaluator.Evaluator` validates the keyword arguments of
  ``__init__`` against the rules before the body runs, and the body receives the clean
  values (:meth:`Options.validate`); a bad value raises
  :class:`~assay.errors.InvalidInputError` naming the option (``source`` is its name);
* ``config()`` and the stored parameters (:meth:`Options.config`);
* the command's options (:meth:`Option.cli` gives the flag, type, default and help), and the
  errors on the command line, which name the flag instead of the keyword
  (:func:`flags_named`);
* a bad value for every rule (:attr:`Rule.bad`), from which one common test proves that
  every evaluator refuses every bad option.

The signature of ``__init__`` stays written out (for readers and type checkers); a contract
test checks that its keyword names and defaults are the declaration's.

This module imports nothing heavy: a command declares its flags from it before numpy loads.

Example:
    >>> OPTS = Options(
    ...     Option("zero_division", None, number(none=True), "--zero-division",
    ...            "Value of a ratio with a zero denominator (default: null)."),
    ...     Option("by", (), names(), "--by", "Metadata fields to slice by.", stored="if_set"),
    ... )
    >>> OPTS.validate({"zero_division": 0, "by": ["site", "site"]})
    {'zero_division': 0.0, 'by': ('site',)}
    >>> OPTS.config(OPTS.validate({"zero_division": None, "by": ()}))
    {'zero_division': None}
    >>> OPTS.validate({"zero_division": "x"})
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: zero_division: must be a finite number or None, got 'x'
    >>> with flags_named(OPTS):
    ...     OPTS.validate({"zero_division": float("inf")})
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: --zero-division: must be a finite number or None, got inf
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

from assay.errors import InvalidInputError

__all__ = [
    "EXAMPLES_PAGE",
    "REQUIRED",
    "ZERO_DIVISION",
    "Bad",
    "Option",
    "Options",
    "Rule",
    "choice",
    "choices",
    "custom",
    "flag",
    "flags_named",
    "names",
    "number",
    "numbers_in",
    "text",
]


class _Required:
    """The default of an option that has none: it must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of an option the caller must give.
REQUIRED: Any = _Required()


class Bad(ValueError):
    """Raised by a rule's ``normalize`` with what is wrong (``"must be ..., got ..."``);
    :meth:`Options.validate` turns it into an :class:`InvalidInputError` naming the option.
    ``record`` names the entry of a list (``"index 2"``)."""

    def __init__(self, reason: str, record: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.record = record


@dataclass(frozen=True)
class Rule:
    """What an option accepts.

    Attributes:
        describe: the accepted values in words ("a number in [0, 1]"); errors read
            ``must be <describe>, got <value>``.
        normalize: ``value -> clean value``, raising :class:`Bad`.
        bad: values the rule refuses (the common test feeds each to every evaluator).
        cli_type: the Python type of the flag's value on the command line (``float``,
            ``int``, ``bool``, ``str``); a list option takes the flag repeatedly.
        many: the option is a list (the command line repeats the flag).
    """

    describe: str
    normalize: Callable[[Any], Any]
    bad: tuple[Any, ...] = ()
    cli_type: type = str
    many: bool = False
    metavar: str | None = None


def _show(v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def _must(describe: str, v: Any) -> Bad:
    return Bad(f"must be {describe}, got {_show(v)}")


def _is_bool(v: Any) -> bool:
    return type(v).__name__ in ("bool", "bool_")


def number(
    low: float | None = None,
    high: float | None = None,
    *,
    closed: str = "both",
    integer: bool = False,
    none: bool = False,
    describe: str | None = None,
) -> Rule:
    """A finite number (an integer with ``integer``), within ``[low, high]``; ``closed`` is
    ``both``, ``left``, ``right`` or ``neither``; ``none`` admits ``None``; ``describe``
    words the accepted values in the domain's terms ("a confidence level in (0, 1)").

    Example:
        >>> number(0, 1).normalize(1)
        1.0
        >>> number(0, 1, closed="neither").describe
        'a number in (0, 1)'
        >>> number(2, integer=True).describe
        'an integer >= 2'
    """
    lo_in, hi_in = closed in ("both", "left"), closed in ("both", "right")
    if low is not None and high is not None:
        where = f" in {'[' if lo_in else '('}{low:g}, {high:g}{']' if hi_in else ')'}"
    elif low is not None:
        where = f" {'>=' if lo_in else '>'} {low:g}"
    elif high is not None:
        where = f" {'<=' if hi_in else '<'} {high:g}"
    else:
        where = ""
    what = "an integer" if integer else ("a number" if where else "a finite number")
    describe = describe or what + where + (" or None" if none else "")

    def normalize(v: Any) -> Any:
        if v is None and none:
            return None
        kind = numbers.Integral if integer else numbers.Real
        if _is_bool(v) or not isinstance(v, kind) or not math.isfinite(float(v)):
            raise _must(describe, v)
        x = int(cast(numbers.Integral, v)) if integer else float(v)
        too_low = low is not None and (x < low if lo_in else x <= low)
        too_high = high is not None and (x > high if hi_in else x >= high)
        if too_low or too_high:
            raise _must(describe, v)
        return x

    bad: list[Any] = ["x", True, float("nan")]
    if low is not None:
        bad.append(low - 1 if lo_in else low)
    if high is not None:
        bad.append(high + 1 if hi_in else high)
    if integer:
        bad.append(2.5)
    return Rule(describe, normalize, tuple(bad), int if integer else float)


def flag() -> Rule:
    """``True`` or ``False`` (numpy's bools too).

    Example:
        >>> flag().normalize(False), flag().describe
        (False, 'true or false')
    """

    def normalize(v: Any) -> bool:
        if not _is_bool(v):
            raise _must("true or false", v)
        return bool(v)

    return Rule("true or false", normalize, ("yes", 1), bool)


def _listing(values: Sequence[Any]) -> str:
    shown = [str(v) for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def choice(*values: Any, none: bool = False, describe: str | None = None) -> Rule:
    """One of ``values`` (or ``None`` with ``none``); ``describe`` words them otherwise
    (e.g. without the ``None`` a command line cannot give).

    Example:
        >>> choice("bbox", "segm").describe
        'bbox or segm'
        >>> choice("bbox", "segm", none=True).describe
        'bbox, segm or None'
    """
    describe = describe or _listing([*values, *(["None"] if none else [])])

    def normalize(v: Any) -> Any:
        if (v is None and none) or (isinstance(v, type(values[0])) and v in values):
            return v
        raise _must(describe, v)

    return Rule(describe, normalize, ("no such choice", 3.5), type(values[0]))


def _as_list(v: Any, describe: str) -> list[Any]:
    if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__iter__"):
        raise _must(describe, v)
    return list(v)


def choices(*values: str, at_least: int = 0, none: bool = False) -> Rule:
    """A list of distinct entries of ``values`` (repeats dropped, order kept), at least
    ``at_least`` of them; ``None`` with ``none`` (the default set).

    Example:
        >>> choices("rouge", "bleu").normalize(["bleu", "bleu"])
        ('bleu',)
        >>> choices("rouge", "bleu").normalize(["chrf"])
        Traceback (most recent call last):
        ...
        assay.options.Bad: unknown ['chrf']; choose from rouge, bleu
    """
    describe = f"a list of {', '.join(values)}" + (" or None" if none else "")

    def normalize(v: Any) -> tuple[str, ...] | None:
        if v is None and none:
            return None
        got = _as_list(v, describe)
        unknown = [x for x in got if x not in values]
        if unknown:
            raise Bad(f"unknown {unknown}; choose from {', '.join(values)}")
        if len(set(got)) < at_least:
            raise Bad(f"needs at least {at_least} of {', '.join(values)}")
        return tuple(dict.fromkeys(got))

    return Rule(describe, normalize, ("no such metric", ["no such metric"]), str, many=True)


def numbers_in(low: float, high: float, *, at_least: int = 0, none: bool = False) -> Rule:
    """A list of numbers each in ``[low, high]`` (floats, in the order given); ``None`` with
    ``none``. An error names the entry (``index 1``).

    Example:
        >>> numbers_in(0, 1).normalize([0.5, 1])
        (0.5, 1.0)
    """
    one = number(low, high)
    describe = f"a list of numbers in [{low:g}, {high:g}]" + (" or None" if none else "")

    def normalize(v: Any) -> tuple[float, ...] | None:
        if v is None and none:
            return None
        got = _as_list(v, describe)
        if len(got) < at_least:
            raise Bad(f"needs at least {at_least} number(s), got {len(got)}")
        out = []
        for i, x in enumerate(got):
            try:
                out.append(one.normalize(x))
            except Bad as e:
                raise Bad(e.reason, record=f"index {i}") from None
        return tuple(out)

    return Rule(describe, normalize, ("0.5", [high + 1]), float, many=True)


def names(*, none: bool = False) -> Rule:
    """A list of column names (text; repeats dropped, order kept).

    Example:
        >>> names().normalize(["site", "ward", "site"])
        ('site', 'ward')
    """
    describe = "a list of column names" + (" or None" if none else "")

    def normalize(v: Any) -> tuple[str, ...] | None:
        if v is None and none:
            return None
        got = _as_list(v, describe)
        if not all(isinstance(c, str) for c in got):
            raise _must(describe, v)
        return tuple(dict.fromkeys(got))

    return Rule(describe, normalize, ("site", [1]), str, many=True, metavar="COLUMN")


def text(*, none: bool = False, nonempty: bool = True) -> Rule:
    """Text (non-empty unless ``nonempty=False``), or ``None`` with ``none``.

    Example:
        >>> text(none=True).normalize(None) is None
        True
    """
    describe = ("non-empty text" if nonempty else "text") + (" or None" if none else "")

    def normalize(v: Any) -> str | None:
        if v is None and none:
            return None
        if not isinstance(v, str) or (nonempty and not v):
            raise _must(describe, v)
        return v

    return Rule(describe, normalize, (3,) + (("",) if nonempty else ()), str)


def custom(
    describe: str,
    normalize: Callable[[Any], Any],
    bad: Sequence[Any],
    *,
    cli_type: type = str,
    many: bool = False,
) -> Rule:
    """A rule of the domain's own (``normalize`` raises :class:`Bad`); ``bad`` holds values it
    refuses, for the common test."""
    return Rule(describe, normalize, tuple(bad), cli_type, many)


Stored = str | Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Option:
    """One option of an evaluator.

    Attributes:
        name: the keyword argument of ``__init__``.
        default: its default (as in the signature).
        rule: what it accepts (:class:`Rule`).
        flag: its flag on the command line (``None``: not offered there).
        help: one line for ``--help`` and the docs.
        stored: whether ``config()`` (and so the stored run's parameters) holds it:
            ``"always"``; ``"never"``; ``"if_set"``: when it is not ``None`` or empty; or a
            function of all the clean values (e.g. the interval options only when ``ci`` is given).
        separator: for a list option, the flag takes one text split on this
            (``--score-thresholds 0.5,0.75``) instead of being repeated.
        example: a valid value, for an option without a default (``REQUIRED``) or whose
            default the cross-checks refuse alone (fairness's ``groups``).
        stored_as: the clean value as ``config()`` writes it, when that is not the value
            itself (configured objects written as their JSON description); ``None``: as is.
    """

    name: str
    default: Any
    rule: Rule
    flag: str | None = None
    help: str = ""
    stored: Stored = "always"
    separator: str | None = None
    example: Any = None
    stored_as: Callable[[Any], Any] | None = None

    def is_stored(self, values: Mapping[str, Any]) -> bool:
        """Whether ``config()`` holds this option, given all the clean values."""
        if self.stored == "always":
            return True
        if self.stored == "never":
            return False
        if self.stored == "if_set":
            v = values[self.name]
            return v is not None and v != () and v != []
        if callable(self.stored):
            return bool(self.stored(values))
        raise TypeError(f"option {self.name}: unknown stored rule {self.stored!r}")

    def cli(self) -> dict[str, Any]:
        """What a command needs to offer the flag: ``flag``, ``type``, ``default``, ``help``,
        ``many`` (the flag is repeated for a list)."""
        default = self.default
        if self.rule.many:
            default = None if default is None else list(default)
        return {
            "flag": self.flag,
            "type": self.rule.cli_type,
            "default": default,
            "help": self.help,
            "many": self.rule.many and self.separator is None,
            "separator": self.separator,
            "metavar": self.rule.metavar,
        }


@dataclass(frozen=True)
class Options:
    """The options of an evaluator, in order, with the checks that span several of them.

    Args:
        *entries: :class:`Option` entries, or other :class:`Options` whose entries (and
            checks) are included (a shared group, such as the interval options).
        check: ``values -> values``, run after every rule on the clean values (a
            combination that is refused raises :class:`~assay.errors.InvalidInputError`).
    """

    entries: tuple[Option, ...] = ()
    checks: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = field(default=())

    def __init__(
        self,
        *entries: Option | Options,
        check: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        flat: list[Option] = []
        checks: list[Callable[[dict[str, Any]], dict[str, Any]]] = []
        for e in entries:
            if isinstance(e, Options):
                flat.extend(e.entries)
                checks.extend(e.checks)
            else:
                flat.append(e)
        if check is not None:
            checks.append(check)
        seen = [o.name for o in flat]
        twice = sorted({n for n in seen if seen.count(n) > 1})
        if twice:
            raise TypeError(f"options declared twice: {twice}")
        object.__setattr__(self, "entries", tuple(flat))
        object.__setattr__(self, "checks", tuple(checks))

    def __iter__(self) -> Iterator[Option]:
        return iter(self.entries)

    def __getitem__(self, name: str) -> Option:
        for o in self.entries:
            if o.name == name:
                return o
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(o.name == name for o in self.entries)

    @property
    def names(self) -> tuple[str, ...]:
        """The option names, in order."""
        return tuple(o.name for o in self.entries)

    def defaults(self) -> dict[str, Any]:
        """Every option's default."""
        return {o.name: o.default for o in self.entries}

    def replace(self, name: str, **changes: Any) -> Options:
        """These options with one entry changed (e.g. another default or ``stored``)."""
        out = Options()
        entries = tuple(replace(o, **changes) if o.name == name else o for o in self.entries)
        object.__setattr__(out, "entries", entries)
        object.__setattr__(out, "checks", self.checks)
        return out

    def validate(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The clean values of every option (defaults for those not given), or an
        :class:`~assay.errors.InvalidInputError` naming the first bad one."""
        for name in given:
            if name not in self:
                near = difflib.get_close_matches(name, self.names, n=1, cutoff=0.5)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise InvalidInputError(
                    f"unknown option {name!r}{hint}; the options are {', '.join(self.names)}",
                    source="options",
                )
        values: dict[str, Any] = {}
        for o in self.entries:
            v = given.get(o.name, o.default)
            if v is REQUIRED:
                raise InvalidInputError("is required", source=o.name)
            try:
                values[o.name] = o.rule.normalize(v)
            except Bad as e:
                raise InvalidInputError(e.reason, source=o.name, record=e.record) from None
        for check in self.checks:
            values = check(values)
        return values

    def config(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The stored options (see :attr:`Option.stored`) as JSON values (lists, not
        tuples)."""
        return {
            o.name: _jsonable(
                values[o.name] if o.stored_as is None else o.stored_as(values[o.name])
            )
            for o in self.entries
            if o.is_stored(values)
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    return v


@contextmanager
def flags_named(*options: Options) -> Iterator[None]:
    """Inside, an :class:`~assay.errors.InvalidInputError` about one of these options names
    its command-line flag (``--zero-division``) instead of its keyword: what a command
    wraps around building its evaluator."""
    flags = {o.name: o.flag for opts in options for o in opts if o.flag}
    try:
        yield
    except InvalidInputError as e:
        flag_ = flags.get(e.source or "")
        if flag_ is None:
            raise
        raise InvalidInputError(e.reason, source=flag_, record=e.record, field=e.field) from None


#: ``zero_division``, in every domain that has ratios: the value of a ratio whose
#: denominator is 0, or ``None`` (the default): undefined, ``null`` with the reason.
ZERO_DIVISION = Option(
    "zero_division",
    None,
    number(none=True, describe="a finite number"),
    "--zero-division",
    "Value of a ratio with a zero denominator (default: null).",
)


#: ``examples_limit`` and ``examples_offset``, in every domain with ``Examples`` records:
#: the page of datums given examples, in uid order (valor-lite's ``limit`` and ``offset``).
EXAMPLES_PAGE = Options(
    Option(
        "examples_limit",
        None,
        number(0, integer=True, none=True, describe="an integer >= 0"),
        "--examples-limit",
        "Examples for at most N datums.",
    ),
    Option(
        "examples_offset",
        0,
        number(0, integer=True),
        "--examples-offset",
        "Examples from datum N on (uid order).",
    ),
)
