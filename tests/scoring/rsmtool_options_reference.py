"""Run by an interpreter that has rsmtool installed (see test_scoring_options_vs_rsmtool.py).

Reads a CSV (columns sc1, sc2, raw_trim, raw_trim_round) and a JSON list of option cases
(``smd_method``, ``use_diff_std_means``, ``sd``, ``mn`` keyed by column), runs rsmtool's own
``Analyzer.compute_metrics`` with each, and writes the tables as JSON to stdout.
"""

import json
import sys
import warnings

import pandas as pd

warnings.simplefilter("ignore")

from rsmtool.analyzer import Analyzer  # noqa: E402

df = pd.read_csv(sys.argv[1])
cases = json.loads(open(sys.argv[2]).read())
an = Analyzer()
cols = ["sc1", "raw_trim", "raw_trim_round", "sc2"]


def _split(frame):
    return frame.to_json(orient="split", double_precision=15)


out = []
for case in cases:
    second = case.get("second", True)
    scores = df[cols if second else cols[:3]].copy()
    sd = {c: case.get("sd", {}).get(c) for c in scores.columns}
    mn = {c: case.get("mn", {}).get(c) for c in scores.columns}
    hs, short, hh = an.compute_metrics(
        scores,
        compute_shortened=True,
        include_second_score=second,
        population_sd_dict=sd,
        population_mn_dict=mn,
        smd_method=case["smd_method"],
        use_diff_std_means=case["use_diff_std_means"],
    )
    tables = {"eval": _split(hs), "eval_short": _split(short)}
    if second:
        tables["consistency"] = _split(hh)
        deg, _ = an.compute_degradation_and_disattenuated_correlations(scores.copy())
        tables["degradation"] = _split(deg)
    out.append(tables)
json.dump(out, sys.stdout)
