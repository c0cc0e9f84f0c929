"""``assay stats``: Inspect-style score statistics of a JSONL file of sample scores.

Only typer and the shared CLI helpers are imported at module level; the stats code loads
inside the command, so ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli_support import (
    OutputFormat,
    db_option,
    format_option,
    guarded,
    out_option,
    publish,
    save_option,
)

#: where an error came from (its ``source``) -> the option that set it
OPTIONS = {"metrics": "--metric", "reducers": "--reducer", "to_float": "--to-float"}


def _renamed(e: Any, option: str | None = None) -> Any:
    """The error ``e`` with its source named by the option the user typed."""
    from assay.errors import InvalidInputError

    where = option or OPTIONS.get(str(e.source), e.source)
    if option is None and e.source not in OPTIONS and e.source in ("ValueMapping", None):
        where = "--to-float"
    return InvalidInputError(e.reason, source=where, record=e.record, field=e.field)


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


def _read_scores(path: Path) -> list[Any]:
    """One :class:`SampleScore` per JSONL line: ``value`` (required; null for a failed
    score), ``sample_id``, ``epoch`` (default 1), ``sample_metadata``, ``answer``,
    ``explanation``, ``metadata``."""
    import json

    from assay.cli_support import check_input_file
    from assay.errors import InvalidInputError
    from assay.stats.types import SampleScore, Score

    src = str(check_input_file(path, option="--scores"))
    out = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidInputError(f"invalid JSON: {e.msg}", source=src, record=i) from None
            if not isinstance(row, dict) or "value" not in row:
                raise InvalidInputError(
                    "expected an object with a 'value'", source=src, record=i, field="value"
                )
            score = Score(
                row["value"], row.get("answer"), row.get("explanation"), row.get("metadata")
            )
            epoch = row.get("epoch", 1)
            if not isinstance(epoch, int) or isinstance(epoch, bool):
                raise InvalidInputError(
                    f"must be an integer, got {epoch!r}", source=src, record=i, field="epoch"
                )
            out.append(SampleScore(score, row.get("sample_id"), epoch, row.get("sample_metadata")))
    if not out:
        raise InvalidInputError("the file holds no scores", source=src)
    return out


def register(app: typer.Typer) -> None:
    @app.command("stats")
    @guarded
    def stats(
        scores: Path = typer.Option(
            ...,
            help="JSONL, one sample score per line: value (null = failed), sample_id, "
            "epoch (default 1), sample_metadata.",
        ),
        metric: list[str] = typer.Option(
            [],
            help="A metric: a name (stderr), a call with literal arguments "
            '(accuracy(to_float={"P": 0.0}), stderr(cluster="doc"), '
            'grouped(mean(), "topic")) or a JSON spec. Repeat for several; '
            "default mean and stderr.",
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
        format: OutputFormat = format_option(),
        out: Path | None = out_option(),
        save: bool = save_option(),
        db: str | None = db_option(),
    ) -> None:
        """Inspect AI-style metrics over sample scores, after reducing each sample's epochs."""
        from assay.errors import InvalidInputError
        from assay.io.files import check_writable_file
        from assay.stats.evaluator import evaluate_scores
        from assay.stats.spec_text import metric_from_text, reducer_from_text

        if out is not None:
            check_writable_file(out, option="--out")
        mapping = _mapping(to_float)
        metrics = _parsed(metric or ["mean", "stderr"], metric_from_text, "--metric")
        reducers = _parsed(reducer or ["mean"], reducer_from_text, "--reducer")
        data = _read_scores(scores)
        try:
            ms = evaluate_scores(data, metrics, reducers, to_float=mapping)
        except InvalidInputError as e:
            if e.source is None and e.record is not None:
                raise InvalidInputError(
                    e.reason, source=str(scores), record=e.record, field=e.field
                ) from None
            raise
        publish(
            ms,
            fmt=format,
            out=out,
            title="stats",
            save=save,
            db=db,
            kind="stats",
            dataset=str(scores),
            parameters={
                "metrics": list(metric),
                "reducers": list(reducer),
                "to_float": None if mapping is None else mapping.to_dict(),
            },
        )
