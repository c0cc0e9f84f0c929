"""Run by an interpreter that has rsmtool installed (see test_scoring_fairness_degenerate.py).

Reads a JSON list of cases ({"sc1": [...], "raw": [...], "group": [...]}) from argv[1] and
writes, per case, rsmtool's fairness_metrics_by_group table as JSON (or the error it raised).
"""

import json
import sys
import warnings

import pandas as pd

warnings.simplefilter("ignore")

from rsmtool.fairness_utils import get_fairness_analyses  # noqa: E402

out = []
for case in json.loads(open(sys.argv[1]).read()):
    df = pd.DataFrame(case)
    try:
        _, fair = get_fairness_analyses(df, "group", "raw", "sc1")
        table = fair["fairness_metrics_by_group"]
        metrics = [c for c in table.columns if c != "base_category"]
        table[metrics] = table[metrics].astype(float)  # object NaNs do not serialise
        out.append(table.to_json(orient="split", double_precision=15))
    except Exception as e:  # reported to the test, which fails on it
        out.append({"error": f"{type(e).__name__}: {e}"})
json.dump(out, sys.stdout)
