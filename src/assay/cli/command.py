"""One skeleton for the metric commands: read -> add -> filter -> compute -> publish -> save.

A metric command is a :class:`MetricCommand`: its kind, its evaluator, the domain's declared
options and metric table, and the filters it offers. :meth:`MetricCommand.flags` gives the
command every flag it shares with the others, derived from those declarations
(the evaluator's options, ``--metrics``, ``--where...``, ``--format``, ``--out``,
``--save``, ``--db``; ``guarded`` adds ``--name``, ``--tag``, ``--no-units``), and
:meth:`MetricCommand.run` is the body every command shares. The command itself writes only
what is its own: its input flags and how it reads them.

Example (``assay segmentation``, in :mod:`assay.cli.segmentation`)::

    SEGMENTATION = MetricCommand(
        "segmentation", "assay.segmentation.evaluator:SegmentationEvaluator", OPTIONS,
        METRICS, where={"datums": where_option("datums", "uid and the datum's metadata")},
    )

    @app.command("segmentation")
    @guarded
    @SEGMENTATION.flags
    def segmentation(groundtruths: Path = ..., predictions: Path = ..., **given: Any):
        def add(ev):
            ev.add(read_datums(groundtruths), read_datums(predictions))
        SEGMENTATION.run(given, add=add, dataset=str(groundtruths),
                         inputs={"groundtruths": str(groundtruths), ...})

Nothing heavy is imported here: the evaluator's module loads when the command runs.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import typer

from assay.cli.declared import build, declared_flags
from assay.cli.options import apply_where
from assay.cli.support import (
    OutputFormat,
    db_option,
    format_option,
    out_option,
    publish,
    save_option,
)
from assay.metric_table import MetricTable
from assay.options import Options

__all__ = ["MetricCommand", "metrics_option"]

F = TypeVar("F", bound=Callable[..., Any])


def metrics_option(table: MetricTable) -> Any:
    """``--metrics a,b``: the types to keep, from the domain's table."""
    return typer.Option(
        None, "--metrics", help=f"Comma-separated subset of {','.join(table.types)}."
    )


def _where_name(target: str) -> str:
    return "where" if target == "datums" else f"where_{target}"


@dataclass(frozen=True)
class MetricCommand:
    """A metric command, declared (see the module docstring).

    Attributes:
        kind: the command's name: the stored run's ``kind`` and the table's title.
        evaluator: ``"module:Class"`` of its evaluator (imported when the command runs).
        options: the evaluator's declared options (their flags are the command's).
        metrics: the domain's metric table (``--metrics``), or ``None`` for no such flag.
        where: ``filter()`` keyword -> its ``--where...`` option (``where_option(...)``).
        skip: declared options the command does not offer as flags.
        stored: the evaluator options the stored run records, in this order (default:
            all of ``config()``), for a command whose stored parameters hold fewer.
        format_help: ``--format``'s help, where the table view is the command's own.
    """

    kind: str
    evaluator: str
    options: Options
    metrics: MetricTable | None = None
    where: Mapping[str, Any] = field(default_factory=dict)
    skip: tuple[str, ...] = ()
    stored: tuple[str, ...] | None = None
    format_help: str | None = None

    def flags(self, fn: F) -> F:
        """Give the command its shared flags (it takes them as ``**given``)."""
        fn = declared_flags(self.options, skip=self.skip)(fn)
        sig = inspect.signature(fn)
        shared: list[tuple[str, Any, Any]] = []
        if self.metrics is not None:
            shared.append(("metrics", str | None, metrics_option(self.metrics)))
        shared += [(_where_name(t), str | None, opt) for t, opt in self.where.items()]
        shared += [
            ("fmt", OutputFormat, format_option(self.format_help)),
            ("out", Path | None, out_option()),
            ("save", bool, save_option()),
            ("db", str | None, db_option()),
        ]
        extra = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
            for n, a, d in shared
        ]
        params = list(sig.parameters.values())
        fn.__signature__ = sig.replace(parameters=[*params, *extra])  # type: ignore[attr-defined]
        fn.__annotations__ = {**fn.__annotations__, **{p.name: p.annotation for p in extra}}
        return fn

    def make(self, given: Mapping[str, Any]) -> Any:
        """The evaluator from the declared options' values (errors name the flags)."""
        module, _, name = self.evaluator.partition(":")
        cls = getattr(importlib.import_module(module), name)
        return build(cls, self.options, given)

    def run(
        self,
        given: dict[str, Any],
        *,
        add: Callable[[Any], Any],
        dataset: str,
        inputs: Mapping[str, Any],
        parameters: Mapping[str, Any] | None = None,
        compute: Callable[[Any, tuple[str, ...] | None], Any] | None = None,
        show: Callable[[Any, dict[str, Any]], Any] | None = None,
        view: Callable[[Any], Any] | None = None,
    ) -> Any:
        """The body of the command: build the evaluator, ``add(ev)`` (read the inputs and
        add them), filter (``--where...``), compute, keep ``--metrics``, publish and save.
        ``add`` may return the evaluator that holds the data instead (one the command built
        anew once its inputs were read, e.g. with options read against a table's columns).

        ``given`` holds the shared flags' values; the stored parameters are ``inputs``,
        the evaluator's ``config()`` (its :attr:`stored` options), the filters given and
        ``parameters``. A bad option or ``--out`` fails before any input is read.
        ``compute(ev, wanted)``, where given, makes the records of the types ``--metrics``
        named (``None``: the default set) instead of ``ev.compute()`` then keeping them (an
        evaluator that computes only what is asked for, or a command adding records of
        its own); ``view``: the ``--format table`` view of the records (default: the
        records' table); ``show(records, kwargs)``, where given, replaces
        ``publish(records, **kwargs)`` (a command with an output of its own). Returns the
        records.
        """
        from assay.io.files import check_writable_file
        from assay.results import MetricSet

        given = dict(given)
        output = {k: given.pop(k) for k in ("fmt", "out", "save", "db")}
        # --metrics: the types kept, unless it is the evaluator's own option (self.metrics None)
        text = given.pop("metrics", None) if self.metrics is not None else None
        where = {t: given.pop(_where_name(t), None) for t in self.where}
        if output["out"] is not None:
            check_writable_file(output["out"], option="--out")
        ev = self.make(given)
        wanted = None
        if self.metrics is not None and text:
            names = [m.strip() for m in text.split(",") if m.strip()]
            wanted = self.metrics.check(names, source="--metrics")
        held = add(ev)
        ev = ev if held is None else held
        kept = apply_where(ev, where)
        if compute is not None:
            records = compute(kept, wanted)
        else:
            records = kept.compute()
            if wanted is not None:
                records = MetricSet(m for m in records if m.type in wanted)
        filters = {f"where_{t}": v for t, v in where.items() if v is not None}
        config = ev.config()
        if self.stored is not None:
            config = {k: config[k] for k in self.stored if k in config}
        kwargs: dict[str, Any] = {
            "fmt": output["fmt"],
            "out": output["out"],
            "title": self.kind,
            "save": output["save"],
            "db": output["db"],
            "kind": self.kind,
            "dataset": dataset,
            "parameters": {**inputs, **config, **filters, **(parameters or {})},
            "view": view,
        }
        if show is not None:
            show(records, kwargs)
        else:
            publish(records, **kwargs)
        return records
