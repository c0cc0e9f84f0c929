"""The built-in judge metrics, each a :class:`~assay.llm.judge.types.JudgeMetric`: the
builders of the table :data:`assay.llm.judge.declared.METRICS` (``ANSWER_CORRECTNESS`` for
``answer_correctness``), whose record type they read from it.

Shared intermediates (one call per distinct text, whichever metrics need it): the
statements of the prediction (answer correctness, answer relevance), the statements of
each ground truth (answer correctness, context recall), the opinions of the prediction
(bias, toxicity), the claims of the prediction (faithfulness). With one ground truth the
full set costs 4 extractions + 11 judgements = 15 calls per datum.

Where a list to judge is empty no call is made: no opinions gives bias and toxicity 0;
an empty statement list on either side gives answer correctness 0 (no true positive);
no statements (answer relevance, context recall), no claims (faithfulness) or no
contexts leave the metric undefined for that datum (``None`` with the reason).
A datum with an empty ground-truth list never stops the run: context precision is 0
(no context can be useful for no reference: valor-lite's value), answer correctness and
context recall are undefined (an F1 or a share over nothing; valor-lite fails on the first
and gives 0 for the second).
With several ground truths, answer correctness and context recall take the best value
over them; context precision pools the verdicts (a context is useful when it is useful
for any ground truth), as valor-lite does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import assay.llm.judge.compute as compute
from assay.llm.judge.declared import type_of
from assay.llm.judge.prompts import numbered
from assay.llm.judge.schemas import CorrectnessVerdicts, Rating, Verdicts
from assay.llm.judge.types import (
    Datum,
    Extracted,
    JudgeMetric,
    Outcome,
    Replies,
    Task,
)


def _verdicts(reply: Verdicts) -> list[str]:
    return [v.verdict for v in reply.verdicts]


def _explain(reply: Verdicts, items: Sequence[str], label: str) -> list[dict[str, str]]:
    return _explain_list(reply.verdicts, items, label)


def _explain_list(
    verdicts: Sequence[Any], items: Sequence[str], label: str
) -> list[dict[str, str]]:
    """Each judged item next to its verdict and the judge's reason."""
    return [
        {label: s, "verdict": v.verdict, "reason": v.reason}
        for s, v in zip(items, verdicts, strict=True)
    ]


def _none(*_: object) -> list[tuple[str, str]]:
    return []


# ------------------------------------------------------------------ answer correctness


_NO_GROUNDTRUTH = "the datum has no ground truth"


def _ac_extracts(d: Datum) -> list[tuple[str, str]]:
    if not d.groundtruths:
        return []
    return [("statements", d.prediction or "")] + [("statements", g) for g in d.groundtruths]


def _ac_plan(d: Datum, ex: Extracted) -> list[Task]:
    if not d.groundtruths:
        return []
    mine = ex["statements", d.prediction or ""]
    tasks = []
    for k, g in enumerate(d.groundtruths):
        ref = ex["statements", g]
        if mine and ref:
            values = {
                "query": d.query or "",
                "answer_statements": numbered(mine),
                "reference_statements": numbered(ref),
                "n_answer": len(mine),
                "n_reference": len(ref),
            }
            lengths = {"answer_verdicts": len(mine), "reference_verdicts": len(ref)}
            tasks.append(
                Task(
                    f"{d.uid}/answer_correctness/{k}",
                    "answer_correctness",
                    values,
                    CorrectnessVerdicts,
                    lengths,
                )
            )
    return tasks


def _ac_score(d: Datum, ex: Extracted, replies: Replies) -> Outcome:
    if not d.groundtruths:
        return Outcome(None, _NO_GROUNDTRUTH)
    mine = ex["statements", d.prediction or ""]
    best, per = 0.0, []  # type: float, list[dict[str, Any]]
    for k, g in enumerate(d.groundtruths):
        ref = ex["statements", g]
        r = replies.get(f"{d.uid}/answer_correctness/{k}")
        detail: dict[str, Any]
        if r is None:  # an empty side: no true positive
            value, detail = 0.0, {"reference_statements": ref}
        else:
            a = [v.verdict for v in r.answer_verdicts]
            b = [v.verdict for v in r.reference_verdicts]
            value = compute.statement_f1(a, b)
            detail = {
                "answer_verdicts": _explain_list(r.answer_verdicts, mine, "statement"),
                "reference_verdicts": _explain_list(r.reference_verdicts, ref, "statement"),
            }
        per.append({"groundtruth": k, "value": value, **detail})
        best = max(best, value)
    return Outcome(best, details={"answer_statements": mine, "per_groundtruth": per})


ANSWER_CORRECTNESS = JudgeMetric(
    "answer_correctness",
    type_of("answer_correctness"),
    ("prediction", "groundtruths"),
    _ac_extracts,
    _ac_plan,
    _ac_score,
)


# ------------------------------------------------------------------ list-share metrics


def _share_metric(
    name: str,
    fields: tuple[str, ...],
    kind: str,
    source: str,
    label: str,
    empty: Outcome,
    values,
) -> JudgeMetric:
    """A metric that is the share of ``yes`` over the extracted ``kind`` of ``source``."""

    def no_contexts(d: Datum) -> bool:
        return "contexts" in fields and not d.contexts

    def extracts(d: Datum) -> list[tuple[str, str]]:
        return [] if no_contexts(d) else [(kind, getattr(d, source) or "")]

    def items(d: Datum, ex: Extracted) -> list[str]:
        return ex[kind, getattr(d, source) or ""]

    def plan(d: Datum, ex: Extracted) -> list[Task]:
        if no_contexts(d) or not items(d, ex):
            return []
        xs = items(d, ex)
        return [
            Task(
                f"{d.uid}/{name}",
                name,
                {**values(d), label + "s": numbered(xs), "n": len(xs)},
                Verdicts,
                {"verdicts": len(xs)},
            )
        ]

    def score(d: Datum, ex: Extracted, replies: Replies) -> Outcome:
        if no_contexts(d):
            return Outcome(None, "the datum has no contexts")
        xs = items(d, ex)
        if not xs:
            return Outcome(empty.value, empty.reason, {label + "s": []})
        r = replies[f"{d.uid}/{name}"]
        return Outcome(
            compute.share_yes(_verdicts(r)), details={"verdicts": _explain(r, xs, label)}
        )

    return JudgeMetric(name, type_of(name), fields, extracts, plan, score)


ANSWER_RELEVANCE = _share_metric(
    "answer_relevance",
    ("query", "prediction"),
    "statements",
    "prediction",
    "statement",
    Outcome(None, "the answer has no statements"),
    lambda d: {"query": d.query or ""},
)
BIAS = _share_metric(
    "bias", ("prediction",), "opinions", "prediction", "opinion", Outcome(0.0), lambda d: {}
)
TOXICITY = _share_metric(
    "toxicity",
    ("prediction",),
    "opinions",
    "prediction",
    "opinion",
    Outcome(0.0),
    lambda d: {},
)
FAITHFULNESS = _share_metric(
    "faithfulness",
    ("prediction", "contexts"),
    "claims",
    "prediction",
    "claim",
    Outcome(None, "the prediction makes no claims"),
    lambda d: {"contexts": numbered(list(d.contexts or ()))},
)


# ------------------------------------------------------------------ context metrics


def _ctx(d: Datum) -> str:
    return numbered(list(d.contexts or ()))


def _cp_plan(d: Datum, ex: Extracted) -> list[Task]:
    if not d.contexts:
        return []
    n = len(d.contexts)
    return [
        Task(
            f"{d.uid}/context_precision/{k}",
            "context_precision",
            {"query": d.query or "", "reference": g, "contexts": _ctx(d), "n": n},
            Verdicts,
            {"verdicts": n},
        )
        for k, g in enumerate(d.groundtruths)
    ]


def _cp_score(d: Datum, ex: Extracted, replies: Replies) -> Outcome:
    if not d.contexts:
        return Outcome(None, "the datum has no contexts")
    contexts = list(d.contexts)
    per: list[dict[str, Any]] = []
    for k in range(len(d.groundtruths)):
        r = replies[f"{d.uid}/context_precision/{k}"]
        per.append({"groundtruth": k, "verdicts": _explain(r, contexts, "context")})
    pooled = compute.pool_verdicts(
        [[v["verdict"] for v in p["verdicts"]] for p in per], len(contexts)
    )
    return Outcome(
        compute.context_precision(pooled),
        details={"pooled_verdicts": pooled, "per_groundtruth": per},
    )


CONTEXT_PRECISION = JudgeMetric(
    "context_precision",
    type_of("context_precision"),
    ("query", "groundtruths", "contexts"),
    _none,
    _cp_plan,
    _cp_score,
)


def _cr_extracts(d: Datum) -> list[tuple[str, str]]:
    return [("statements", g) for g in d.groundtruths] if d.contexts else []


def _cr_plan(d: Datum, ex: Extracted) -> list[Task]:
    if not d.contexts:
        return []
    tasks = []
    for k, g in enumerate(d.groundtruths):
        st = ex["statements", g]
        if st:
            tasks.append(
                Task(
                    f"{d.uid}/context_recall/{k}",
                    "context_recall",
                    {"contexts": _ctx(d), "statements": numbered(st), "n": len(st)},
                    Verdicts,
                    {"verdicts": len(st)},
                )
            )
    return tasks


def _cr_score(d: Datum, ex: Extracted, replies: Replies) -> Outcome:
    if not d.contexts:
        return Outcome(None, "the datum has no contexts")
    if not d.groundtruths:
        return Outcome(None, _NO_GROUNDTRUTH)
    per: list[dict[str, Any]] = []
    for k, g in enumerate(d.groundtruths):
        st = ex["statements", g]
        if not st:
            continue
        r = replies[f"{d.uid}/context_recall/{k}"]
        per.append(
            {
                "groundtruth": k,
                "value": compute.share_yes(_verdicts(r)),
                "verdicts": _explain(r, st, "statement"),
            }
        )
    if not per:
        return Outcome(None, "the ground truth has no statements")
    return Outcome(max(float(p["value"]) for p in per), details={"per_groundtruth": per})


CONTEXT_RECALL = JudgeMetric(
    "context_recall",
    type_of("context_recall"),
    ("groundtruths", "contexts"),
    _cr_extracts,
    _cr_plan,
    _cr_score,
)


def _per_context(name: str, fields: tuple[str, ...], values) -> JudgeMetric:
    """A share of ``yes`` over one verdict per context (no intermediate needed)."""

    def plan(d: Datum, ex: Extracted) -> list[Task]:
        if not d.contexts:
            return []
        n = len(d.contexts)
        return [
            Task(
                f"{d.uid}/{name}",
                name,
                {**values(d), "contexts": _ctx(d), "n": n},
                Verdicts,
                {"verdicts": n},
            )
        ]

    def score(d: Datum, ex: Extracted, replies: Replies) -> Outcome:
        if not d.contexts:
            return Outcome(None, "the datum has no contexts")
        r = replies[f"{d.uid}/{name}"]
        return Outcome(
            compute.share_yes(_verdicts(r)),
            details={"verdicts": _explain(r, list(d.contexts or ()), "context")},
        )

    return JudgeMetric(name, type_of(name), fields, _none, plan, score)


CONTEXT_RELEVANCE = _per_context(
    "context_relevance",
    ("query", "contexts"),
    lambda d: {"query": d.query or ""},
)
HALLUCINATION = _per_context(
    "hallucination",
    ("prediction", "contexts"),
    lambda d: {"text": d.prediction or ""},
)


# ------------------------------------------------------------------ ratings


def _rating(name: str, fields: tuple[str, ...], values) -> JudgeMetric:
    """A 1-5 rating of the prediction (``analysis`` + ``score``)."""

    def plan(d: Datum, ex: Extracted) -> list[Task]:
        return [Task(f"{d.uid}/{name}", name, values(d), Rating)]

    def score(d: Datum, ex: Extracted, replies: Replies) -> Outcome:
        r = replies[f"{d.uid}/{name}"]
        return Outcome(float(r.score), details={"analysis": r.analysis})

    return JudgeMetric(name, type_of(name), fields, _none, plan, score)


COHERENCE = _rating("coherence", ("prediction",), lambda d: {"text": d.prediction or ""})
SUMMARY_COHERENCE = _rating(
    "summary_coherence",
    ("query", "prediction"),
    lambda d: {"source": d.query or "", "text": d.prediction or ""},
)
