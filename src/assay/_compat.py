"""Renames: an old name works one release with a warning naming the new one, then fails naming it.

The deprecation policy (CHANGELOG.md): a renamed keyword argument, function, class or
command-line flag keeps its old name for one release; using it warns (a
``DeprecationWarning``, or a ``note:`` line on stderr for a flag) and names the new one. The
release after, the old name is removed; a removed keyword still fails with a message naming
its replacement (:func:`removed_keywords`), not Python's bare ``TypeError``.

Every rename goes through this module, so that ``tests/test_deprecations.py`` finds them all
(each helper records what it declares in :data:`ALIASES`):

* :func:`deprecated_keywords` / :func:`removed_keywords`: a function's (or a class's
  ``__init__``) renamed keyword arguments, before and after the removal;
* :func:`deprecated_names`: a module's ``__getattr__`` for a renamed function or class;
* :class:`DeprecatedFlag` / :data:`REMOVED_FLAGS`: a renamed command-line flag, before and
  after the removal (:func:`removed_flag_message` completes click's "No such option").

Example:
    >>> import warnings
    >>> @deprecated_keywords(pos_label="positive_label")
    ... def share(values, *, positive_label=1):
    ...     return sum(v == positive_label for v in values) / len(values)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     share([1, 0, 0, 0], pos_label=0)
    ...     print(w[0].category.__name__)
    ...     print(w[0].message)
    0.75
    DeprecationWarning
    share: pos_label= is deprecated and goes away in the next release; use positive_label=
    >>> @removed_keywords(pos_label="positive_label")
    ... def share2(values, *, positive_label=1):
    ...     return 0.0
    >>> share2([1], pos_label=0)
    Traceback (most recent call last):
    ...
    assay._compat.RemovedNameError: share2: pos_label= was renamed; use positive_label=
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from assay.errors import InvalidInputError

__all__ = [
    "ALIASES",
    "Alias",
    "DeprecatedFlag",
    "RemovedNameError",
    "deprecated_keywords",
    "deprecated_names",
    "REMOVED_FLAGS",
    "removed_flag_message",
    "removed_keywords",
]

F = TypeVar("F", bound=Callable[..., Any])


class RemovedNameError(InvalidInputError, TypeError):
    """A renamed keyword argument given by its removed old name: the message names the new.

    A ``TypeError`` (what Python raises for an unknown keyword, so old ``except`` clauses
    still catch it) and an :class:`~assay.errors.InvalidInputError` (one clear line, exit 2
    on the command line).
    """


@dataclass(frozen=True)
class Alias:
    """One declared rename: ``kind`` (``keyword``, ``removed-keyword``, ``name``, ``flag``),
    where it lives, the old and the new name, and ``probe``: uses the old name once (it
    warns, or raises :class:`RemovedNameError`) and returns what the old name gives;
    ``target``: the function (or class) that takes the keyword, or the module that has the
    name (None for a flag); ``module``: the module that declared it."""

    kind: str
    where: str
    old: str
    new: str
    probe: Callable[[], Any]
    target: Any = None
    module: str = __name__


#: Every rename declared so far (filled as the modules that declare them are imported).
ALIASES: list[Alias] = []


def _where(obj: Any) -> str:
    if isinstance(obj, type):
        return obj.__name__
    return str(getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj))))


def _keywords(obj: F, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> F:
    """``obj`` with ``wrap`` around it (around its ``__init__`` for a class)."""
    if isinstance(obj, type):
        obj.__init__ = wrap(obj.__init__)  # type: ignore[misc]
        return obj
    return wrap(obj)  # type: ignore[return-value]


def deprecated_keywords(**renames: str) -> Callable[[F], F]:
    """Decorator: each ``old=new`` keyword still works for one release, with a
    ``DeprecationWarning`` naming ``new``; giving both is an error.

    Example:
        >>> @deprecated_keywords(n_boot="num_bootstrap")
        ... def draws(*, num_bootstrap=1000):
        ...     return num_bootstrap
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     draws(n_boot=10)
        10
    """

    def decorate(obj: F) -> F:
        where = _where(obj)

        def renamed(kwargs: dict[str, Any], stacklevel: int) -> dict[str, Any]:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise RemovedNameError(
                        f"give {new}= only ({old}= is its old name)", source=where
                    )
                warnings.warn(
                    f"{where}: {old}= is deprecated and goes away in the next release; use {new}=",
                    DeprecationWarning,
                    stacklevel=stacklevel,
                )
                kwargs[new] = kwargs.pop(old)
            return kwargs

        def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                return fn(*args, **renamed(kwargs, 3))

            return call

        for old, new in renames.items():
            probe = functools.partial(lambda o: renamed({o: 0}, 2), old)
            ALIASES.append(Alias("keyword", where, old, new, probe, obj, obj.__module__))
        return _keywords(obj, wrap)

    return decorate


def removed_keywords(**renames: str) -> Callable[[F], F]:
    """Decorator: each removed ``old=new`` keyword fails with :class:`RemovedNameError`
    naming ``new`` (instead of Python's bare ``unexpected keyword argument``).

    Example:
        >>> @removed_keywords(max_concurrency="concurrency")
        ... def run(*, concurrency=8):
        ...     return concurrency
        >>> run(max_concurrency=2)
        Traceback (most recent call last):
        ...
        assay._compat.RemovedNameError: run: max_concurrency= was renamed; use concurrency=
    """

    def decorate(obj: F) -> F:
        where = _where(obj)

        def refuse(kwargs: Mapping[str, Any]) -> None:
            for old, new in renames.items():
                if old in kwargs:
                    raise RemovedNameError(f"{old}= was renamed; use {new}=", source=where)

        def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                refuse(kwargs)
                return fn(*args, **kwargs)

            return call

        for old, new in renames.items():
            probe = functools.partial(refuse, {old: 0})
            ALIASES.append(Alias("removed-keyword", where, old, new, probe, obj, obj.__module__))
        return _keywords(obj, wrap)

    return decorate


def deprecated_names(module: str, **renames: str) -> Callable[[str], Any]:
    """A module's ``__getattr__`` giving each old name ``old=new`` for one release: the
    module's ``new`` object, with a ``DeprecationWarning`` naming it.

    In the module: ``__getattr__ = deprecated_names(__name__, evaluate="evaluate_scores")``.

    Example:
        >>> getattr_ = deprecated_names("math", degrees_of="degrees")
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     getattr_("degrees_of")(3.141592653589793)
        180.0
    """

    def getattr_(name: str) -> Any:
        new = renames.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated and goes away in the next release; use {module}.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(sys.modules[module], new)

    for old, new in renames.items():
        probe = functools.partial(getattr_, old)
        declared_in = str(sys._getframe(1).f_globals.get("__name__"))
        ALIASES.append(Alias("name", module, old, new, probe, module, declared_in))
    return getattr_


class DeprecatedFlag:
    """A renamed command-line flag: declare the old one hidden beside the new, with
    :attr:`help`, and read the pair with :meth:`value` (a ``note:`` line on stderr names the
    new flag when the old one is used).

    Example:
        >>> flag = DeprecatedFlag("--n-boot", "--num-bootstrap")
        >>> flag.help
        'Deprecated: use --num-bootstrap.'
        >>> flag.value(None, 200), flag.value(500, None)  # the note goes to stderr
        (200, 500)
    """

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new
        self.help = f"Deprecated: use {new}."
        probe = functools.partial(self.value, 0, None)
        declared_in = str(sys._getframe(1).f_globals.get("__name__"))
        ALIASES.append(Alias("flag", "assay CLI", old, new, probe, None, declared_in))

    def value(self, old_value: Any, new_value: Any) -> Any:
        """The value to use: the new flag's, or the old one's (with a note); both is an error."""
        if old_value is None:
            return new_value
        if new_value is not None:
            raise InvalidInputError(
                f"give {self.new} only ({self.old} is its old name)", source=self.old
            )
        print(f"note: {self.old} is deprecated; use {self.new}", file=sys.stderr)
        return old_value


#: Command-line flags removed after their release of deprecation -> the flag to use.
REMOVED_FLAGS: dict[str, str] = {
    "--n-boot": "--num-bootstrap",  # pairwise judge/score, removed in 0.2.0
    "--confidence": "--ci",  # pairwise judge/score, removed in 0.2.0
    "--bootstrap-seed": "--seed",  # pairwise score only (judge keeps it), removed in 0.2.0
}


def removed_flag_message(message: str) -> str:
    """A usage error's ``message`` as shown: for a removed flag, the flag to use instead (in
    place of click's guesses at similar names); any other message as it is.

    Example:
        >>> removed_flag_message("No such option: --n-boot (Possible options: --nopt, --out)")
        'No such option: --n-boot (it was renamed: use --num-bootstrap)'
        >>> removed_flag_message("No such option: --nope")
        'No such option: --nope'
    """
    import re

    found = re.match(r"No such option: (--[\w-]+)", message)
    new = REMOVED_FLAGS.get(found.group(1)) if found else None
    if found is None or new is None:
        return message
    return f"No such option: {found.group(1)} (it was renamed: use {new})"


for _old, _new in REMOVED_FLAGS.items():
    ALIASES.append(
        Alias(
            "removed-flag",
            "assay CLI",
            _old,
            _new,
            functools.partial(removed_flag_message, f"No such option: {_old}"),
        )
    )
