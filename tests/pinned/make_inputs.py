"""Write the pinned-records inputs under ``tests/pinned/inputs/`` (run once; committed).

The inputs are small and drawn from fixed seeds, but they are committed rather than drawn at
test time: the pins must not move when numpy's or pandas' generators or writers change, or
when a shared test helper is edited. Re-running this script rewrites them; never do that
without regenerating the pins on a commit known to be correct (see tests/test_pinned_records.py).

    .venv/bin/python tests/pinned/make_inputs.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
TESTS = HERE.parent


def _csv(df: pd.DataFrame, name: str) -> None:
    df.to_csv(INPUTS / name, index=False, float_format="%.6g")


def _jsonl(rows: list[dict], name: str) -> None:
    (INPUTS / name).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def binary() -> None:
    """60 scored rows: label pos/neg, proba with ties, site, patient (cluster), weight."""
    rng = np.random.default_rng(101)
    n = 60
    y = rng.integers(0, 2, n)
    proba = np.round(np.clip(rng.normal(0.35 + 0.3 * y, 0.22), 0, 1), 2)
    _csv(
        pd.DataFrame(
            {
                "uid": [f"u{i:02d}" for i in range(n)],
                "label": np.where(y == 1, "pos", "neg"),
                "proba": proba,
                "site": rng.choice(["north", "south", "east"], n),
                "patient": [f"p{i // 3}" for i in range(n)],
            }
        ),
        "binary.csv",
    )


def multiclass() -> None:
    """48 rows over cat/dog/fox with score columns summing to 1, site and patient."""
    rng = np.random.default_rng(102)
    n = 48
    labels = np.array(["cat", "dog", "fox"])
    y = rng.integers(0, 3, n)
    logits = rng.normal(0, 1, (n, 3))
    logits[np.arange(n), y] += 1.2
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    p = np.round(p, 3)
    p[:, 2] = np.round(1 - p[:, 0] - p[:, 1], 3)
    p = np.clip(p, 0, 1)
    _csv(
        pd.DataFrame(
            {
                "uid": [f"m{i:02d}" for i in range(n)],
                "label": labels[y],
                "cat": p[:, 0],
                "dog": p[:, 1],
                "fox": p[:, 2],
                "site": rng.choice(["a", "b"], n),
                "patient": [f"q{i // 4}" for i in range(n)],
            }
        ),
        "multiclass.csv",
    )


def long_form() -> None:
    """Long-form ground truths and predictions over two label keys, with datum metadata."""
    rng = np.random.default_rng(103)
    keys = {"animal": ["cat", "dog", "bird"], "color": ["red", "blue"]}
    gts, pds = [], []
    for i in range(30):
        uid = f"d{i:02d}"
        meta = {"site": str(rng.choice(["x", "y"])), "batch": int(i % 3)}
        for key, values in keys.items():
            gts.append({"uid": uid, "key": key, "value": str(rng.choice(values)), "metadata": meta})
            for v in values[: int(rng.integers(1, len(values) + 1))]:
                pds.append(
                    {"uid": uid, "key": key, "value": v, "score": round(float(rng.random()), 2)}
                )
    _jsonl(gts, "long_groundtruths.jsonl")
    _jsonl(pds, "long_predictions.jsonl")


def fairness() -> None:
    """120 people: y, yhat, sex, age, race, site (cluster), weight."""
    rng = np.random.default_rng(104)
    n = 120
    sex = rng.choice(["f", "m"], n)
    race = rng.choice(["a", "b", "c"], n)
    age = rng.integers(18, 80, n)
    y = (rng.random(n) < 0.45 + 0.1 * (sex == "m")).astype(int)
    yhat = np.where(rng.random(n) < 0.75, y, 1 - y)
    _csv(
        pd.DataFrame(
            {
                "y": y,
                "yhat": yhat,
                "sex": sex,
                "age": age,
                "race": race,
                "site": [f"s{i // 6}" for i in range(n)],
                "region": rng.choice(["r1", "r2"], n),
                "weight": np.round(rng.uniform(0.5, 2.0, n), 2),
            }
        ),
        "fairness.csv",
    )


def coco() -> None:
    """A tiny COCO set (bbox + segm polygons) with an image metadata field."""
    from assay.testing.detection import make_coco

    gt, dt = make_coco(n_images=8, n_categories=3, dets_per_image=8, segm=True, seed=7)
    (INPUTS / "coco_gt.json").write_text(json.dumps(gt))
    (INPUTS / "coco_dt.json").write_text(json.dumps(dt))


def detection_jsonl() -> None:
    """assay detection JSONL: box datums with site metadata, distinct scores."""
    rng = np.random.default_rng(105)
    scores = iter(rng.permutation(10_000) / 10_000 + 1e-6)
    gts, prs = [], []
    for d in range(12):
        uid = f"img{d:02d}"
        g_anns, p_anns = [], []
        for _ in range(int(rng.integers(0, 4))):
            x, y = (round(float(v), 2) for v in rng.uniform(0, 80, 2))
            w, h = (round(float(v), 2) for v in rng.uniform(5, 30, 2))
            lab = ["cat", "dog", "cow"][int(rng.integers(0, 3))]
            g_anns.append({"label": lab, "box": [x, y, x + w, y + h]})
            jx, jy = (round(float(v), 2) for v in rng.normal(0, 2, 2))
            p_anns.append(
                {"label": lab, "score": float(next(scores)), "box": [x + jx, y + jy, x + w, y + h]}
            )
        for _ in range(int(rng.integers(0, 3))):
            x, y = (round(float(v), 2) for v in rng.uniform(0, 80, 2))
            p_anns.append(
                {"label": "dog", "score": float(next(scores)), "box": [x, y, x + 10, y + 10]}
            )
        meta = {"site": "xy"[d % 2], "group": f"g{d // 4}"}
        gts.append(
            {"uid": uid, "height": 100, "width": 100, "annotations": g_anns, "metadata": meta}
        )
        prs.append({"uid": uid, "annotations": p_anns})
    _jsonl(gts, "det_groundtruths.jsonl")
    _jsonl(prs, "det_predictions.jsonl")


def segmentation() -> None:
    """Label maps as horizontal bands (boxes), shifted by a row or two in the predictions."""
    rng = np.random.default_rng(106)
    gts, prs = [], []
    for d in range(8):
        labels = ["road", "sky", "car"][: 1 + d % 3]
        shift = int(rng.integers(0, 3))
        g = [{"label": lab, "box": [0, 4 * i, 8, 4 * i + 3]} for i, lab in enumerate(labels)]
        p = [
            {"label": lab, "box": [0, 4 * i + shift, 8, 4 * i + shift + 3]}
            for i, lab in enumerate(labels)
        ]
        meta = {"site": "xy"[d % 2], "city": f"c{d // 3}"}
        gts.append({"uid": f"s{d}", "height": 16, "width": 8, "annotations": g, "metadata": meta})
        prs.append({"uid": f"s{d}", "annotations": p})
    _jsonl(gts, "seg_groundtruths.jsonl")
    _jsonl(prs, "seg_predictions.jsonl")


def scoring() -> None:
    """200 responses: human h (1-6), second human h2 (30%), system m, L1, g (cluster), site."""
    rng = np.random.default_rng(107)
    n = 200
    t = rng.normal(3, 1, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2[rng.random(n) > 0.3] = np.nan
    _csv(
        pd.DataFrame(
            {
                "id": [f"r{i:03d}" for i in range(n)],
                "h": h,
                "h2": h2,
                "m": np.round(t + rng.normal(0, 0.5, n), 4),
                "L1": rng.choice(["en", "es", "zh"], n),
                "g": [f"g{i // 8}" for i in range(n)],
                "site": rng.choice(["x", "y"], n),
            }
        ),
        "scoring.csv",
    )
    cfg = {
        "experiment_id": "pin",
        "predictions_file": "scoring.csv",
        "system_score_column": "m",
        "human_score_column": "h",
        "second_human_score_column": "h2",
        "id_column": "id",
        "subgroups": ["L1"],
        "trim_min": 1,
        "trim_max": 6,
    }
    (INPUTS / "rsmeval.json").write_text(json.dumps(cfg, indent=1) + "\n")


def stats() -> None:
    """Inspect-style sample scores: 30 samples x 3 epochs, letters/numbers/failed, metadata."""
    rng = np.random.default_rng(108)
    values = ["C", "I", "P", "C", 0.25, 1, None]
    rows = []
    for epoch in (1, 2, 3):
        for sid in range(30):
            v = values[int(rng.integers(0, len(values)))]
            rows.append(
                {
                    "value": v,
                    "sample_id": f"s{sid:02d}",
                    "epoch": epoch,
                    "sample_metadata": {"topic": f"t{sid % 3}", "doc": sid // 5},
                }
            )
    _jsonl(rows, "scores.jsonl")
    rows = []
    for sid in range(40):
        v = round(float(rng.random()), 3) if sid % 9 else None
        rows.append(
            {
                "value": v,
                "sample_id": sid,
                "epoch": 1,
                "sample_metadata": {"topic": "ab"[sid % 2], "doc": sid // 4},
            }
        )
    _jsonl(rows, "scores_numeric.jsonl")


def text() -> None:
    """Question answering rows for ROUGE/BLEU and the judged metrics, with topic and doc."""
    rng = np.random.default_rng(109)
    words = "the a tower paris france tall old iron built river city bridge museum art".split()
    rows = []
    for i in range(24):
        ref = " ".join(rng.choice(words, int(rng.integers(5, 10))))
        pred = " ".join(w if rng.random() < 0.7 else str(rng.choice(words)) for w in ref.split())
        rows.append(
            {
                "uid": f"q{i:02d}",
                "query": f"Tell me about item {i}.",
                "prediction": pred.capitalize() + ". It is " + str(rng.choice(words)) + ".",
                "groundtruth": ref.capitalize() + ".",
                "context": [
                    ref.capitalize() + ".",
                    "Item " + str(i) + " is " + str(rng.choice(words)) + ".",
                ],
                "topic": ["art", "city", "river"][i % 3],
                "doc": f"doc{i // 4}",
            }
        )
    _jsonl(rows, "text.jsonl")


def suites() -> None:
    """Copies of the suites' small test datasets (StereoSet-format, exam, toy fairness)."""
    src = TESTS / "suites" / "data"
    dst = INPUTS / "suites"
    dst.mkdir(exist_ok=True)
    for name in (
        "cat_dev.json",
        "exam.csv",
        "toy.toml",
        "toy.txt",
        "toy_train.csv",
        "toy_test.csv",
    ):
        shutil.copyfile(src / name, dst / name)


def pairwise_table() -> None:
    """12 questions over two tasks and topics; models m1, m2 and the reference answer
    ``quality=N`` (the scripted judge of tests/pinned/cases.py prefers the higher; some
    questions ask it for a tie, garbage or a fixed letter); m2 skips one question."""
    rng = np.random.default_rng(110)
    rules = ["quality", "quality", "first", "second", "both", "garbage", "quality", "neither",
             "quality", "letter:Z", "quality", "quality"]  # fmt: skip
    n = len(rules)
    df = pd.DataFrame(
        {
            "question": [f"Question {i} [judge:{r}]" for i, r in enumerate(rules)],
            "index": [
                f"proj{i}_{'uml_class' if i % 2 else 'architecture'}-general" for i in range(n)
            ],
            "evaluating_guidance": ["Prefer the better design."] * n,
            "task": [
                "uml_class-general" if i % 2 else "architecture_design-general" for i in range(n)
            ],
            "reference_answer": [""] * n,
            "topic": [["web", "games", "data"][i % 3] for i in range(n)],
            "project": [f"proj{i // 3}" for i in range(n)],
        }
    )
    for model in ("m1", "m2", "ref"):
        q = rng.integers(1, 6, n)
        df[f"answer-{model}"] = [
            f"Answer by {model} to question {i}: quality={q[i]}" for i in range(n)
        ]
    df.loc[4, "answer-m2"] = None
    df.to_csv(INPUTS / "pairwise_table.csv", index=False)


def main() -> None:
    INPUTS.mkdir(exist_ok=True)
    for make in (
        binary,
        multiclass,
        long_form,
        fairness,
        coco,
        detection_jsonl,
        segmentation,
        scoring,
        stats,
        text,
        suites,
        pairwise_table,
    ):
        make()


if __name__ == "__main__":
    main()
