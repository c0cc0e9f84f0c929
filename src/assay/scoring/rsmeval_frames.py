"""RSMTool's rsmeval tables beyond the metrics: confusion matrices, score distribution, data
composition, excluded responses and the fairness models' coefficients.

Example:
    >>> import pandas as pd
    >>> confusion_table(pd.Series([1, 2, 2]), pd.Series([1, 3, 2])).to_numpy().tolist()
    [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from assay.scoring.helpers import convert_to_ordered_category

__all__ = [
    "coefficient_tables",
    "composition_tables",
    "confusion_table",
    "excluded_composition",
    "input_tables",
    "score_distribution",
]


def confusion_table(rows: pd.Series, cols: pd.Series) -> pd.DataFrame:
    """Counts of (row score, column score) over the labels seen in either (sorted).

    Scores are rounded half to even and compared as integers; only labels that occur appear
    (RSMTool's ``confMatrix``, ``confMatrix_h1h2``).
    """
    r = np.rint(rows.to_numpy(dtype=float)).astype(np.int64)
    c = np.rint(cols.to_numpy(dtype=float)).astype(np.int64)
    labels = np.unique(np.concatenate([r, c]))
    ri, ci = np.searchsorted(labels, r), np.searchsorted(labels, c)
    counts = np.zeros((labels.size, labels.size), dtype=np.int64)
    np.add.at(counts, (ri, ci), 1)
    return pd.DataFrame(counts, index=labels, columns=labels)


def score_distribution(human: pd.Series, system: pd.Series, name: str) -> pd.DataFrame:
    """Percent of responses at each rounded score, human vs system, and their difference."""
    n = len(human)
    hs = pd.Series(np.rint(human.to_numpy(dtype=float))).value_counts() / n * 100
    ms = pd.Series(system.to_numpy(dtype=float)).value_counts() / n * 100
    scores = np.union1d(hs.index.to_numpy(dtype=float), ms.index.to_numpy(dtype=float))
    df = pd.DataFrame(
        {
            "score": scores,
            "human": hs.reindex(scores).fillna(0).to_numpy(),
            name: ms.reindex(scores).fillna(0).to_numpy(),
        },
        index=scores,
    )
    df["difference"] = df[name] - df["human"]
    return df


def excluded_composition(
    excluded: pd.DataFrame, exclude_zero_scores: bool, listwise: bool = False
) -> pd.DataFrame:
    """Excluded responses by human score (numeric non-zero / zero / non-numeric) and system
    score (numeric / non-numeric). Without candidate exclusion (``listwise``), the cells that
    cannot hold a response are empty; the row names are a column only when some response
    was excluded (as RSMTool writes it)."""
    index = ["numeric non-zero human score", "zero human score", "non-numeric human score"]
    out = pd.DataFrame(
        {"numeric system score": [0, 0, 0], "non-numeric system score": [0, 0, 0]},
        index=index,
    )
    if not excluded.empty:
        h = pd.to_numeric(excluded["sc1"], errors="coerce").astype(float)
        cat = np.where(h.isna(), index[2], np.where(h == 0, index[1], index[0]))
        sys_bad = pd.to_numeric(excluded["raw"], errors="coerce").isna().to_numpy()
        for row in index:
            sel = cat == row
            out.loc[row, "numeric system score"] = int((sel & ~sys_bad).sum())
            out.loc[row, "non-numeric system score"] = int((sel & sys_bad).sum())
        out.insert(0, "Human/System", index)
    if not listwise:
        out["numeric system score"] = out["numeric system score"].astype(float)
        out.loc[index[0], "numeric system score"] = np.nan
        if not exclude_zero_scores:
            out.loc[index[1], "numeric system score"] = np.nan
    return out


def input_tables(
    kept: pd.DataFrame, score_types: list[str], subgroups: list[str], sc2: pd.Series | None
) -> dict[str, pd.DataFrame]:
    """The used responses' input split as RSMTool writes it: ``test_metadata`` (id, subgroups,
    candidate), ``test_human_scores`` (id, ``sc1``, ``sc2`` as used) and
    ``test_other_columns`` (id and every column not in the other two or the scores)."""
    meta = ["spkitemid", *subgroups, *(["candidate"] if "candidate" in kept.columns else [])]
    taken = {"sc1", *score_types, *meta}
    out = {"test_metadata": kept[meta]}
    if sc2 is not None:
        out["test_human_scores"] = pd.DataFrame(
            {"spkitemid": kept["spkitemid"], "sc1": kept["sc1"], "sc2": sc2.to_numpy()}
        )
        taken.add("sc2")
    taken.discard("spkitemid")
    out["test_other_columns"] = kept[[c for c in kept.columns if c not in taken]]
    return out


def composition_tables(
    pred: pd.DataFrame, subgroups: list[str], candidates: bool = False
) -> dict[str, pd.DataFrame]:
    """``data_composition`` (responses, candidates, distinct values per group column) and
    ``data_composition_by_<g>`` (responses per group, groups sorted)."""
    comp = {"partition": ["Evaluation"], "responses": [len(pred)]}
    if candidates:
        comp["candidates"] = [pred["candidate"].nunique()]
    for g in subgroups:
        comp[g] = [pred[g].nunique()]
    out = {"data_composition": pd.DataFrame(comp)}
    for g in subgroups:
        counts = pred.groupby(g).size()
        out[f"data_composition_by_{g}"] = pd.DataFrame(
            {g: counts.index.to_numpy(), "N responses": counts.to_numpy()}
        )
    return out


def _coefficients(fit: object, base: str) -> pd.DataFrame:
    df = pd.concat([fit.params, fit.pvalues, fit.conf_int()], axis=1)  # type: ignore[attr-defined]
    df.columns = ["estimate", "P>[t]", "[0.025", "0.975]"]
    rows = ["Intercept", *[v for v in df.index if "group" in v]]
    df = df.loc[rows]
    df.index = [
        f"Intercept ({base})" if v == "Intercept" else v.split(".")[1].strip("]") for v in rows
    ]
    return df


def coefficient_tables(
    human: pd.Series, system: pd.Series, groups: pd.Series, column: str
) -> dict[str, pd.DataFrame]:
    """``estimates_osa/osd/csd_by_<column>``: each fairness model's intercept (reference group
    = the largest, ties alphabetical) and group coefficients with p-values and 95% intervals.

    OSA regresses the squared error on the group, OSD the error, CSD the error on the group and
    the human score (categorical). Ordinary least squares on every response (statsmodels).
    """
    import statsmodels.formula.api as smf

    df = pd.DataFrame({"sc1": human.to_numpy(), "m": system.to_numpy()})
    df["error"] = df["m"] - df["sc1"]
    df["SE"] = df["error"] ** 2
    df["group"] = convert_to_ordered_category(groups.reset_index(drop=True).astype(str))
    df["sc1_cat"] = convert_to_ordered_category(df["sc1"])
    base = str(df["group"].cat.categories[0])
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, formula in (
            ("osa", "SE ~ group"),
            ("osd", "error ~ group"),
            ("csd", "error ~ group + sc1_cat"),
        ):
            fit = smf.ols(formula=formula, data=df).fit()
            out[f"estimates_{name}_by_{column}"] = _coefficients(fit, base)
    return out
