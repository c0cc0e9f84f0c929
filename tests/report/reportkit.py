"""A store holding real runs of every kind, for the report and compare tests.

Every run is computed by assay's own evaluators on small generated data; the LLM kinds
(suites, judges, pairwise) call a scripted model on the real loopback chat server. A named
module (not conftest) so tests can import it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assay.results import MetricSet
from assay.store import ItemRecord, Store

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Screenshots per kind land here (gitignored), so a person can look at them.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "report"
SUITES = Path(__file__).resolve().parents[1] / "suites" / "data"
RUN = {"cache": False, "retries": 0, "quiet": True}


def _coin(text: str, p: float = 0.5) -> bool:
    """A deterministic pseudo-random choice per prompt."""
    h = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return h / 0xFFFFFFFF < p


def classification(seed: int, n: int = 400, skill: float = 1.5) -> MetricSet:
    from assay.classification import METRIC_TYPES, ClassificationEvaluator

    rng = np.random.default_rng(seed)
    labels = ["cat", "dog", "fox"]
    y = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), y] += skill
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    want = [t for t in METRIC_TYPES if t not in ("ConfusionMatrixWithExamples", "Examples")]
    ev = ClassificationEvaluator(score_thresholds=[0.0, 0.5], metrics=want)
    return ev.add_arrays(np.asarray(labels)[y], p, labels=labels).compute()


def fairness(seed: int) -> MetricSet:
    from assay.fairness import PrivilegedGroup, evaluate_fairness

    rng = np.random.default_rng(seed)
    n = 600
    sex = rng.choice(["f", "m"], n)
    age = rng.integers(18, 70, n)
    label = rng.integers(0, 2, n)
    bias = 0.15 * (sex == "m")
    pred = (rng.random(n) < 0.35 + 0.3 * label + bias).astype(int)
    df = pd.DataFrame({"label": label, "pred": pred, "sex": sex, "age": age})
    groups = [PrivilegedGroup("sex", values=["m"]), PrivilegedGroup("age", 40)]
    return evaluate_fairness(
        df, label="label", prediction="pred", groups=groups, group_columns=["sex"]
    )


def detection(seed: int) -> MetricSet:
    from assay.detection import DetectionEvaluator, coco_summary, load_coco
    from assay.detection.declared import DEFAULT_METRICS
    from assay.testing.detection import make_coco

    gt, dt = make_coco(n_images=40, n_categories=4, dets_per_image=12, seed=seed)
    ev = DetectionEvaluator().add(load_coco(gt, dt))
    extra = ["APAveragedOverIOUs", "mAPAveragedOverIOUs", "InterpolatedPrecisionRecallCurve"]
    return ev.compute([*DEFAULT_METRICS, *extra]) + coco_summary(ev.coco())


def segmentation(seed: int) -> MetricSet:
    from assay.segmentation import SegmentationEvaluator

    rng = np.random.default_rng(seed)
    seg = SegmentationEvaluator()
    for i in range(6):
        g = np.zeros((32, 32), np.int64)
        g[:16] = 1
        g[20:, 5:25] = 2
        p = g.copy()
        noise = rng.random(g.shape) < 0.15
        p[noise] = rng.integers(0, 3, noise.sum())
        seg.add_label_maps(f"img{i}", g, p, labels=["sky", "road"])
    return seg.compute()


def scoring_frame(seed: int) -> pd.DataFrame:
    """800 essays: human 1-6, a second human on 30%, a system score, an L1 column."""
    rng = np.random.default_rng(seed)
    n = 800
    l1 = rng.choice(["en", "es", "zh"], n, p=[0.5, 0.3, 0.2])
    ability = rng.normal(3.5, 1.0, n)
    h1 = np.clip(np.rint(ability + rng.normal(0, 0.55, n)), 1, 6)
    h2 = np.clip(np.rint(ability + rng.normal(0, 0.55, n)), 1, 6)
    h2[rng.random(n) >= 0.3] = np.nan
    system = ability + rng.normal(0, 0.5, n) + 0.3 * (l1 == "zh")
    return pd.DataFrame({"human": h1, "human2": h2, "system": system, "L1": l1})


def scoring(seed: int) -> MetricSet:
    from assay.scoring import scoring_tables

    df = scoring_frame(seed)
    res = scoring_tables(df, human="human", system="system", human2="human2", group_columns=["L1"])
    return res.metrics


def stats(seed: int) -> MetricSet:
    import assay.stats as st

    rng = np.random.default_rng(seed)
    scores = [
        st.SampleScore(
            st.Score("C" if rng.random() < 0.5 + 0.1 * (i % 3) else "I"),
            sample_id=f"s{i}",
            epoch=e,
            sample_metadata={"topic": ["math", "history", "art"][i % 3]},
        )
        for i in range(60)
        for e in (1, 2)
    ]
    metrics = [
        st.accuracy(),
        st.stderr(),
        st.grouped(st.accuracy(), "topic"),
        st.grouped(st.stderr(), "topic"),
    ]
    return st.evaluate_scores(scores, metrics, ["mean"])


def text_and_judge(srv_factory: Callable[..., Any], store: Store) -> int:
    """ROUGE/BLEU and a judge metric (coherence) with one item per judge call."""
    from assay.llm.judge import Datum, judge
    from assay.text import evaluate_text

    preds = ["the cat sat on the mat", "a dog ran fast", "rain fell today", "stocks rose"]
    refs = [["the cat sat on a mat"], ["a dog ran in the park"], ["it rained all day"], ["up"]]
    uids = ["cat", "dog", "rain", "stocks"]
    ms = evaluate_text(preds, refs, uids=uids)

    def respond(messages: list[dict[str, Any]]) -> str:
        text = str(messages[-1]["content"])
        if "stocks" in text:
            return "I cannot rate this."  # an invalid reply: kept as an item with its reason
        return json.dumps({"analysis": "reads well", "score": 2 + len(text) % 3})

    srv = srv_factory(responder=respond)
    data = [Datum(u, f"Summarise {u}.", p) for u, p in zip(uids, preds)]
    res = judge(data, ["coherence"], model=srv.spec(), judge_retries=0, cache=False)
    items = [
        ItemRecord.from_llm(
            c.item, c.record, c.parsed if c.invalid is None else {"invalid": c.invalid}
        )
        for c in res.calls
    ]
    return store.save(ms + res.metrics, kind="text", dataset="four-summaries", model="judge",
                      items=items)  # fmt: skip


def llm_demo(srv_factory: Callable[..., Any], store: Store) -> int:
    """What ``make demo``'s LLM section stores: call counts and the answers as items."""
    from assay.llm import Item, Runner, load_model, summarize
    from assay.results import Metric

    srv = srv_factory(responder=lambda messages: "Paris")
    questions = {"capital": "Capital of France?", "sum": "2 + 2?"}
    items = [Item.from_prompt(i, q, max_tokens=10) for i, q in questions.items()]
    records = Runner(load_model(srv.spec()), cache=False, quiet=True).run(items)
    stats = summarize(records)
    metrics = MetricSet([Metric("CallErrors", stats.errors), Metric("Items", stats.items)])
    rows = [ItemRecord.from_llm(it, r, parsed=r.text == "Paris") for it, r in zip(items, records)]
    return store.save(metrics, kind="llm_demo", dataset="two-questions", items=rows)


def _save_suite(store: Store, result: Any, model: str) -> int:
    # the facts a suite keeps per item, as `assay llm fairness --save` stores them
    keep = result.kind == "llm_fairness"
    items = [
        ItemRecord.from_llm(c.item, c.record, c.parsed, info=dict(c.info) if keep else None)
        for c in result.calls
    ]
    return store.save(
        result.metrics,
        kind=result.kind,
        dataset=result.dataset,
        model=model,
        parameters=result.parameters,
        items=items,
    )


def suites(srv_factory: Callable[..., Any], store: Store) -> list[int]:
    from assay.llm.suites import run_cat, run_fairness, run_language

    def cat(messages: list[dict[str, Any]]) -> str:
        text = str(messages[-1]["content"])
        return f"{1 + int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3}."

    def fair(messages: list[dict[str, Any]]) -> str:
        text = str(messages[-1]["content"])
        return "Y" if _coin(text, 0.5) else "N"

    def exam(messages: list[dict[str, Any]]) -> str:
        text = str(messages[-1]["content"])
        options = text.split("\n\n", 1)[1].splitlines()[1:]  # the lines after the question
        if _coin(text, 0.2):
            return "no idea"  # invalid: not JSON
        return json.dumps({"choice": options[0] if _coin(text + "pick") else options[1]})

    ids = []
    for run, data, responder in (
        (run_cat, SUITES / "cat_dev.json", cat),
        (run_fairness, SUITES / "toy.toml", fair),
        (run_language, SUITES / "exam.csv", exam),
    ):
        result = run(data, srv_factory(responder=responder).spec(), **RUN)
        ids.append(_save_suite(store, result, "m1"))
    return ids


def pairwise(srv_factory: Callable[..., Any], store_url: str, tmp: Path) -> None:
    from typer.testing import CliRunner

    from assay.cli.main import app
    from assay.testing.pairwise import make_table, scripted_judge

    rules = ["quality"] * 6 + ["first", "both", "garbage"]
    table = make_table(rules, {"ref": [3] * 9, "m1": [4, 2, 5, 3, 4, 1, 3, 3, 3],
                               "m2": [2, 2, 1, 3, 5, 2, 3, 3, 3]})  # fmt: skip
    data = tmp / "pairwise.csv"
    table.to_csv(data, index=False)
    srv = srv_factory(responder=scripted_judge())
    args = ["pairwise", "judge", "--data", str(data), "--models", "m1,m2",
            "--reference-model", "ref", "--judge", srv.spec(), "--out-dir", str(tmp / "pw"),
            "--cache", str(tmp / "pw-cache.sqlite"), "--quiet", "--num-bootstrap", "50",
            "--save", "--db", store_url]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output


#: COCO's 80 category names, so the 80-class report reads as a COCO one.
COCO_NAMES = (
    "person bicycle car motorcycle airplane bus train truck boat traffic_light fire_hydrant "
    "stop_sign parking_meter bench bird cat dog horse sheep cow elephant bear zebra giraffe "
    "backpack umbrella handbag tie suitcase frisbee skis snowboard sports_ball kite "
    "baseball_bat baseball_glove skateboard surfboard tennis_racket bottle wine_glass cup fork "
    "knife spoon bowl banana apple sandwich orange broccoli carrot hot_dog pizza donut cake "
    "chair couch potted_plant bed dining_table toilet tv laptop mouse remote keyboard "
    "cell_phone microwave oven toaster sink refrigerator book clock vase scissors teddy_bear "
    "hair_drier toothbrush"
).split(" ")


def coco80(seed: int, n_images: int = 400) -> MetricSet:
    """A COCO bbox run over 80 classes with COCO's names (generated boxes)."""
    from assay.detection import DetectionEvaluator, coco_summary, load_coco
    from assay.detection.declared import DEFAULT_METRICS
    from assay.testing.detection import make_coco

    gt, dt = make_coco(n_images=n_images, n_categories=80, gt_per_image=6.0,
                       dets_per_image=15, seed=seed)  # fmt: skip
    for c in gt["categories"]:
        if c["id"] <= len(COCO_NAMES):
            c["name"] = COCO_NAMES[c["id"] - 1].replace("_", " ")
    ev = DetectionEvaluator().add(load_coco(gt, dt))
    extra = ["APAveragedOverIOUs", "mAPAveragedOverIOUs", "InterpolatedPrecisionRecallCurve"]
    return ev.compute([*DEFAULT_METRICS, *extra]) + coco_summary(ev.coco())


def loglik_exam(srv_factory: Callable[..., Any], store: Store) -> int:
    """The language exam answered by per-option log-likelihoods (``/v1/completions`` with
    echo), saved under a local weights path as a user might type it."""
    from assay.llm.suites import run_language

    srv = srv_factory(responder=lambda messages: "unused")
    result = run_language(SUITES / "exam.csv", srv.spec(), answer_mode="loglik",
                          loglik="completions", **RUN)  # fmt: skip
    return _save_suite(store, result, "embedded:/opt/build/models/SmolLM2-135M-Instruct.Q4_1.gguf")


def fill(store_url: str, srv_factory: Callable[..., Any], tmp: Path) -> dict[str, list[int]]:
    """A store with runs of every kind (two of classification, to overlay); ids by kind."""
    out: dict[str, list[int]] = {}
    with Store(store_url) as st:
        for kind, make, seeds in (
            ("classification", classification, (0, 1)),
            ("fairness", fairness, (0,)),
            ("detection", detection, (3,)),
            ("segmentation", segmentation, (0,)),
            ("scoring", scoring, (0,)),
            ("stats", stats, (0,)),
        ):
            for s in seeds:
                out.setdefault(kind, []).append(
                    st.save(make(s), kind=kind, dataset=f"{kind}-demo", model=f"model-{s}")
                )
        out["text"] = [text_and_judge(srv_factory, st)]
        out["llm_demo"] = [llm_demo(srv_factory, st)]
        for eid in suites(srv_factory, st):
            out.setdefault(st.get(eid).kind, []).append(eid)
    pairwise(srv_factory, store_url, tmp)
    with Store(store_url) as st:
        out["pairwise"] = [e.id for e in st.list(kind="pairwise")]
    return out
