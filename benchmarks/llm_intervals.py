"""Text, judge and pairwise intervals: CPU seconds of the records with ``ci=0.95`` (1000
resamples), with ``by`` a four-valued column and with ``cluster`` (best of ``--repeat``).

* judge: 5,000 datums of one metric (five levels, every eleventh undefined);
* text: ROUGE-1 and ROUGE-L of 5,000 generated pairs;
* pairwise: 9 models x 300 questions x 2 orders (``analyze``; the ratings' and length fits'
  resamples always, ``ci`` adds the rates').

    python benchmarks/llm_intervals.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
import pandas as pd

from assay.llm.judge.evaluator import JudgeEvaluator
from assay.llm.pairwise import analyze
from assay.stats.means import datum_record
from assay.text.evaluator import TextEvaluator


def best(fn, repeat):
    out = []
    for _ in range(repeat):
        c = time.process_time()
        fn()
        out.append(time.process_time() - c)
    return min(out)


def judge_case(n, **kw):
    rng = np.random.default_rng(0)
    recs, cols = [], {"site": [], "topic": []}
    for i in range(n):
        v = None if i % 11 == 0 else float(rng.integers(0, 5)) / 4
        recs.append(datum_record("Bias", f"d{i}", v, reason="x", prompt_version="v1"))
        cols["site"].append(f"s{i % 97}")
        cols["topic"].append("abcd"[i % 4])
    return lambda: JudgeEvaluator(metrics=["bias"], **kw).add(recs, cols).compute()


def text_case(n, **kw):
    rng = np.random.default_rng(1)
    words = "the a cat dog sat ran on off mat hat big small".split()
    preds = [" ".join(rng.choice(words, 8)) for _ in range(n)]
    refs = [" ".join(rng.choice(words, 8)) for _ in range(n)]
    cols = {"site": [f"s{i % 97}" for i in range(n)], "topic": ["abcd"[i % 4] for i in range(n)]}
    ev = TextEvaluator(metrics=["rouge"], rouge_types=["rouge1", "rougeL"], **kw).add(
        preds, refs, uids=[f"u{i}" for i in range(n)], columns=cols
    )
    return lambda: ev.compute()


def pairwise_df(nq):
    rng = np.random.default_rng(1)
    models = [f"m{k}" for k in range(9)]
    rows = []
    for q in range(nq):
        task = ["uml_class-general", "uml_class-faithfulness", "architecture_design-general"][q % 3]
        for m in models:
            for a, b in (("ref", m), (m, "ref")):
                rows.append(
                    (
                        f"p{q}_{task}",
                        a,
                        b,
                        task,
                        "ok",
                        str(rng.choice(list("ABCD"))),
                        float(rng.integers(100, 3000)),
                        float(rng.integers(100, 3000)),
                        1.0,
                        1.0,
                        f"t{q % 4}",
                        f"c{q % 37}",
                    )
                )
    cols = [
        "index",
        "model_a",
        "model_b",
        "task",
        "status",
        "choice",
        "length_a",
        "length_b",
        "words_a",
        "words_b",
        "topic",
        "site",
    ]
    return pd.DataFrame(rows, columns=cols)


ap = argparse.ArgumentParser()
ap.add_argument("--repeat", type=int, default=3)
a = ap.parse_args()
for name, fn in [
    ("judge 5,000 default", judge_case(5000)),
    ("judge ci", judge_case(5000, ci=0.95)),
    ("judge ci + by (4)", judge_case(5000, ci=0.95, by=["topic"])),
    ("judge ci + cluster (97)", judge_case(5000, ci=0.95, cluster="site")),
    ("text 5,000 ci", text_case(5000, ci=0.95)),
    ("text ci + by (4)", text_case(5000, ci=0.95, by=["topic"])),
    ("text ci + cluster (97)", text_case(5000, ci=0.95, cluster="site")),
]:
    print(f"{name:28s} CPU {best(fn, a.repeat):.3f} s", flush=True)
df = pairwise_df(300)
for name, kw in [
    ("pairwise 300 q, no ci", {}),
    ("pairwise ci", {"ci": 0.95}),
    ("pairwise ci + by (4)", {"ci": 0.95, "by": ["topic"]}),
    ("pairwise ci + cluster (37)", {"ci": 0.95, "cluster": "site"}),
]:
    print(
        f"{name:28s} CPU {best(partial(analyze, df, reference_model='ref', **kw), a.repeat):.3f} s",
        flush=True,
    )
