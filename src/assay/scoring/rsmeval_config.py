"""An rsmeval experiment's configuration file: RSMTool's keys, defaults and checks.

RSMTool's ``rsmeval`` reads a JSON configuration (``predictions_file``, ``system_score_column``,
``trim_min``, ``trim_max`` required). The keys that change the numbers are read here; the
preprocessing they drive (renaming, flag and score filters, candidates, scaling, trimming) is
in :mod:`assay.scoring.rsmeval_preprocess`. Keys that only shape rsmeval's HTML report
(``description``, ``general_sections``, ``min_n_per_group``, ...) are checked as rsmeval checks
them and change no table; keys of the other RSMTool tools that rsmeval accepts and drops
(``flag_column_test``, ``features``, ...) are dropped too (listed in ``ignored``); any other
key is an error.

Example:
    >>> cfg = RsmevalConfig.from_dict(
    ...     {"experiment_id": "x", "predictions_file": "p.csv", "system_score_column": "m",
    ...      "trim_min": 1, "trim_max": 5, "subgroups": "L1, age",
    ...      "flag_column": {"ok": 1}, "min_n_per_group": 10},
    ...     base=Path("."), source="c.json")
    >>> cfg.subgroups, cfg.flag_column, cfg.min_n_per_group
    (['L1', 'age'], {'ok': [1]}, {'L1': 10, 'age': 10})
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidInputError

__all__ = ["RsmevalConfig"]

REQUIRED = ("experiment_id", "predictions_file", "system_score_column", "trim_min", "trim_max")
OPTIONAL = (
    "description",
    "id_column",
    "human_score_column",
    "second_human_score_column",
    "file_format",
    "flag_column",
    "exclude_zero_scores",
    "use_thumbnails",
    "scale_with",
    "trim_tolerance",
    "rater_error_variance",
    "subgroups",
    "min_n_per_group",
    "general_sections",
    "custom_sections",
    "section_order",
    "candidate_column",
    "min_items_per_candidate",
    "use_wandb",
    "wandb_project",
    "wandb_entity",
)
# keys of the other RSMTool tools: rsmeval accepts them and drops them, and so does assay
IGNORED = (
    "background_kmeans_size",
    "description_new",
    "description_old",
    "experiment_names",
    "feature_subset",
    "feature_subset_file",
    "features",
    "flag_column_test",
    "folds",
    "folds_file",
    "form_level_scores",
    "length_column",
    "num_features_to_display",
    "predict_expected_scores",
    "sample_ids",
    "sample_range",
    "sample_size",
    "select_transformations",
    "show_auto_cohorts",
    "sign",
    "skll_fixed_parameters",
    "skll_grid_search_jobs",
    "skll_objective",
    "standardize_features",
    "test_label_column",
    "train_label_column",
    "truncate_outliers",
    "use_scaled_predictions",
    "use_scaled_predictions_new",
    "use_scaled_predictions_old",
    "use_truncation_thresholds",
)
BOOLEAN = (
    "exclude_zero_scores",
    "use_thumbnails",
    "predict_expected_scores",
    "select_transformations",
    "use_scaled_predictions",
    "use_scaled_predictions_new",
    "use_scaled_predictions_old",
    "use_truncation_thresholds",
)
FILE_FORMATS = ("csv", "tsv", "xlsx")


def _number(cfg: dict[str, Any], key: str, source: str) -> float | None:
    v = cfg.get(key)
    if v is None:
        return None
    try:
        out = float(v)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{key} must be a number, got {v!r}", source=source) from None
    if not np.isfinite(out):
        raise InvalidInputError(f"{key} must be finite, got {v!r}", source=source)
    return out


def _boolean(cfg: dict[str, Any], key: str, source: str) -> bool | None:
    """``true``/``false``, or the text ``"true"``/``"false"`` in any case (as rsmeval)."""
    v = cfg.get(key)
    if v is None or isinstance(v, bool):
        return v
    text = str(v).strip().lower()
    if text not in ("true", "false"):
        raise InvalidInputError(f"{key} must be true or false, got {v!r}", source=source)
    return text == "true"


def _count(v: Any, key: str, source: str) -> int:
    """A whole number >= 0 (an integral float such as 3.0 is accepted)."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
    if not ok or v < 0:
        raise InvalidInputError(f"{key} must be a whole number >= 0, got {v!r}", source=source)
    return int(v)


def _subgroups(cfg: dict[str, Any], source: str) -> list[str]:
    """A list of column names, or one text of names separated by commas (as rsmeval)."""
    v = cfg.get("subgroups") or []
    if isinstance(v, str):
        v = [s.strip() for s in v.split(",")]
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise InvalidInputError("subgroups must be a list of column names", source=source)
    return list(v)


def _flag_column(cfg: dict[str, Any], source: str) -> dict[str, list[Any]]:
    """Column -> allowed values; a single value becomes a list of one."""
    v = cfg.get("flag_column")
    if not v:
        return {}
    if not isinstance(v, dict):
        raise InvalidInputError(
            "flag_column must be an object: column -> allowed value(s)", source=source
        )
    return {str(k): (list(a) if isinstance(a, list) else [a]) for k, a in v.items()}


def _min_n_per_group(cfg: dict[str, Any], subgroups: list[str], source: str) -> dict[str, int]:
    """One minimum for every subgroup column, or an object with exactly those columns."""
    v = cfg.get("min_n_per_group")
    if not v:
        return {}
    if isinstance(v, dict):
        if sorted(v) != sorted(subgroups):
            raise InvalidInputError(
                f"the keys of min_n_per_group ({sorted(v)}) must be the subgroups "
                f"({sorted(subgroups)})",
                source=source,
            )
        return {g: _count(n, f"min_n_per_group[{g!r}]", source) for g, n in v.items()}
    n = _count(v, "min_n_per_group", source)
    return dict.fromkeys(subgroups, n)


def _candidates(cfg: dict[str, Any], source: str) -> tuple[str | None, int | None]:
    col = cfg.get("candidate_column")
    if col is not None and (not isinstance(col, str) or not col):
        raise InvalidInputError("candidate_column must be a column name", source=source)
    n = cfg.get("min_items_per_candidate")
    if n is None:
        return col, None
    n = _count(n, "min_items_per_candidate", source)
    if n and not col:
        raise InvalidInputError(
            "min_items_per_candidate needs candidate_column (the column of candidate ids)",
            source=source,
        )
    return col, n or None


def _distinct_columns(cfg: dict[str, Any], source: str) -> None:
    """The id, score and candidate columns are different columns (each gets its own name)."""
    keys = ["id_column", "human_score_column", "second_human_score_column"]
    keys += ["system_score_column", "candidate_column"]
    given = {"human_score_column": "sc1", "id_column": "spkitemid"}
    given.update({k: str(cfg[k]) for k in keys if cfg.get(k)})
    seen: dict[str, str] = {}
    for key in keys:
        if key in given and given[key] in seen:
            raise InvalidInputError(
                f"{seen[given[key]]} and {key} are the same column {given[key]!r}", source=source
            )
        if key in given:
            seen[given[key]] = key


def _check_keys(cfg: dict[str, Any], source: str) -> list[str]:
    """Refuse unknown keys and missing required ones; return the keys rsmeval drops."""
    unknown = sorted(set(cfg) - set(REQUIRED) - set(OPTIONAL) - set(IGNORED))
    if unknown:
        raise InvalidInputError(f"unknown configuration keys: {unknown}", source=source)
    for key in REQUIRED:
        if cfg.get(key) is None:
            raise InvalidInputError(f"missing required key {key!r}", source=source)
    eid = str(cfg["experiment_id"])
    if len(eid) > 200 or re.search(r"\s", eid):
        raise InvalidInputError(
            "experiment_id must have no spaces and at most 200 characters", source=source
        )
    for key in BOOLEAN:
        _boolean(cfg, key, source)
    fmt = cfg.get("file_format") or "csv"
    if not isinstance(fmt, str) or fmt.lower() not in FILE_FORMATS:
        raise InvalidInputError(
            f"file_format {fmt!r}: one of {', '.join(FILE_FORMATS)}", source=source
        )
    return sorted(k for k in cfg if k in IGNORED)


@dataclass
class RsmevalConfig:
    """The rsmeval configuration keys assay uses (RSMTool's names and defaults)."""

    experiment_id: str
    predictions_file: Path
    system_score_column: str
    trim_min: float
    trim_max: float
    human_score_column: str = "sc1"
    second_human_score_column: str | None = None
    id_column: str = "spkitemid"
    subgroups: list[str] = field(default_factory=list)
    trim_tolerance: float = 0.4998
    scale_with: str | None = None
    exclude_zero_scores: bool = True
    rater_error_variance: float | None = None
    flag_column: dict[str, list[Any]] = field(default_factory=dict)
    candidate_column: str | None = None
    min_items_per_candidate: int | None = None
    min_n_per_group: dict[str, int] = field(default_factory=dict)
    file_format: str = "csv"
    ignored: list[str] = field(default_factory=list)
    source: str = "config"

    @property
    def scale_file(self) -> Path | None:
        """The scaling file, or None for no scaling and for ``asis``."""
        if self.scale_with is None or self.scale_with in ("asis", "raw"):
            return None
        return Path(self.scale_with)

    @classmethod
    def from_dict(cls, cfg: dict[str, Any], *, base: Path, source: str) -> RsmevalConfig:
        """Check and resolve a configuration; relative paths are relative to ``base``."""
        ignored = _check_keys(cfg, source)
        subgroups = _subgroups(cfg, source)
        scale_with = cfg.get("scale_with")
        if scale_with is not None and scale_with not in ("asis", "raw"):
            scale_with = str(base / scale_with)
        ezs = _boolean(cfg, "exclude_zero_scores", source)
        tmin, tmax = _number(cfg, "trim_min", source), _number(cfg, "trim_max", source)
        tol = _number(cfg, "trim_tolerance", source)
        assert tmin is not None and tmax is not None
        if tmin > tmax:
            raise InvalidInputError("trim_min must not exceed trim_max", source=source)
        candidate, min_items = _candidates(cfg, source)
        _distinct_columns(cfg, source)
        return cls(
            experiment_id=str(cfg["experiment_id"]),
            predictions_file=base / str(cfg["predictions_file"]),
            system_score_column=str(cfg["system_score_column"]),
            trim_min=tmin,
            trim_max=tmax,
            human_score_column=str(cfg.get("human_score_column") or "sc1"),
            second_human_score_column=cfg.get("second_human_score_column"),
            id_column="spkitemid" if cfg.get("id_column") is None else str(cfg["id_column"]),
            subgroups=subgroups,
            trim_tolerance=0.4998 if tol is None else tol,
            scale_with=scale_with,
            exclude_zero_scores=True if ezs is None else ezs,
            rater_error_variance=_number(cfg, "rater_error_variance", source),
            flag_column=_flag_column(cfg, source),
            candidate_column=candidate,
            min_items_per_candidate=min_items,
            min_n_per_group=_min_n_per_group(cfg, subgroups, source),
            file_format=str(cfg.get("file_format") or "csv").lower(),
            ignored=ignored,
            source=source,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> RsmevalConfig:
        """Read an rsmeval JSON configuration file."""
        p = Path(path)
        try:
            cfg = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InvalidInputError(f"cannot read the configuration: {e}", source=str(p)) from None
        if not isinstance(cfg, dict):
            raise InvalidInputError("the configuration must be a JSON object", source=str(p))
        return cls.from_dict(cfg, base=p.resolve().parent, source=str(p))

    @property
    def score_types(self) -> list[str]:
        """RSMTool's score types (row names of ``eval``), in its order."""
        if self.scale_with is None:
            return ["raw", "raw_trim", "raw_trim_round"]
        if self.scale_with == "asis":
            return ["scale", "scale_trim", "scale_trim_round"]
        return ["raw", "raw_trim", "raw_trim_round", "scale", "scale_trim", "scale_trim_round"]

    @property
    def main_score(self) -> str:
        """The score type of ``eval_short``, the by-group and the fairness tables."""
        return "raw_trim" if self.scale_with is None else "scale_trim"
