"""Demo section: automated-scoring evaluation (RSMTool's metric set) on a simulated essay set.

The data are generated deterministically (seed 2026): 20,000 essays with a latent proficiency,
a first human score 1-6 on every essay, a second human score on 20%, a system score from a
ridge regression (scikit-learn) on noisy "features", and two subgroup columns (L1, a test
centre). One essay group (L1 = "ko") receives slightly inflated system scores, which the
fairness tables pick up.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from assay.io.files import write_files_atomic
from assay.scoring import scoring_tables
from assay.scoring.tables import format_value
from saving import save


def make_essays(n: int = 20_000, seed: int = 2026) -> pd.DataFrame:
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(seed)
    l1 = rng.choice(["en", "es", "zh", "ar", "ko"], n, p=[0.35, 0.25, 0.2, 0.12, 0.08])
    centre = rng.choice(["north", "south", "online"], n, p=[0.45, 0.4, 0.15])
    ability = rng.normal(3.5, 1.0, n)
    h1 = np.clip(np.rint(ability + rng.normal(0, 0.55, n)), 1, 6)
    h2 = np.clip(np.rint(ability + rng.normal(0, 0.55, n)), 1, 6)
    h2[rng.random(n) >= 0.2] = np.nan
    feats = ability[:, None] * rng.uniform(0.5, 1.5, 6) + rng.normal(0, 0.8, (n, 6))
    train = rng.random(n) < 0.5
    model = Ridge(alpha=1.0).fit(feats[train], h1[train])
    system = model.predict(feats) + 0.25 * (l1 == "ko")
    df = pd.DataFrame(
        {
            "essay": np.arange(n),
            "human": h1,
            "human2": h2,
            "system": system,
            "L1": l1,
            "centre": centre,
        }
    )
    return df[~train].reset_index(drop=True)


def run(out_dir: Path, console: Console) -> None:
    df = make_essays()
    res = scoring_tables(
        df, human="human", system="system", human2="human2", group_columns=["L1", "centre"]
    )
    ev, cons, tse = res["eval"], res["consistency"], res["true_score_eval"]
    t = Table(
        title=f"scoring: {len(df):,} simulated essays vs human scores "
        "(eval, consistency, true_score_eval)"
    )
    for c in ("vs human", "N", "r", "QWK", "kappa", "exact%", "adj%", "SMD", "PRMSE"):
        t.add_column(c, justify="right")

    def f(v):
        return format_value(float(v), digits=3, integers=False)

    for row, name in (("system", "system"), ("system_round", "rounded")):
        r = ev.loc[row]
        t.add_row(
            name,
            str(int(r["N"])),
            f(r["corr"]),
            f(r["wtkappa"]),
            f(r["kappa"]),
            format_value(float(r["exact_agr"]), digits=1, integers=False),
            format_value(float(r["adj_agr"]), digits=1, integers=False),
            f(r["SMD"]),
            f(tse.loc[row, "PRMSE true"]),
        )
    c = cons.iloc[0]
    t.add_row(
        "human 2",
        str(int(c["N"])),
        f(c["corr"]),
        f(c["wtkappa"]),
        f(c["kappa"]),
        format_value(float(c["exact_agr"]), digits=1, integers=False),
        format_value(float(c["adj_agr"]), digits=1, integers=False),
        f(c["SMD"]),
        "",
    )
    console.print(t)
    by = res["eval_by_L1"]
    t2 = Table(title="eval_by_L1 (DSM) and fairness_metrics_by_L1")
    for col in ("L1", "N", "wtkappa.system", "DSM.system", "RMSE.system"):
        t2.add_column(col, justify="right")
    for g, r in by.iterrows():
        t2.add_row(
            str(g),
            str(int(r["N"])),
            f(r["wtkappa.system"]),
            f(r["DSM.system"]),
            f(r["RMSE.system"]),
        )
    console.print(t2)
    fm = res["fairness_metrics_by_L1"]
    console.print(
        "fairness by L1 (reference group {}): ".format(fm["base_category"].iloc[0])
        + ", ".join(
            f"{k} R2={format_value(float(fm.loc['R2', k]), integers=False)}"
            f" (p={fm.loc['sig', k]:.2g})"
            for k in fm.columns
            if k != "base_category"
        )
    )
    target = Path(out_dir) / "scoring"
    files = res.csv_files()
    files["metrics.json"] = res.metrics.to_json(indent=2) + "\n"
    write_files_atomic(target, files)
    save(out_dir, res.metrics, console, kind="scoring", dataset="simulated essays", model="ridge")
    console.print(
        "tables (eval.csv, consistency.csv, true_score_eval.csv, eval_by_*.csv, "
        f"fairness_metrics_by_*.csv) and metrics.json in {target}"
    )
