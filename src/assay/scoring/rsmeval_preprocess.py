"""RSMTool's rsmeval preprocessing: read the predictions, rename, filter, scale and trim.

Order (as rsmeval): the configured columns are renamed to ``spkitemid``, ``sc1``, ``sc2``,
``raw`` and ``candidate`` (a data column that already bears one of RSMTool's reserved names,
``length`` included, becomes ``##name##``); empty subgroup values become ``No info``; rows
whose flag columns hold a value outside the allowed lists are set aside
(``test_responses_with_excluded_flags``); then rows whose human score is not a finite number
(or is 0, with ``exclude_zero_scores``), then rows whose system score is not a number, then
(with ``min_items_per_candidate``) every response of a candidate left with fewer responses
are excluded (``test_excluded_responses``).

Flag values compare as numbers where they read as numbers: a value (in the data or in the
configuration) is turned into text, then into an integer or a float if Python can read it
as one, so ``1``, ``"1"``, ``1.0`` and ``"1.0"`` are all the same flag.

Example:
    >>> trim([0.2, 3.3, 7.0], 1, 5)
    array([0.5002, 3.3   , 5.4998])
    >>> [flag_value(v) for v in (1, "1.0", " 2 ", "ok", True)]
    [1.0, 1.0, 2.0, 'ok', 'True']
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError

if TYPE_CHECKING:
    from assay.scoring.rsmeval_config import RsmevalConfig

__all__ = [
    "Preprocessed",
    "flag_value",
    "input_column",
    "preprocess",
    "read_scores_table",
    "trim",
]

# RSMTool's reserved column names; a data column bearing one it does not play is renamed
RESERVED = ("spkitemid", "sc1", "sc2", "length", "raw", "candidate")


def trim(values: Any, trim_min: float, trim_max: float, tolerance: float = 0.4998) -> np.ndarray:
    """Clip scores to ``[trim_min - tolerance, trim_max + tolerance]`` (RSMTool's trimming).

    The default tolerance 0.4998 keeps every trimmed score inside the scale once rounded.

    Example:
        >>> trim([0.0, 6.0], 1, 5, tolerance=0.0)
        array([1., 5.])
    """
    v = np.array(values, dtype=np.float64)
    return np.clip(v, trim_min - tolerance, trim_max + tolerance)


def flag_value(value: Any) -> Any:
    """A flag value as rsmeval compares it: its text read as an int (then made a float), else
    as a float, else the text itself."""
    text = str(value)
    try:
        return float(int(text))
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


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
    except (KeyError, zipfile.BadZipFile):  # a zip that is no workbook (an Inspect .eval log)
        raise InvalidInputError(
            "cannot read the table: not an Excel workbook", source=str(path)
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InvalidInputError(f"cannot read the table: {e}", source=str(path)) from None
    for c in text_columns:
        if c in df.columns:
            df[c] = df[c].map(lambda v: "" if v is None or v != v else str(v))
    return df


@dataclass
class Preprocessed:
    """The responses used (``pred``: ``spkitemid, sc1``, score types, ``sc2``, subgroups,
    ``candidate``), the ones excluded (``excluded``, RSMTool's ``test_excluded_responses``),
    the ones set aside by the flag columns (``flagged``) and the rows used with every input
    column (``kept``, renamed)."""

    pred: pd.DataFrame
    excluded: pd.DataFrame
    has_sc2: bool
    flagged: pd.DataFrame
    kept: pd.DataFrame


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


def _input_names(cfg: RsmevalConfig) -> dict[str, str]:
    """The predictions file's columns rsmeval renames, and their names after preprocessing."""
    names = {
        cfg.id_column or "spkitemid": "spkitemid",
        cfg.human_score_column: "sc1",
        cfg.system_score_column: "raw",
    }
    if cfg.second_human_score_column:
        names[cfg.second_human_score_column] = "sc2"
    if cfg.candidate_column:
        names[cfg.candidate_column] = "candidate"
    return names


def _renamed(df: pd.DataFrame, cfg: RsmevalConfig) -> pd.DataFrame:
    src = str(cfg.predictions_file)
    if not cfg.id_column:  # no id column: the row number (1-based) is the id
        df = df.rename(columns={"spkitemid": "##spkitemid##"})
        df.insert(0, "spkitemid", [str(i + 1) for i in range(len(df))])
    names = _input_names(cfg)
    for c in [*names, *cfg.subgroups]:
        if c not in df.columns:
            raise InvalidInputError("missing column", source=src, field=c)
    clash = [c for c in df.columns if c in RESERVED and names.get(c) != c]
    df = df.rename(columns={c: f"##{c}##" for c in clash})
    df = df.rename(columns={(f"##{k}##" if k in clash else k): v for k, v in names.items()})
    if df["spkitemid"].duplicated().any():
        raise InvalidInputError("duplicate response ids", source=src, field=cfg.id_column)
    for g in cfg.subgroups:
        df[g] = df[g].replace(to_replace=r"^\s*$", value="No info", regex=True)
    return df


def _flag_filter(df: pd.DataFrame, cfg: RsmevalConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows whose every flag column holds an allowed value, and the others."""
    if not cfg.flag_column:
        return df, df.iloc[:0]
    keep = pd.Series(True, index=df.index)
    for col, allowed in cfg.flag_column.items():
        if col not in df.columns:
            raise InvalidInputError(
                "missing flag column", source=str(cfg.predictions_file), field=col
            )
        keep &= df[col].map(flag_value).isin([flag_value(v) for v in allowed])
    if not keep.any():
        raise InvalidInputError(
            f"no response has an allowed value in the flag columns {list(cfg.flag_column)}",
            source=cfg.source,
            field="flag_column",
        )
    return df[keep].reset_index(drop=True), df[~keep].reset_index(drop=True)


def _candidate_filter(
    kept: pd.DataFrame, excluded: pd.DataFrame, cfg: RsmevalConfig
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Drop every response of a candidate with fewer than ``min_items_per_candidate``."""
    n = cfg.min_items_per_candidate
    if not n:
        return kept, excluded
    counts = kept["candidate"].value_counts()
    ok = kept["candidate"].isin(counts.index[counts >= n])
    if not ok.any():
        raise InvalidInputError(
            f"no candidate has {n} or more responses left to evaluate",
            source=cfg.source,
            field="min_items_per_candidate",
        )
    excluded = pd.concat([excluded, kept[~ok].reset_index(drop=True)], sort=True)
    return kept[ok].reset_index(drop=True), excluded


def _filtered(df: pd.DataFrame, cfg: RsmevalConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The responses evaluated and the ones excluded by score or candidate."""
    src = str(cfg.predictions_file)
    kept, excl_h = _filter(df, "sc1", cfg.exclude_zero_scores)
    if kept.empty:
        raise InvalidInputError("no response has a numeric human score", source=src, field="sc1")
    excl_h["raw"] = pd.to_numeric(excl_h["raw"], errors="coerce").astype(float)
    kept, excl_m = _filter(kept, "raw", False)
    if kept.empty:
        raise InvalidInputError("no response has a numeric system score", source=src)
    kept, excluded = _candidate_filter(kept, pd.concat([excl_h, excl_m], sort=True), cfg)
    excluded = excluded[["spkitemid", *[c for c in excluded.columns if c != "spkitemid"]]]
    return kept, excluded


def preprocess(cfg: RsmevalConfig) -> Preprocessed:
    """Read the predictions and apply RSMTool's filtering, scaling and trimming."""
    text = [cfg.id_column, *cfg.subgroups]
    if cfg.candidate_column:
        text.append(cfg.candidate_column)
    df = _renamed(read_scores_table(cfg.predictions_file, text), cfg)
    df, flagged = _flag_filter(df, cfg)
    kept, excluded = _filtered(df, cfg)
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
    if cfg.candidate_column:
        out["candidate"] = kept["candidate"].astype(str)
    return Preprocessed(pred=out, excluded=excluded, has_sc2=has_sc2, flagged=flagged, kept=kept)


def input_column(cfg: RsmevalConfig, pre: Preprocessed, name: str, role: str) -> pd.Series:
    """The input column ``name`` on the evaluated responses (``pred``'s rows), under whatever
    name preprocessing gave it: a subgroup as evaluated (``No info`` for empty values), the
    candidate column as text, the id and score columns renamed, any other column as read.
    ``role`` (``cluster``, ``by``) names the use in the error when there is no such column.

    Example:
        >>> import pandas as pd
        >>> from assay.scoring.rsmeval_config import RsmevalConfig
        >>> cfg = RsmevalConfig(experiment_id="x", predictions_file="p.csv", trim_min=1,
        ...     trim_max=3, system_score_column="m", human_score_column="h",
        ...     candidate_column="who")
        >>> kept = pd.DataFrame({"spkitemid": ["a"], "sc1": [1.0], "raw": [1.0], "t": [7]})
        >>> pred = pd.DataFrame({"spkitemid": ["a"], "sc1": [1.0], "candidate": ["c1"]})
        >>> pre = Preprocessed(pred, kept.iloc[:0], False, kept.iloc[:0], kept)
        >>> input_column(cfg, pre, "who", "cluster").tolist()
        ['c1']
        >>> input_column(cfg, pre, "t", "by").tolist()
        [7]
    """
    if name in cfg.subgroups:
        return pre.pred[name]
    if cfg.candidate_column and name == cfg.candidate_column:
        return pre.pred["candidate"]
    names = _input_names(cfg)
    if not cfg.id_column and name == "spkitemid":  # the row number took its place
        inner = "##spkitemid##"
    else:
        inner = names.get(name, f"##{name}##" if name in RESERVED else name)
    if inner not in pre.kept.columns:
        raise InvalidInputError(
            f"missing column (named as the {role} column)",
            source=str(cfg.predictions_file),
            field=name,
        )
    return pre.kept[inner]
