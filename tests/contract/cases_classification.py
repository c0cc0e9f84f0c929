"""Contract cases for the classification and fairness evaluators.

Datum uids must be unique across everything added, and the contract re-adds a batch after a
state round trip; so the long-form case gives each added copy of a batch fresh uids, and the
cases keep no example uids (``pr_curve_max_examples=0``): the examples' independence of the
batch split and merge order is tested in ``tests/classification``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from assay.classification import ClassificationEvaluator
from assay.fairness import FairnessEvaluator
from contract import ContractCase

_copy = itertools.count()


def _binary_batches() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    out = []
    for n in (40, 7, 25):
        y = rng.integers(0, 2, n)
        s = np.round(np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1), 2)  # ties
        out.append((np.where(y == 1, "pos", "neg"), s))
    return out


def _add_binary(ev, batch):
    return ev.add_arrays(batch[0], batch[1], labels=["neg", "pos"])


def _concat_binary(batches):
    return tuple(np.concatenate(parts) for parts in zip(*batches))


def _long_form_batches() -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    rng = np.random.default_rng(1)
    keys = {"animal": ["cat", "dog", "bird"], "color": ["red", "blue"]}
    out, uid = [], 0
    for n in (12, 5, 9):
        gts, pds = [], []
        for _ in range(n):
            uid += 1
            for key, values in keys.items():
                gts.append({"uid": f"d{uid}", "key": key, "value": str(rng.choice(values))})
                for v in values[: rng.integers(1, len(values) + 1)]:  # some labels unscored
                    pds.append(
                        {"uid": f"d{uid}", "key": key, "value": v, "score": round(rng.random(), 1)}
                    )
        out.append((pd.DataFrame(gts), pd.DataFrame(pds)))
    return out


def _add_long_form(ev, batch):
    gts, pds = batch
    suffix = f"#{next(_copy)}"  # every added copy is a new set of datums
    return ev.add(gts.assign(uid=gts.uid + suffix), pds.assign(uid=pds.uid + suffix))


def _concat_long_form(batches):
    return (
        pd.concat([b[0] for b in batches], ignore_index=True),
        pd.concat([b[1] for b in batches], ignore_index=True),
    )


def _metadata_batches() -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """The long-form batches with datum metadata; one batch lacks a field, one has a null."""
    rng = np.random.default_rng(4)
    out = []
    for i, (gts, pds) in enumerate(_long_form_batches()):
        sites = rng.choice(["x", "y"], len(gts))
        meta = [
            {"site": str(s), **({"w": int(rng.integers(0, 3))} if i != 1 else {})} for s in sites
        ]
        meta[0] = {**meta[0], "w": None}
        out.append((gts.assign(metadata=meta), pds))
    return out


class SiteFiltered(ClassificationEvaluator):
    """Computes on the datums of site "x" with w != 1: metadata must survive state and merge."""

    def _compute(self):
        view = self.filter(datums='site == "x" and w != 1', predictions="score > 0.1")
        return ClassificationEvaluator._compute(view)  # the view is a SiteFiltered too


def _fairness_batches() -> list[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
    rng = np.random.default_rng(2)
    out = []
    for n in (30, 3, 50):
        s = rng.integers(-2, 3, n)
        y = (rng.random(n) < 0.5).astype(int)
        yhat = np.where(rng.random(n) < 0.7, y, 1 - y)
        out.append((y, yhat, {"s": s, "age": rng.integers(18, 80, n)}))
    return out


def _concat_fairness(batches):
    y = np.concatenate([b[0] for b in batches])
    yhat = np.concatenate([b[1] for b in batches])
    cols = {c: np.concatenate([b[2][c] for b in batches]) for c in batches[0][2]}
    return y, yhat, cols


def _categorical_batches() -> list[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
    """Text and numeric group columns; a group ("zh", grade 9) seen in one batch only."""
    rng = np.random.default_rng(3)
    out = []
    for n, langs in ((30, ["en", "fr", "es"]), (4, ["fr", "en"]), (25, ["en", "fr", "es", "zh"])):
        lang = np.array(langs + list(rng.choice(langs, n - len(langs))))
        grade = rng.integers(1, 4, n) if n != 4 else np.array([9, 1, 2, 3])
        y = (rng.random(n) < 0.5).astype(int)
        yhat = np.where(rng.random(n) < 0.7, y, 1 - y)
        out.append((y, yhat, {"L1": lang, "grade": grade}))
    return out


CASES = [
    ContractCase(
        name="classification-binary-arrays",
        make=lambda: ClassificationEvaluator(score_thresholds=[0.0, 0.5], pr_curve_max_examples=0),
        make_other=lambda: ClassificationEvaluator(
            score_thresholds=[0.0, 0.6], pr_curve_max_examples=0
        ),
        batches=_binary_batches(),
        concat=_concat_binary,
        add=_add_binary,
    ),
    ContractCase(
        name="classification-binary-ci",
        make=lambda: ClassificationEvaluator(
            score_thresholds=[0.0, 0.5], pr_curve_max_examples=0, ci=0.9, num_bootstrap=50
        ),
        make_other=lambda: ClassificationEvaluator(
            score_thresholds=[0.0, 0.5], pr_curve_max_examples=0, ci=0.9, num_bootstrap=51
        ),
        batches=_binary_batches(),
        concat=_concat_binary,
        add=_add_binary,
    ),
    ContractCase(
        name="classification-soft-ci-wilson",
        make=lambda: ClassificationEvaluator(
            pr_curve_max_examples=0, hardmax=False, ci=0.8, ci_method="wilson", seed=2
        ),
        make_other=lambda: ClassificationEvaluator(
            pr_curve_max_examples=0, hardmax=False, ci=0.8, ci_method="delong", seed=2
        ),
        batches=_long_form_batches(),
        concat=_concat_long_form,
        add=_add_long_form,
    ),
    ContractCase(
        name="classification-two-label-keys",
        make=lambda: ClassificationEvaluator(pr_curve_max_examples=0, zero_division=0.0),
        make_other=lambda: ClassificationEvaluator(pr_curve_max_examples=0),
        batches=_long_form_batches(),
        concat=_concat_long_form,
        add=_add_long_form,
    ),
    ContractCase(
        name="classification-soft-confusion",
        make=lambda: ClassificationEvaluator(
            score_thresholds=[0.0, 0.5, 1.0],
            pr_curve_max_examples=0,
            hardmax=False,
            metrics=["Counts", "F1", "Accuracy", "ConfusionMatrix"],
        ),
        make_other=lambda: ClassificationEvaluator(pr_curve_max_examples=0, hardmax=True),
        batches=_long_form_batches(),
        concat=_concat_long_form,
        add=_add_long_form,
    ),
    ContractCase(
        name="classification-metadata-filter",
        make=lambda: SiteFiltered(pr_curve_max_examples=0, examples_limit=3, examples_offset=1),
        make_other=lambda: SiteFiltered(pr_curve_max_examples=0, examples_limit=4),
        batches=_metadata_batches(),
        concat=_concat_long_form,
        add=_add_long_form,
    ),
    ContractCase(
        name="classification-by-site-and-w-with-ci",
        make=lambda: ClassificationEvaluator(
            pr_curve_max_examples=0, by=["site", "w"], ci=0.9, num_bootstrap=30
        ),
        make_other=lambda: ClassificationEvaluator(pr_curve_max_examples=0, by=["site"], ci=0.9),
        batches=_metadata_batches(),
        concat=_concat_long_form,
        add=_add_long_form,
    ),
    ContractCase(
        name="classification-cluster-site-with-ci",
        make=lambda: ClassificationEvaluator(
            pr_curve_max_examples=0, by=["w"], ci=0.9, num_bootstrap=30, cluster="site"
        ),
        make_other=lambda: ClassificationEvaluator(pr_curve_max_examples=0, ci=0.9, cluster="w"),
        batches=_metadata_batches(),
        concat=_concat_long_form,
        add=_add_long_form,
    ),
    ContractCase(
        name="fairness-two-definitions",
        make=lambda: FairnessEvaluator(["s", "age:40:invert"]),
        make_other=lambda: FairnessEvaluator(["s", "age:50:invert"]),
        batches=_fairness_batches(),
        concat=_concat_fairness,
        add=lambda ev, b: ev.add_arrays(*b),
    ),
]

CASES.append(
    ContractCase(
        name="fairness-categorical-and-per-group",
        make=lambda: FairnessEvaluator(
            ["L1=en,fr", "grade:1"], group_columns=["L1", "grade"], zero_division=None
        ),
        make_other=lambda: FairnessEvaluator(
            ["L1=en,fr", "grade:1"], group_columns=["L1", "grade"], method="to_overall"
        ),
        batches=_categorical_batches(),
        concat=_concat_fairness,
        add=lambda ev, b: ev.add_arrays(*b),
    )
)

CASES.append(
    ContractCase(
        name="classification-compact",
        make=lambda: ClassificationEvaluator(
            score_thresholds=[0.0, 0.5], pr_curve_max_examples=0, compact=True
        ),
        make_other=lambda: ClassificationEvaluator(
            score_thresholds=[0.0, 0.5], pr_curve_max_examples=0
        ),
        batches=_binary_batches(),
        concat=_concat_binary,
        add=_add_binary,
    )
)
