"""An rsmeval experiment: its configuration file, its input table and RSMTool's preprocessing.

RSMTool's ``rsmeval`` reads a JSON configuration (``predictions_file``, ``system_score_column``,
``trim_min``, ``trim_max`` required), renames the columns to its internal names (``spkitemid``,
``sc1``, ``sc2``, ``raw``), drops responses whose human score is not a number (or is 0, with
``exclude_zero_scores``) and then those whose system score is not a number, and derives the
score types: ``raw`` (as given), ``scale`` (``(raw - mean_p) / sd_p * sd_h + mean_h`` with the
means and standard deviations of the ``prediction`` and ``sc1`` columns of the ``scale_with``
file; with ``scale_with: asis`` the given score *is* the scaled score), ``*_trim`` (clipped to
``[trim_min - tolerance, trim_max + tolerance]``) and ``*_trim_round`` (rounded half to even).

Example:
    >>> trim([0.2, 3.3, 7.0], 1, 5)
    array([0.5002, 3.3   , 5.4998])
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError

__all__ = ["RsmevalConfig", "Preprocessed", "preprocess", "read_scores_table", "trim"]

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
# keys that change the numbers and that assay does not implement: refused, never ignored
UNSUPPORTED = ("flag_column", "candidate_column", "min_items_per_candidate", "min_n_per_group")


def trim(values: Any, trim_min: float, trim_max: float, tolerance: float = 0.4998) -> np.ndarray:
    """Clip scores to ``[trim_min - tolerance, trim_max + tolerance]`` (RSMTool's trimming).

    The default tolerance 0.4998 keeps every trimmed score inside the scale once rounded.

    Example:
        >>> trim([0.0, 6.0], 1, 5, tolerance=0.0)
        array([1., 5.])
    """
    v = np.array(values, dtype=np.float64)
    return np.clip(v, trim_min - tolerance, trim_max + tolerance)


def read_scores_table(path: Path, text_columns: list[str]) -> pd.DataFrame:
    """A CSV, TSV or XLSX file as RSMTool reads it (``text_columns`` kept as text).

    Other formats (Parquet, JSONL) go through :func:`assay.io.tables.read_table`.
    """
    suffix = path.suffix.lower()
    conv = {c: str for c in text_columns}
    if not path.is_file():
        raise InvalidInputError("not a file (missing, or a directory)", source=str(path))
    try:
        if suffix in (".csv", ".tsv"):
            from assay.io.tables import check_text_file

            check_text_file(path)
            df = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", converters=conv)
        elif suffix == ".xlsx":
            df = pd.read_excel(path, converters=conv)
        else:
            from assay.io.tables import read_table

            df = read_table(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InvalidInputError(f"cannot read the table: {e}", source=str(path)) from None
    for c in text_columns:
        if c in df.columns:
            df[c] = df[c].map(lambda v: "" if v is None or v != v else str(v))
    return df


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
        unknown = sorted(set(cfg) - set(REQUIRED) - set(OPTIONAL))
        if unknown:
            raise InvalidInputError(f"unknown configuration keys: {unknown}", source=source)
        for key in REQUIRED:
            if cfg.get(key) is None:
                raise InvalidInputError(f"missing required key {key!r}", source=source)
        for key in UNSUPPORTED:
            if cfg.get(key) is not None:
                raise InvalidInputError(f"{key!r} is not supported by assay", source=source)
        subgroups = cfg.get("subgroups") or []
        if not isinstance(subgroups, list) or not all(isinstance(s, str) for s in subgroups):
            raise InvalidInputError("subgroups must be a list of column names", source=source)
        fmt = cfg.get("file_format", "csv")
        if fmt != "csv":
            raise InvalidInputError(f"file_format {fmt!r}: assay writes csv only", source=source)
        scale_with = cfg.get("scale_with")
        if scale_with is not None and scale_with not in ("asis", "raw"):
            scale_with = str(base / scale_with)
        ezs = cfg.get("exclude_zero_scores", True)
        if not isinstance(ezs, bool):
            raise InvalidInputError("exclude_zero_scores must be true or false", source=source)
        tmin, tmax = _number(cfg, "trim_min", source), _number(cfg, "trim_max", source)
        tol = _number(cfg, "trim_tolerance", source)
        rev = _number(cfg, "rater_error_variance", source)
        assert tmin is not None and tmax is not None
        if tmin > tmax:
            raise InvalidInputError("trim_min must not exceed trim_max", source=source)
        return cls(
            experiment_id=str(cfg["experiment_id"]),
            predictions_file=base / str(cfg["predictions_file"]),
            system_score_column=str(cfg["system_score_column"]),
            trim_min=tmin,
            trim_max=tmax,
            human_score_column=str(cfg.get("human_score_column") or "sc1"),
            second_human_score_column=cfg.get("second_human_score_column"),
            id_column="spkitemid" if cfg.get("id_column") is None else str(cfg["id_column"]),
            subgroups=list(subgroups),
            trim_tolerance=0.4998 if tol is None else tol,
            scale_with=scale_with,
            exclude_zero_scores=ezs,
            rater_error_variance=rev,
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


@dataclass
class Preprocessed:
    """The responses used (``pred``: ``spkitemid, sc1``, score types, ``sc2``, subgroups) and
    the ones excluded (``excluded``, RSMTool's ``test_excluded_responses``)."""

    pred: pd.DataFrame
    excluded: pd.DataFrame
    has_sc2: bool


def _filter(df: pd.DataFrame, col: str, exclude_zero: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows whose ``col`` is a finite number (and not 0); the others: non-numeric, then 0."""
    df = df.copy()
    df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    bad = df[col].isna() | np.isinf(df[col])
    good = df[~bad]
    parts = [df[bad]]
    if exclude_zero:
        zero = good[col] == 0
        parts.append(good[zero])
        good = good[~zero]
    return good.reset_index(drop=True), pd.concat(parts, sort=True).reset_index(drop=True)


def _scaling(cfg: RsmevalConfig) -> tuple[float, float, float, float]:
    path = cfg.scale_file
    if path is None:
        return 0.0, 1.0, 0.0, 1.0
    sdf = read_scores_table(path, [])
    for c in ("prediction", "sc1"):
        if c not in sdf.columns:
            raise InvalidInputError("missing column of the scaling file", source=str(path), field=c)
    p = pd.to_numeric(sdf["prediction"], errors="coerce")
    h = pd.to_numeric(sdf["sc1"], errors="coerce")
    return float(p.mean()), float(p.std()), float(h.mean()), float(h.std())


def _renamed(df: pd.DataFrame, cfg: RsmevalConfig) -> pd.DataFrame:
    if not cfg.id_column:  # no id column: the row number (1-based) is the id
        df = df.rename(columns={"spkitemid": "##spkitemid##"})
        df.insert(0, "spkitemid", [str(i + 1) for i in range(len(df))])
    names = {
        cfg.id_column or "spkitemid": "spkitemid",
        cfg.human_score_column: "sc1",
        cfg.system_score_column: "raw",
    }
    if cfg.second_human_score_column:
        names[cfg.second_human_score_column] = "sc2"
    wanted = [*names, *cfg.subgroups]
    for c in wanted:
        if c not in df.columns:
            raise InvalidInputError("missing column", source=str(cfg.predictions_file), field=c)
    clash = [c for c in df.columns if c in ("spkitemid", "sc1", "sc2", "raw") and c not in names]
    df = df.rename(columns={c: f"##{c}##" for c in clash}).rename(columns=names)
    if df["spkitemid"].duplicated().any():
        raise InvalidInputError(
            "duplicate response ids", source=str(cfg.predictions_file), field=cfg.id_column
        )
    for g in cfg.subgroups:
        df[g] = df[g].replace(to_replace=r"^\s*$", value="No info", regex=True)
    return df


def preprocess(cfg: RsmevalConfig) -> Preprocessed:
    """Read the predictions and apply RSMTool's filtering, scaling and trimming."""
    src = str(cfg.predictions_file)
    text = [cfg.id_column, *cfg.subgroups]
    df = _renamed(read_scores_table(cfg.predictions_file, text), cfg)
    kept, excl_h = _filter(df, "sc1", cfg.exclude_zero_scores)
    if kept.empty:
        raise InvalidInputError("no response has a numeric human score", source=src, field="sc1")
    excl_h["raw"] = pd.to_numeric(excl_h["raw"], errors="coerce").astype(float)
    kept, excl_m = _filter(kept, "raw", False)
    if kept.empty:
        raise InvalidInputError("no response has a numeric system score", source=src)
    excluded = pd.concat([excl_h, excl_m], sort=True)
    excluded = excluded[["spkitemid", *[c for c in excluded.columns if c != "spkitemid"]]]
    pm, psd, hm, hsd = _scaling(cfg)
    out = pd.DataFrame({"spkitemid": kept["spkitemid"], "sc1": kept["sc1"]})
    raw = kept["raw"].to_numpy(dtype=np.float64)
    derived = {"raw": raw, "scale": (raw - pm) / psd * hsd + hm}
    for t in ("raw", "scale"):
        trimmed = trim(derived[t], cfg.trim_min, cfg.trim_max, cfg.trim_tolerance)
        derived[f"{t}_trim"] = trimmed
        derived[f"{t}_trim_round"] = np.rint(trimmed).astype(np.int64)
    for t in cfg.score_types:
        out[t] = derived[t]
    has_sc2 = bool(cfg.second_human_score_column)
    if has_sc2:
        sc2 = pd.to_numeric(kept["sc2"], errors="coerce").astype(float)
        out["sc2"] = sc2.replace(0, np.nan) if cfg.exclude_zero_scores else sc2
    for g in cfg.subgroups:
        out[g] = kept[g].astype(str)
    return Preprocessed(pred=out, excluded=excluded, has_sc2=has_sc2)
