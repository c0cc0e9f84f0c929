"""Run by an interpreter that has rsmtool installed (see test_scoring_vs_rsmtool.py).

Reads a CSV (columns sc1, sc2, raw_trim, raw_trim_round, group) and a JSON of extra PRMSE
cases, computes RSMTool's tables with rsmtool's own functions, writes JSON to stdout.
"""

import json
import sys
import warnings

import numpy as np
import pandas as pd

warnings.simplefilter("ignore")

from rsmtool.analyzer import Analyzer  # noqa: E402
from rsmtool.fairness_utils import get_fairness_analyses  # noqa: E402
from rsmtool.utils.prmse import get_true_score_evaluations, prmse_true  # noqa: E402
from skll.metrics import kappa  # noqa: E402

df = pd.read_csv(sys.argv[1])
extra = json.loads(open(sys.argv[2]).read())
an = Analyzer()
scores = df[["sc1", "raw_trim", "raw_trim_round", "sc2"]].copy()
hs, short, hh = an.compute_metrics(scores, compute_shortened=True, include_second_score=True)
by_hs, by_hh = an.compute_metrics_by_group(
    df[["sc1", "raw_trim", "raw_trim_round", "sc2", "group"]].copy(),
    "group",
    include_second_score=True,
)
deg, dis = an.compute_degradation_and_disattenuated_correlations(scores.copy())
dis_by = an.compute_disattenuated_correlations(by_hs["corr.raw_trim"], by_hh["corr"])
tse = get_true_score_evaluations(df, ["raw_trim", "raw_trim_round"], ["sc1", "sc2"])
_, fair = get_fairness_analyses(df[["sc1", "raw_trim", "group"]].copy(), "group", "raw_trim", "sc1")
out = {
    "eval": hs.to_json(orient="split", double_precision=15),
    "eval_short": short.to_json(orient="split", double_precision=15),
    "consistency": hh.to_json(orient="split", double_precision=15),
    "eval_by_group": by_hs.to_json(orient="split", double_precision=15),
    "consistency_by_group": by_hh.to_json(orient="split", double_precision=15),
    "degradation": deg.to_json(orient="split", double_precision=15),
    "disattenuated_correlations": dis.to_json(orient="split", double_precision=15),
    "disattenuated_correlations_by_group": dis_by.to_json(orient="split", double_precision=15),
    "true_score_eval": tse.to_json(orient="split", double_precision=15),
    "fairness": fair["fairness_metrics_by_group"].to_json(orient="split", double_precision=15),
    "prmse": [
        prmse_true(np.array(c["system"]), np.array(c["ratings"], dtype=float), c.get("variance"))
        for c in extra["prmse"]
    ],
    "kappa": [
        kappa(np.array(c["h"]), np.array(c["m"]), weights=c["weights"]) for c in extra["kappa"]
    ],
}
json.dump(out, sys.stdout)
