"""Run by an interpreter that has rsmtool installed (see test_scoring_helpers_vs_rsmtool.py).

Reads a JSON of cases from argv[1], answers each with rsmtool's own helper, writes JSON.
"""

import json
import sys
import warnings

import numpy as np
import pandas as pd

warnings.simplefilter("ignore")

from rsmtool.analyzer import Analyzer  # noqa: E402
from rsmtool.fairness_utils import convert_to_ordered_category  # noqa: E402
from rsmtool.utils.metrics import (  # noqa: E402
    difference_of_standardized_means,
    partial_correlations,
    standardized_mean_difference,
)
from rsmtool.utils.prmse import get_n_human_scores  # noqa: E402


def _num(x):
    return None if x is None or not np.isfinite(x) else float(x)


cases = json.loads(open(sys.argv[1]).read())
out = {"smd": [], "dsm": [], "pcor": [], "dis": [], "nh": [], "cat": []}
for c in cases["smd"]:
    out["smd"].append(
        _num(
            standardized_mean_difference(
                np.array(c["h"]),
                np.array(c["m"]),
                c.get("phsd"),
                c.get("pmsd"),
                c["method"],
                c["ddof"],
            )
        )
    )
for c in cases["dsm"]:
    out["dsm"].append(
        _num(
            difference_of_standardized_means(
                np.array(c["h"]),
                np.array(c["m"]),
                c.get("phm"),
                c.get("pmm"),
                c.get("phsd"),
                c.get("pmsd"),
                c["ddof"],
            )
        )
    )
for c in cases["pcor"]:
    out["pcor"].append(partial_correlations(pd.DataFrame(c)).to_numpy().tolist())
for c in cases["dis"]:
    d = Analyzer.compute_disattenuated_correlations(
        pd.Series(c["hm"], dtype=float), pd.Series(c["hh"], dtype=float)
    )
    out["dis"].append(d.to_json(orient="split", double_precision=15))
for c in cases["nh"]:
    out["nh"].append(get_n_human_scores(np.array(c, dtype=float)).tolist())
for c in cases["cat"]:
    s = convert_to_ordered_category(pd.Series(c["values"]), base_group=c.get("base"))
    out["cat"].append([str(v) for v in s.cat.categories])
json.dump(out, sys.stdout)
