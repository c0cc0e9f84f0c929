"""A domain's metrics as one table: each metric type is one entry.

Each domain declares its metric types once, as a :class:`MetricTable` of :class:`MetricEntry`
rows (the idea of valor-lite's ``MetricType`` and Inspect's ``@metric`` registry): the type
name as it appears in the records, its family (the types computed together by one
builder), the builder, whether it is sliced (``--by``), which interval methods apply, and
whether it is computed by default. Everything that used to list metric types is derived:
the default set, the ``--metrics`` choices, the sliced types, the types that take an
interval method, the report's lists.

The builder is named as ``"module:function"`` and imported only when asked for
(:meth:`MetricTable.builder`), so a command can list its choices before numpy loads.

Adding a metric is one entry plus its builder (docs/architecture.md shows an example); a
contract test checks that every registered type is documented in docs/records.md and that
every type a domain emits is registered.

Example:
    >>> T = MetricTable(
    ...     "demo",
    ...     MetricEntry("Accuracy", "counts", "assay.demo:counts", sliced=True,
    ...                 intervals=("bootstrap", "wilson")),
    ...     MetricEntry("ConfusionMatrix", "counts", "assay.demo:counts"),
    ...     MetricEntry("Examples", "examples", "assay.demo:examples", default=False),
    ... )
    >>> T.types, T.defaults
    (('Accuracy', 'ConfusionMatrix', 'Examples'), ('Accuracy', 'ConfusionMatrix'))
    >>> T.sliced, T.with_interval("wilson")
    (('Accuracy',), ('Accuracy',))
    >>> T.check(["Accuracy", "Recall"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: metrics: unknown ['Recall']; choose from ...
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from assay.errors import InvalidInputError

__all__ = ["MetricEntry", "MetricTable"]


@dataclass(frozen=True)
class MetricEntry:
    """One metric type of a domain.

    Attributes:
        type: the record type (``"Precision"``).
        family: the types one builder computes together (``"hardmax"``, ``"curves"``); a
            tuple where two builders emit the type (fairness's per-group and overall
            ``Accuracy``).
        builder: ``"module:function"`` of the builder that emits the family's records.
        sliced: recomputed per slice of ``--by``.
        intervals: the interval methods that apply (``()``: no interval; the bootstrap is
            listed where it applies).
        default: computed when the caller names no metric types.
        help: one line for ``--help`` and the docs.
        short: the name in a narrow table or on an axis (``"SPD"``); the type by default.
        ideal: the value that means no error (no disparity: 0 for a difference, 1 for a
            ratio), where a report draws it.
        tags: what else a domain needs to know of the type, as words it defines (e.g.
            ``"datums"``: the records name datums, so a form that keeps none refuses it).
    """

    type: str
    family: str | tuple[str, ...]
    builder: str
    sliced: bool = False
    intervals: tuple[str, ...] = ()
    default: bool = True
    help: str = ""
    short: str = ""
    ideal: float | None = None
    tags: tuple[str, ...] = ()

    @property
    def families(self) -> tuple[str, ...]:
        """The families the type belongs to."""
        return (self.family,) if isinstance(self.family, str) else self.family

    @property
    def label(self) -> str:
        """:attr:`short`, or the type."""
        return self.short or self.type


@dataclass(frozen=True)
class MetricTable:
    """The metric types of one domain, in the order records are emitted."""

    domain: str
    entries: tuple[MetricEntry, ...]

    def __init__(self, domain: str, *entries: MetricEntry) -> None:
        names = [e.type for e in entries]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise TypeError(f"{domain}: metric types registered twice: {twice}")
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "entries", tuple(entries))

    def __iter__(self) -> Iterator[MetricEntry]:
        return iter(self.entries)

    def __contains__(self, name: object) -> bool:
        return any(e.type == name for e in self.entries)

    def __getitem__(self, name: str) -> MetricEntry:
        for e in self.entries:
            if e.type == name:
                return e
        raise KeyError(name)

    def _where(self, keep: Callable[[MetricEntry], bool]) -> tuple[str, ...]:
        return tuple(e.type for e in self.entries if keep(e))

    @property
    def types(self) -> tuple[str, ...]:
        """Every registered type (the ``--metrics`` choices)."""
        return self._where(lambda e: True)

    @property
    def defaults(self) -> tuple[str, ...]:
        """The types computed when none are named."""
        return self._where(lambda e: e.default)

    @property
    def sliced(self) -> tuple[str, ...]:
        """The types recomputed per slice."""
        return self._where(lambda e: e.sliced)

    def with_interval(self, method: str | None = None) -> tuple[str, ...]:
        """The types that take an interval (by ``method``, or by any method)."""
        return self._where(lambda e: (method in e.intervals) if method else bool(e.intervals))

    def tagged(self, tag: str) -> tuple[str, ...]:
        """The types that carry ``tag`` (:attr:`MetricEntry.tags`)."""
        return self._where(lambda e: tag in e.tags)

    def family(self, name: str) -> tuple[str, ...]:
        """The types of one family."""
        return self._where(lambda e: name in e.families)

    @property
    def families(self) -> tuple[str, ...]:
        """The families, in order of their first type."""
        return tuple(dict.fromkeys(f for e in self.entries for f in e.families))

    def check(self, names: Iterable[str] | None, *, source: str = "metrics") -> tuple[str, ...]:
        """The types asked for (the defaults for ``None``; repeats dropped, order kept), or
        an :class:`~assay.errors.InvalidInputError` naming the unknown ones."""
        if names is None:
            return self.defaults
        if isinstance(names, str):
            names = [names]
        asked = tuple(dict.fromkeys(names))
        unknown = [n for n in asked if n not in self]
        if unknown:
            raise InvalidInputError(
                f"unknown {unknown}; choose from {', '.join(self.types)}",
                source=source,
            )
        return asked

    def builder(self, name: str) -> Callable[..., Any]:
        """The builder of type (or family) ``name``, imported now."""
        entry = next((e for e in self.entries if name == e.type or name in e.families), None)
        if entry is None:
            raise KeyError(name)
        module, _, function = entry.builder.partition(":")
        return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]

    def help(self) -> str:
        """The choices for ``--metrics``'s help: every type, the defaults marked."""
        return ", ".join(e.type + ("" if e.default else " (opt-in)") for e in self.entries)
