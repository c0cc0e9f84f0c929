"""The rsmeval pipeline: an rsmeval configuration in, RSMTool's tables out (same names).

:func:`run_rsmeval` reads the configuration and the predictions, preprocesses them as RSMTool
does (:mod:`assay.scoring.rsmeval_config`), evaluates every score type with
:class:`~assay.scoring.evaluator.ScoringEvaluator` and assembles RSMTool's tables: ``eval``
(one row per score type: ``raw``, ``raw_trim``, ``raw_trim_round``, ``scale``, ...),
``eval_short``, ``eval_by_<g>`` (``All data`` first), ``consistency``, ``degradation``,
``disattenuated_correlations``, ``true_score_eval``, ``confMatrix``, ``confMatrix_h1h2``,
``score_dist``, ``data_composition``, ``data_composition_by_<g>``,
``test_excluded_composition``, ``test_excluded_responses``,
``test_responses_with_excluded_flags``, ``fairness_metrics_by_<g>``,
``estimates_osa/osd/csd_by_<g>`` and ``pred_processed``.

Example:
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "p.csv").write_text("id,h,m\\na,1,0.2\\nb,2,2.4\\nc,3,3.1\\nd,2,2.2\\n")
    >>> cfg = {"experiment_id": "x", "predictions_file": "p.csv", "system_score_column": "m",
    ...        "human_score_column": "h", "id_column": "id", "trim_min": 1, "trim_max": 3}
    >>> _ = (d / "c.json").write_text(json.dumps(cfg))
    >>> t = run_rsmeval(d / "c.json")
    >>> list(t["eval"].index), float(t["eval"].loc["raw_trim", "sys_min"])
    (['raw', 'raw_trim', 'raw_trim_round'], 0.5002)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from assay.errors import InvalidInputError
from assay.results import Metric, MetricSet
from assay.scoring.rsmeval_config import RsmevalConfig
from assay.scoring.rsmeval_frames import (
    coefficient_tables,
    composition_tables,
    confusion_table,
    excluded_composition,
    input_tables,
    score_distribution,
)
from assay.scoring.rsmeval_preprocess import Preprocessed, input_column, preprocess
from assay.scoring.tables import ScoringTables
from assay.uncertainty.intervals import ci_options

__all__ = ["RsmevalTables", "rsmeval_tables", "run_rsmeval"]

# tables whose first CSV column is not an index (RSMTool writes them without one)
NO_INDEX = (
    "test_metadata",
    "test_human_scores",
    "test_other_columns",
    "data_composition",
    "test_excluded_composition",
    "test_excluded_responses",
    "test_responses_with_excluded_flags",
)
PER_SCORE = ("eval", "degradation", "disattenuated_correlations", "true_score_eval")


class RsmevalTables(dict[str, pd.DataFrame]):
    """Table name -> DataFrame, in RSMTool's names; ``files(experiment_id, file_format)`` gives
    the files rsmeval writes (``<experiment_id>_<table>.<csv|tsv|xlsx>``); ``metrics`` holds
    the same numbers as Metric records; ``notes`` says what was not computed and why."""

    metrics: MetricSet = MetricSet()
    notes: tuple[str, ...] = ()

    def files(self, experiment_id: str, file_format: str = "csv") -> dict[str, str | bytes]:
        """Every non-empty table as file content keyed by its (safe) file name."""
        from assay.io.files import safe_filename

        out: dict[str, str | bytes] = {}
        prefix = f"{experiment_id}_" if experiment_id else ""
        for name, df in self.items():
            if df.empty:  # rsmeval writes no file for an empty table
                continue
            index = not (name in NO_INDEX or name.startswith(("data_composition", "pred_")))
            if index:
                df = df.copy()
                df.index.name = ""
                df = df.reset_index()
            out[safe_filename(f"{prefix}{name}") + f".{file_format}"] = _serialise(df, file_format)
        return out

    def csv_files(self, experiment_id: str) -> dict[str, str]:
        """Every non-empty table as CSV text keyed by ``<experiment_id>_<table>.csv``."""
        return {k: str(v) for k, v in self.files(experiment_id, "csv").items()}


def _serialise(df: pd.DataFrame, file_format: str) -> str | bytes:
    if file_format == "xlsx":
        from assay.io.xlsx import write_xlsx

        return write_xlsx(df)  # text that looks like a formula stays text
    return df.to_csv(index=False, sep="\t" if file_format == "tsv" else ",")


def _score_view(
    cfg: RsmevalConfig, frame: pd.DataFrame, score: str, options: dict[str, Any]
) -> ScoringTables:
    from assay.scoring.evaluator import ScoringEvaluator

    ev = ScoringEvaluator(
        human="sc1",
        system=score,
        group_columns=cfg.subgroups,
        exclude_zero_scores=cfg.exclude_zero_scores,
        rater_error_variance=cfg.rater_error_variance,
        **options,
    )
    return ev.add(frame, source=str(cfg.predictions_file)).tables()


def _eval_frame(cfg: RsmevalConfig, pre: Preprocessed, columns: dict[str, str]) -> pd.DataFrame:
    """``pred`` with the input columns the intervals and slices need (name -> role), under
    the names the user gave; a name that preprocessing gave another column is refused."""
    extra: dict[str, Any] = {}
    for name, role in columns.items():
        values = input_column(cfg, pre, name, role)
        if name in pre.pred.columns and not pre.pred[name].equals(values):
            raise InvalidInputError(
                f"is a column name rsmeval's preprocessing gives another column ({role}: "
                "rename the column in the data)",
                source=str(cfg.predictions_file),
                field=name,
            )
        extra[name] = values
    return pre.pred.assign(**extra) if extra else pre.pred


def _metric_tables(
    cfg: RsmevalConfig, frame: pd.DataFrame, options: dict[str, Any], by: Sequence[str]
) -> tuple[dict[str, pd.DataFrame], MetricSet, tuple[str, ...]]:
    """The metric tables (per-score-type tables stacked, the rest from the main score) and
    their records: every record of the main score (with its ``by`` slices), the per-score-type
    ones of the others; ``options``: the second rater and interval options of every evaluator."""
    per: dict[str, list[pd.DataFrame]] = {name: [] for name in PER_SCORE}
    main: ScoringTables | None = None
    records: list[Metric] = []
    for score in [t for t in cfg.score_types if not t.endswith("_round")]:
        main_options = {**options, "by": list(by)} if score == cfg.main_score else options
        view = _score_view(cfg, frame, score, main_options)
        rows = [score] if not score.endswith("_trim") else [score, f"{score}_round"]
        for name in PER_SCORE:
            if name in view.tables:
                per[name].append(view.tables[name].loc[rows])
        if score == cfg.main_score:
            main = view
            records.extend(view.metrics)
        else:
            records.extend(
                m
                for m in view.metrics
                if m.parameters.get("table") in PER_SCORE and m.parameters.get("score") in rows
            )
    assert main is not None
    out: dict[str, pd.DataFrame] = {}
    for name, value in main.tables.items():
        if name in PER_SCORE:
            out[name] = pd.concat(per[name])
        else:
            out[name] = value
    out["eval"] = out["eval"].drop(columns=["MSE"], errors="ignore")  # RSMTool's columns
    if "true_score_eval" in out:
        out["true_score_eval"] = out["true_score_eval"].astype(
            {c: "int64" for c in ("N", "N raters", "N single", "N multiple")}
        )
    return out, MetricSet(records), tuple(main.notes)


def rsmeval_tables(
    cfg: RsmevalConfig,
    *,
    ci: float | None = None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
    cluster: str | None = None,
    by: Sequence[str] = (),
) -> RsmevalTables:
    """Every table rsmeval writes for this configuration (see the module docstring).

    ``ci``, ``ci_method``, ``num_bootstrap``, ``seed`` and ``cluster`` put the intervals of
    :class:`~assay.scoring.evaluator.ScoringEvaluator` on the records of every score type
    (the tables are unchanged); ``cluster`` and ``by`` name input columns (the candidate
    column, a subgroup, any other column of the predictions file, by the name it has there);
    ``by`` slices the main score's records.
    """
    ci_options(ci, ci_method, num_bootstrap, seed, cluster=cluster)  # before any reading
    pre = preprocess(cfg)
    pred = pre.pred
    tables = RsmevalTables()
    tables["pred_processed"] = pred[["spkitemid", "sc1", *cfg.score_types]]
    tables["test_excluded_responses"] = pre.excluded
    tables["test_responses_with_excluded_flags"] = pre.flagged
    sc2 = pred["sc2"] if pre.has_sc2 else None
    tables.update(input_tables(pre.kept, cfg.score_types, cfg.subgroups, sc2))
    tables["test_excluded_composition"] = excluded_composition(
        pre.excluded, cfg.exclude_zero_scores, listwise=bool(cfg.min_items_per_candidate)
    )
    tables.update(composition_tables(pred, cfg.subgroups, bool(cfg.candidate_column)))
    columns = {str(b): "by" for b in by} | ({cluster: "cluster"} if cluster else {})
    options: dict[str, Any] = {"ci": ci, "ci_method": ci_method, "num_bootstrap": num_bootstrap}
    options |= {"seed": seed, "cluster": cluster, "human2": "sc2" if pre.has_sc2 else None}
    frame = _eval_frame(cfg, pre, columns)
    metric_tables, tables.metrics, tables.notes = _metric_tables(cfg, frame, options, by)
    tables.update(metric_tables)
    kind = "scale" if cfg.scale_with is not None else "raw"
    tables["confMatrix"] = confusion_table(pred["sc1"], pred[f"{kind}_trim_round"])
    tables["score_dist"] = score_distribution(
        pred["sc1"], pred[f"{kind}_trim_round"], f"sys_{kind}"
    )
    if pre.has_sc2:
        both = pred.dropna(subset=["sc1", "sc2"])
        tables["confMatrix_h1h2"] = confusion_table(both["sc1"], both["sc2"])
    for g in cfg.subgroups:
        tables.update(coefficient_tables(pred["sc1"], pred[cfg.main_score], pred[g], g))
    tables.pop("undefined_metrics", None)
    return tables


def run_rsmeval(config: str | Path, **options: Any) -> RsmevalTables:
    """Read an rsmeval configuration file and compute its tables; ``options`` (``ci``,
    ``ci_method``, ``num_bootstrap``, ``seed``, ``cluster``, ``by``) as for
    :func:`rsmeval_tables`.

    Example (a bootstrap interval over candidates on every score type's records):
        >>> import json, tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> rows = [f"r{i},{1 + i % 3},{1 + i % 3 + (i % 5) / 5},c{i // 2}" for i in range(12)]
        >>> _ = (d / "p.csv").write_text("\\n".join(["id,h,m,who", *rows]) + "\\n")
        >>> cfg = {"experiment_id": "x", "predictions_file": "p.csv", "system_score_column": "m",
        ...        "human_score_column": "h", "id_column": "id", "candidate_column": "who",
        ...        "trim_min": 1, "trim_max": 3}
        >>> _ = (d / "c.json").write_text(json.dumps(cfg))
        >>> t = run_rsmeval(d / "c.json", ci=0.9, num_bootstrap=200, cluster="who")
        >>> p = t.metrics.get("PearsonR", table="eval", score="raw").parameters
        >>> p["cluster"], p["ci_low"] < p["ci_high"]
        ('who', True)
    """
    return rsmeval_tables(RsmevalConfig.from_file(config), **options)
