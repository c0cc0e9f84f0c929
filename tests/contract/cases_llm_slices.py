"""Contract cases of the LLM evaluators with slices (``by``) and intervals (``ci``): the
suites through :class:`~assay.llm.slicing.SlicedEvaluator`, the judge's aggregates through
:class:`~assay.llm.judge.evaluator.JudgeEvaluator`. Batches, merges in any order and state
round trips must give the same slice records, gaps and gap intervals as one batch."""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.llm.judge.evaluator import JudgeEvaluator
from assay.llm.pairwise import PairwiseEvaluator
from assay.llm.slicing import SlicedEvaluator
from assay.llm.suites import CATEvaluator, LanguageEvaluator, LLMFairnessEvaluator
from assay.stats.means import datum_record
from assay.text.evaluator import TextEvaluator
from contract import ContractCase

_rng = np.random.default_rng(22)
_OUTCOMES = ["stereotype", "anti-stereotype", "unrelated", "other", "error"]


def _cat_batches() -> list[dict[str, Any]]:
    out = []
    for n in (30, 21, 9):
        bias = [["gender", "race", "religion"][i] for i in _rng.integers(0, 3, n)]
        split = [["a", "b"][i] for i in _rng.integers(0, 2, n)]
        tests = [("intrasentence", "intersentence")[i] for i in _rng.integers(0, 2, n)]
        out.append(
            {
                "columns": {"bias_type": bias, "split": split},
                "outcomes": [_OUTCOMES[i] for i in _rng.integers(0, 5, n)],
                "test_types": tests,
                "bias_types": bias,
            }
        )
    return out


def _lang_batches() -> list[dict[str, Any]]:
    outs = ["correct", "incorrect", "invalid", "error"]
    out = []
    for n in (25, 14, 6):
        out.append(
            {
                "columns": {"subject": [["math", "art", ""][i] for i in _rng.integers(0, 3, n)]},
                "languages": [["en", "fr"][i] for i in _rng.integers(0, 2, n)],
                "outcomes": [outs[i] for i in _rng.integers(0, 4, n)],
            }
        )
    return out


def _fair_batches() -> list[dict[str, Any]]:
    out = []
    for n in (40, 22, 11):
        out.append(
            {
                "columns": {"region": [["n", "s"][i] for i in _rng.integers(0, 2, n)]},
                "target": _rng.integers(0, 2, n).tolist(),
                "predicted": _rng.integers(-2, 2, n).tolist(),
                "privileged": _rng.integers(0, 2, n).tolist(),
                "counterfactual": _rng.integers(-3, 2, n).tolist(),
            }
        )
    return out


def _join(batches: list[dict[str, Any]]) -> dict[str, Any]:
    first = batches[0]
    out: dict[str, Any] = {
        k: sum((list(b[k]) for b in batches), []) for k in first if k != "columns"
    }
    out["columns"] = {
        c: sum((list(b["columns"][c]) for b in batches), []) for c in first["columns"]
    }
    return out


def _add(ev: Any, batch: dict[str, Any]) -> Any:
    return ev.add(batch["columns"], **{k: v for k, v in batch.items() if k != "columns"})


def _judge_batches() -> list[tuple[list[Any], dict[str, list[str]]]]:
    out = []
    k = 0
    for n in (12, 7, 5):
        records, topics = [], []
        for _ in range(n):
            k += 1
            topic = ["cars", "food", "sport"][int(_rng.integers(0, 3))]
            for t in ("Faithfulness", "Bias"):
                r = _rng.random()
                value = None if r < 0.15 else round(float(_rng.random()), 3)
                records.append(datum_record(t, f"d{k:03d}", value, reason="no claims"))
                topics.append(topic)
        out.append((records, {"topic": topics}))
    return out


def _judge_join(batches: list[Any]) -> Any:
    return (
        [r for b in batches for r in b[0]],
        {"topic": [t for b in batches for t in b[1]["topic"]]},
    )


def _sliced(cls: Any, by: list[str], **kw: Any) -> Any:
    return lambda: SlicedEvaluator(evaluator=cls, by=by, ci=0.9, num_bootstrap=25, **kw)


def _text_batches() -> list[dict[str, Any]]:
    words = ["a", "b", "c", "d", "e"]
    out = []
    for n in (9, 6, 4):
        pick = _rng.integers(0, 5, (n, 2, 4))
        out.append(
            {
                "predictions": [" ".join(words[i] for i in p[0]) for p in pick],
                "references": [" ".join(words[i] for i in p[1]) for p in pick],
                "uids": [f"t{int(x)}" for x in _rng.integers(0, 10**6, n)],
                "columns": {"topic": [["x", "y", None][i] for i in _rng.integers(0, 3, n)]},
            }
        )
    return out


def _text_join(batches: list[dict[str, Any]]) -> dict[str, Any]:
    out = {k: sum((b[k] for b in batches), []) for k in ("predictions", "references", "uids")}
    return out | {"columns": {"topic": sum((b["columns"]["topic"] for b in batches), [])}}


def _text_add(ev: Any, b: dict[str, Any]) -> Any:
    return ev.add(b["predictions"], b["references"], uids=b["uids"], columns=b["columns"])


CASES = [
    ContractCase(
        name="llm-slices.cat-by-ci",
        make=_sliced(CATEvaluator, ["bias_type", "split"]),
        make_other=_sliced(CATEvaluator, ["split"]),
        batches=_cat_batches(),
        concat=_join,
        add=_add,
    ),
    ContractCase(
        name="llm-slices.language-by-ci-wilson",
        make=_sliced(LanguageEvaluator, ["subject"], ci_method="wilson"),
        make_other=_sliced(LanguageEvaluator, ["subject"]),
        batches=_lang_batches(),
        concat=_join,
        add=_add,
    ),
    ContractCase(
        name="llm-slices.fairness-by-ci",
        make=_sliced(
            LLMFairnessEvaluator, ["region"], config={"group_column": "sex", "groups": ["f", "m"]}
        ),
        make_other=_sliced(LLMFairnessEvaluator, ["region"]),
        batches=_fair_batches(),
        concat=_join,
        add=_add,
    ),
    ContractCase(
        name="llm-slices.judge-by-ci",
        make=lambda: JudgeEvaluator(
            metrics=["faithfulness", "bias"], num_bootstrap=40, ci=0.9, by=["topic"]
        ),
        make_other=lambda: JudgeEvaluator(metrics=["faithfulness", "bias"], num_bootstrap=40),
        batches=_judge_batches(),
        concat=_judge_join,
        add=lambda ev, b: ev.add(*b),
    ),
    ContractCase(
        name="llm-slices.text-by-ci",
        make=lambda: TextEvaluator(
            metrics=["rouge", "bleu"],
            rouge_types=["rouge1"],
            ci=0.9,
            num_bootstrap=30,
            by=["topic"],
        ),  # fmt: skip
        make_other=lambda: TextEvaluator(metrics=["rouge", "bleu"], rouge_types=["rouge1"]),
        batches=_text_batches(),
        concat=_text_join,
        add=_text_add,
    ),
]


# ``cluster``: every interval draws whole clusters (a column of the items, of the questions).
def _sited(batches: list[Any], columns: Any = lambda b: b["columns"]) -> list[Any]:
    """The batches with a ``site`` column of four clusters (by running position)."""
    k = 0
    for b in batches:
        cols = columns(b)
        n = len(next(iter(cols.values())))
        cols["site"] = [f"s{(k + i) * 7 % 4}" for i in range(n)]
        k += n
    return batches


def _judge_sited_join(batches: list[Any]) -> Any:
    records, cols = _judge_join(batches)
    return records, cols | {"site": [s for b in batches for s in b[1]["site"]]}


def _text_sited_join(batches: list[dict[str, Any]]) -> dict[str, Any]:
    out = _text_join(batches)
    out["columns"]["site"] = sum((b["columns"]["site"] for b in batches), [])
    return out


def _pairwise_sited() -> list[dict[str, list]]:
    from contract.cases_pairwise import _BATCHES

    out = []
    for b in _BATCHES:
        site = [f"s{int(q.split('_')[0][1:]) % 5}" for q in b["index"]]
        out.append({**b, "site": site})
    return out


CASES += [
    ContractCase(
        name="llm-slices.cat-by-ci-cluster",
        make=_sliced(CATEvaluator, ["bias_type"], cluster="site"),
        make_other=_sliced(CATEvaluator, ["bias_type"]),
        batches=_sited(_cat_batches()),
        concat=_join,
        add=_add,
    ),
    ContractCase(
        name="llm-slices.fairness-by-ci-cluster",
        make=_sliced(
            LLMFairnessEvaluator,
            ["region"],
            cluster="site",
            config={"group_column": "sex", "groups": ["f", "m"]},
        ),  # fmt: skip
        make_other=_sliced(
            LLMFairnessEvaluator, ["region"], config={"group_column": "sex", "groups": ["f", "m"]}
        ),
        batches=_sited(_fair_batches()),
        concat=_join,
        add=_add,
    ),
    ContractCase(
        name="llm-slices.judge-by-ci-cluster",
        make=lambda: JudgeEvaluator(
            metrics=["faithfulness", "bias"],
            num_bootstrap=40,
            ci=0.9,
            by=["topic"],
            cluster="site",
        ),  # fmt: skip
        make_other=lambda: JudgeEvaluator(
            metrics=["faithfulness", "bias"], num_bootstrap=40, ci=0.9, by=["topic"]
        ),
        batches=_sited(_judge_batches(), lambda b: b[1]),
        concat=_judge_sited_join,
        add=lambda ev, b: ev.add(*b),
    ),
    ContractCase(
        name="llm-slices.text-by-ci-cluster",
        make=lambda: TextEvaluator(
            metrics=["rouge"],
            rouge_types=["rouge1"],
            ci=0.9,
            num_bootstrap=30,
            by=["topic"],
            cluster="site",
        ),  # fmt: skip
        make_other=lambda: TextEvaluator(metrics=["rouge"], rouge_types=["rouge1"]),
        batches=_sited(_text_batches()),
        concat=_text_sited_join,
        add=_text_add,
    ),
    ContractCase(
        name="llm-slices.pairwise-ci-by-cluster",
        make=lambda: PairwiseEvaluator(
            reference_model="ref",
            nopt=3,
            ci=0.9,
            num_bootstrap=30,
            seed=2,
            by=["topic"],
            cluster="site",
        ),  # fmt: skip
        make_other=lambda: PairwiseEvaluator(
            reference_model="ref", nopt=3, ci=0.9, num_bootstrap=30, seed=2, by=["topic"]
        ),
        batches=_pairwise_sited(),
        concat=lambda bs: {k: [v for b in bs for v in b[k]] for k in bs[0]},
        rel=1e-7,
    ),
]
