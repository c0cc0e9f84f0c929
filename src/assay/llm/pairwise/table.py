"""The input table of pairwise judging, and the comparisons built from it.

One row per question: ``question``, ``index`` (unique; ``{project}_{task}`` in DevBench),
``evaluating_guidance``, ``task`` (``{file}-{metric}``), an optional ``reference_answer``,
and one ``answer-{model}`` column per model. Read from xlsx, CSV, TSV, JSONL or a pandas
DataFrame. Every check runs before any judge call: a missing column, an ``answer-``
column for a model nobody asked about, a duplicate index, a ``fill_contents`` path that
does not exist all raise :class:`~assay.errors.InvalidInputError` naming the file, the row
(1-based, header not counted) and the column.

Each (question, model) gives one comparison against the reference model in ``dual`` mode
(both orders: reference first, then model first) or one in ``random`` mode (the order
drawn per question with ``numpy.random.RandomState(seed)``, re-seeded for every model,
as the original does, so the same seed gives the original's orders; a negative seed swaps
which model counts as "first"). Questions where either answer is empty are skipped.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"question": ["q"], "index": ["p_t-general"],
    ...     "evaluating_guidance": ["g"], "task": ["t-general"],
    ...     "answer-m": ["x"], "answer-ref": ["y"]})
    >>> t = read_table(df, models=["m"], reference_model="ref")
    >>> [c.cmp_index for c in build_comparisons(t, ["m"], "ref", mode="dual")]
    ['p_t-general;ref;m', 'p_t-general;m;ref']
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assay._validation import show
from assay.errors import InvalidInputError

__all__ = ["REQUIRED_COLUMNS", "Comparison", "read_table", "build_comparisons", "check_models"]

#: numpy's legacy seeding (the original's ``RandomState(seed)``) takes 0 .. 2**32 - 1.
MAX_SEED = 2**32 - 1

REQUIRED_COLUMNS = ("question", "index", "evaluating_guidance", "task")
_TEXT_COLUMNS = ("question", "evaluating_guidance", "task", "reference_answer")


@dataclass(frozen=True)
class Comparison:
    """One judged (or to be judged) pair: ``answer1`` by ``model_a``, ``answer2`` by ``model_b``."""

    index: str
    model_a: str
    model_b: str
    question: str
    answer1: str
    answer2: str
    guidance: str
    task: str
    reference_answer: str | None = None

    @property
    def cmp_index(self) -> str:
        """``{index};{model_a};{model_b}``, the original's comparison key."""
        return f"{self.index};{self.model_a};{self.model_b}"

    @property
    def exact_match(self) -> bool:
        """The two answers are identical after stripping white space (not sent to the judge)."""
        return self.answer1.strip() == self.answer2.strip()


def _load(data: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, str]:
    if isinstance(data, pd.DataFrame):
        return data.reset_index(drop=True), "data"
    path = Path(data)
    source = str(path)
    if not path.is_file():
        raise InvalidInputError("no such file", source=source)
    suffix = path.suffix.lower()
    try:
        if suffix in (".xlsx", ".xls"):
            df = pd.read_excel(path, dtype=object)
        elif suffix == ".jsonl":
            df = pd.read_json(path, lines=True, dtype=False)
        elif suffix == ".tsv":
            df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, na_values=[""])
        elif suffix == ".csv":
            df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        else:
            raise InvalidInputError("expected a .xlsx, .csv, .tsv or .jsonl table", source=source)
    except InvalidInputError:
        raise
    except (KeyError, zipfile.BadZipFile):  # a zip that is no workbook (an Inspect .eval log)
        raise InvalidInputError(
            "cannot read the table: not an Excel workbook", source=source
        ) from None
    except (ValueError, OSError, ImportError) as e:
        raise InvalidInputError(f"cannot read the table: {e}", source=source) from None
    return df, source


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or str(v).strip() == ""


def _fill_contents(df: pd.DataFrame, columns: Sequence[str], source: str, base: Path) -> None:
    """Replace path cells by the contents of the files they name (checked before any call)."""
    for col in columns:
        if col not in df.columns:
            raise InvalidInputError("no such column to fill", source=source, field=col)
        values = []
        for row, cell in enumerate(df[col].tolist(), start=1):
            if _blank(cell):
                values.append(cell)
                continue
            p = Path(str(cell).strip())
            found = next((c for c in (p, base / p) if c.is_file()), None)
            if found is None:
                raise InvalidInputError(
                    f"file {str(cell).strip()!r} does not exist",
                    source=source,
                    record=row,
                    field=col,
                )
            try:
                values.append(found.read_text(encoding="utf-8"))
            except UnicodeDecodeError as e:
                raise InvalidInputError(
                    f"file {str(found)!r} is not UTF-8 text (byte {e.start + 1}: "
                    f"{e.object[e.start : e.start + 1]!r})",
                    source=source,
                    record=row,
                    field=col,
                ) from None
        df[col] = values


def read_table(
    data: str | Path | pd.DataFrame,
    *,
    models: Sequence[str],
    reference_model: str,
    fill_contents: Sequence[str] = (),
) -> pd.DataFrame:
    """Read and check the input table; returns it with file-path cells filled in.

    Raises:
        InvalidInputError: a declared column is missing, an ``answer-{model}`` column
            names a model that is neither in ``models`` nor the reference, an ``index``
            repeats, or a ``fill_contents`` cell names a file that does not exist.
    """
    check_models(models, reference_model)
    df, source = _load(data)
    df = df.copy()
    for col in REQUIRED_COLUMNS:
        if col not in df.columns:
            raise InvalidInputError("missing column", source=source, field=col)
    wanted = list(dict.fromkeys([*models, reference_model]))
    for m in wanted:
        if f"answer-{m}" not in df.columns:
            raise InvalidInputError(
                f"missing column (model {m!r} was given)", source=source, field=f"answer-{m}"
            )
    for col in df.columns:
        if str(col).startswith("answer-") and str(col)[len("answer-") :] not in wanted:
            raise InvalidInputError(
                f"a column for model {str(col)[7:]!r}, which is neither one of the models "
                "given nor the reference model",
                source=source,
                field=str(col),
            )
    for row, v in enumerate(df["index"].tolist(), start=1):
        if _blank(v):
            raise InvalidInputError("empty", source=source, record=row, field="index")
    dup = df["index"].astype(str).duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0]) + 1
        raise InvalidInputError(
            f"index {show(df['index'].iloc[row - 1])} repeats",
            source=source,
            record=row,
            field="index",
        )
    base = Path(data).parent if not isinstance(data, pd.DataFrame) else Path(".")
    _fill_contents(df, fill_contents, source, base)
    return df


def check_models(models: Sequence[str], reference_model: str) -> None:
    """Each model once (a model given twice would be judged, and counted, twice).

    The reference model may be among the models, as in the original's configurations:
    its comparisons with itself are exact matches (counted, never sent) and give no win
    rate and no rating game.

    Example:
        >>> check_models(["m1", "m1"], "ref")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --models: 'm1' is given twice
    """
    seen: set[str] = set()
    for m in models:
        if m in seen:
            raise InvalidInputError(f"{m!r} is given twice", source="--models")
        seen.add(m)


def check_seed(seed: int) -> int:
    """The random mode's seed: an integer whose absolute value numpy can seed with.

    Example:
        >>> check_seed(2**33)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --seed: must be between -4294967295 and 4294967295, got ...
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidInputError(f"expected an integer, got {show(seed)}", source="--seed")
    if abs(int(seed)) > MAX_SEED:
        raise InvalidInputError(
            f"must be between {-MAX_SEED} and {MAX_SEED}, got {int(seed)}", source="--seed"
        )
    return int(seed)


def _text(v: Any) -> str:
    return "" if _blank(v) else str(v)


def build_comparisons(
    table: pd.DataFrame,
    models: Sequence[str],
    reference_model: str,
    *,
    mode: str = "dual",
    seed: int = 2680,
) -> list[Comparison]:
    """Comparisons of every model against the reference (see the module docstring)."""
    if mode not in ("dual", "random"):
        raise InvalidInputError(f"must be 'dual' or 'random', got {mode!r}", source="--mode")
    seed = check_seed(seed)
    check_models(models, reference_model)
    out: list[Comparison] = []
    has_ref = "reference_answer" in table.columns
    for model in models:
        first, second = (model, reference_model) if seed < 0 else (reference_model, model)
        rng = np.random.RandomState(abs(int(seed)))
        for _, row in table.iterrows():
            a_first, a_second = row[f"answer-{first}"], row[f"answer-{second}"]
            if _blank(a_first) or _blank(a_second):
                continue
            orders = ["normal", "rev"] if mode == "dual" else []
            if mode == "random":
                orders = ["normal" if rng.random_sample() < 0.5 else "rev"]
            for order in orders:
                a, b = (first, second) if order == "normal" else (second, first)
                out.append(
                    Comparison(
                        index=str(row["index"]),
                        model_a=a,
                        model_b=b,
                        question=_text(row["question"]).strip(),
                        answer1=str(row[f"answer-{a}"]).strip(),
                        answer2=str(row[f"answer-{b}"]).strip(),
                        guidance=_text(row["evaluating_guidance"]),
                        task=_text(row["task"]),
                        reference_answer=_text(row["reference_answer"]) if has_ref else None,
                    )
                )
    return out
