"""``assay stats``: Inspect-style score statistics of sample scores (a JSONL file or a
Parquet dataset).

Only typer and the shared CLI helpers are imported at module level; the stats code loads
inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.command import MetricCommand
from assay.cli.options import (
    scheduler_address,
    scheduler_option,
    scheduler_timeout_option,
)
from assay.cli.support import guarded
from assay.stats.declared import OPTIONS as DECLARED
from assay.stats.metric_types import METRICS
from assay.uncertainty.options import interval_options

#: The interval options as the run's stored parameters hold them (``cluster`` when given).
_INTERVALS = interval_options()

#: ``--metric``, ``--reducer`` and ``--to-float`` are the command's own texts (the declared
#: ``metrics``, ``reducers`` and ``to_float`` have no flag), stored as typed; of the
#: evaluator's configuration the run stores the interval options, ``cluster`` only when given
#: (``ScoreEvaluator.config()`` holds it with ``ci``).
STATS = MetricCommand(
    "stats",
    "assay.stats.evaluator:ScoreEvaluator",
    DECLARED,
    stored=("ci", "ci_method", "num_bootstrap", "seed"),
)


def _renamed(e: Any, option: str) -> Any:
    """The error ``e`` with its source named by the option the user typed."""
    from assay.errors import InvalidInputError

    return InvalidInputError(e.reason, source=option, record=e.record, field=e.field)


def _parsed(texts: list[str], parse: Any, option: str) -> list[Any]:
    from assay.errors import InvalidInputError

    out = []
    for text in texts:
        try:
            out.append(parse(text))
        except InvalidInputError as e:
            raise _renamed(e, f"{option} {text}") from None
    return out


def _mapping(text: str | None) -> Any:
    import json

    from assay.errors import InvalidInputError
    from assay.stats.value_mapping import as_mapping

    if text is None:
        return None
    try:
        return as_mapping(json.loads(text))
    except json.JSONDecodeError as e:
        raise InvalidInputError(f"invalid JSON: {e}", source="--to-float") from None
    except InvalidInputError as e:
        raise InvalidInputError(e.reason, source="--to-float", field=e.field) from None


def _add_scores(ev: Any, batch: Any, *, source: str) -> None:
    """Add one batch to the evaluator: a JSONL file (read whole by the stats reader, its
    messages) or a table batch (a Parquet row group, a Dask partition)."""
    from assay.stats.io import frame_scores, read_scores

    if isinstance(batch, (str, Path)):
        from assay.cli.support import check_input_file

        ev.add(read_scores(check_input_file(batch, option="--scores"), source=source))
    else:
        ev.add(frame_scores(batch, source=source))


def _fold_scores(ev: Any, scores: Path, scheduler: str | None) -> Any:
    """``ev`` with every score of ``scores``: a JSONL file, or a Parquet file, directory or
    glob streamed by row group, or any of them on the Dask cluster at ``scheduler``."""
    from functools import partial

    from assay.cli.options import add_table
    from assay.errors import InvalidInputError
    from assay.io.parquet import is_parquet_dataset, schema_frame

    src = str(scores)
    if is_parquet_dataset(scores):  # the columns, before any row is read
        cols = schema_frame(scores).columns
        if "value" not in cols:
            have = ", ".join(map(str, cols)) or "none"
            raise InvalidInputError(
                f"missing column (columns present: {have})", source=src, field="value"
            )
    add_table(ev, scores, partial(_add_scores, source=src), scheduler=scheduler)
    if ev.is_empty:
        raise InvalidInputError("the dataset holds no scores", source=src)
    return ev


def _with_ppi(ms: Any, ev: Any, path: Path, intervals: dict[str, Any]) -> Any:
    """``ms`` and the PPI++ records of its means with the human labels at ``path``."""
    from assay.cli.support import check_input_file
    from assay.io.human_labels import read_human_labels
    from assay.results import MetricSet
    from assay.stats.ppi_records import ppi_records

    labels = read_human_labels(check_input_file(path, option="--human-labels"))
    extra = ppi_records(
        ev.scores(),
        ev.metrics,
        ev.reducers,
        ev.to_float,
        labels,
        intervals.get("ci", 0.95),
        cluster=intervals.get("cluster"),
        num_bootstrap=intervals.get("num_bootstrap", 1000),
        seed=intervals.get("seed", 0),
    )
    return MetricSet([*ms, *extra])


def _is_inspect_log(scores: Path, scorer: str | None) -> bool:
    """Whether ``scores`` is an Inspect log (only its start is read); ``--scorer`` is refused
    for any other input."""
    from assay.errors import InvalidInputError
    from assay.importers.files import sniff

    if scores.is_file() and sniff(scores) == "inspect":
        return True
    if scorer is not None:
        raise InvalidInputError("applies to an Inspect log (.eval, .json)", source="--scorer")
    return False


def _log_metrics(log: Any) -> list[Any]:
    """The metrics the log reports for the scorer that assay computes (Inspect's
    ``bootstrap_stderr`` is random, and custom metrics are unknown)."""
    from assay.importers.recompute import assay_metric

    return [m for m in (assay_metric(n, p) for n, p in log.metrics) if m is not None]


def register(app: typer.Typer) -> None:
    @app.command("stats")
    @guarded
    @STATS.flags  # --ci, --ci-method, --num-bootstrap, --seed, --cluster, --format...
    def stats(
        scores: Path = typer.Option(
            ...,
            help="JSONL, one sample score per line: value (null = failed), sample_id, "
            "epoch (default 1), sample_metadata; or a Parquet file, directory or glob of "
            "those columns (streamed one row group at a time); or an Inspect log (.eval, "
            ".json), whose scores of one scorer are read (--scorer).",
        ),
        scorer: str | None = typer.Option(
            None,
            help="With an Inspect log: the scorer whose scores are read (default the "
            "log's first); its metrics and epoch reducer in the log are the defaults of "
            "--metric and --reducer.",
        ),
        metric: list[str] = typer.Option(
            [],
            help="A metric: a name (stderr), a call with literal arguments "
            '(accuracy(to_float={"P": 0.0}), stderr(cluster="doc"), '
            'grouped(mean(), "topic")) or a JSON spec. Repeat for several; default '
            + " and ".join(t.lower() for t in METRICS.defaults)
            + ".",
        ),
        reducer: list[str] = typer.Option(
            [],
            help="An epoch reducer: a name (mean, mode, pass_at_2), a call "
            '(at_least(2, value=0.5), mean(to_float={"P": 0})) or a JSON spec. Repeat '
            "for several; default mean.",
        ),
        to_float: str | None = typer.Option(
            None,
            help="The evaluation's value mapping as JSON: the ValueMapping fields "
            '({"correct": "pass", "incorrect": "fail"}) or a table of text value -> '
            'number ({"P": 0.0}). Metrics and reducers with their own to_float use theirs.',
        ),
        human_labels: Path | None = typer.Option(
            None,
            help="JSONL, CSV or Parquet of human labels: id (a sample_id) and value (or one "
            "column per score key). Each mean gets a PPI++ record (estimator=ppi) calibrated "
            "on the labels, with its interval (--ci level, default 0.95).",
        ),
        scheduler: str | None = scheduler_option(),
        scheduler_timeout: float = scheduler_timeout_option(),
        **given: Any,
    ) -> None:
        """Inspect AI-style metrics over sample scores, after reducing each sample's epochs.

        With --ci every mean-type record (Accuracy, Mean, per group too) gets a confidence
        interval over samples (t, wilson, bootstrap or bca; over clusters with --cluster).
        """
        from assay.errors import InvalidInputError
        from assay.stats.spec_text import metric_from_text, reducer_from_text

        mapping = _mapping(to_float)
        is_log = _is_inspect_log(scores, scorer)
        metrics = _parsed(metric or list(METRICS.defaults), metric_from_text, "--metric")
        reducers = _parsed(reducer or ["mean"], reducer_from_text, "--reducer")
        given |= {"metrics": metrics, "reducers": reducers, "to_float": mapping}
        inputs: dict[str, Any] = {
            "metrics": list(metric),
            "reducers": list(reducer),
            "to_float": None if mapping is None else mapping.to_dict(),
        }

        def add(ev: Any) -> Any:
            if not is_log:
                return _fold_scores(ev, scores, scheduler_address(scheduler, scheduler_timeout))
            from assay.importers.inspect_log import scorer_scores

            log = scorer_scores(scores, scorer)
            inputs["scorer"] = log.scorer
            # the log's metrics and epoch reducer are the defaults of --metric and --reducer
            own = {} if metric else {"metrics": _log_metrics(log) or metrics}
            if not reducer and log.reducer:
                own["reducers"] = _parsed([log.reducer], reducer_from_text, "--reducer")
            options = {k: v for k, v in given.items() if k in DECLARED}
            return (STATS.make(options | own) if own else ev).add(log.scores)

        def compute(ev: Any, wanted: Any) -> Any:
            try:
                ms = ev.compute()
            except InvalidInputError as e:
                if e.source is None and e.record is not None:
                    raise InvalidInputError(
                        e.reason, source=str(scores), record=e.record, field=e.field
                    ) from None
                raise
            if human_labels is not None:
                ms = _with_ppi(ms, ev, human_labels, _INTERVALS.config(ev.options))
            return ms

        intervals = {} if given["cluster"] is None else {"cluster": given["cluster"]}
        labels = {} if human_labels is None else {"human_labels": str(human_labels)}
        STATS.run(
            given,
            add=add,
            dataset=str(scores),
            inputs=inputs,
            parameters={**intervals, **labels},
            compute=compute,
        )
