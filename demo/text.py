"""Demo section: ROUGE and BLEU on a few summaries (checked against rouge-score and NLTK),
then three judge metrics on the embedded model with every call traced."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from assay.results import MetricSet
from saving import save

PAIRS = [
    (
        "The council approved the new bike lanes on Monday after a long debate.",
        ["On Monday the city council approved new bike lanes following lengthy debate."],
    ),
    (
        "Heavy rain closed two schools.\nBuses were cancelled in the north.",
        ["Two schools closed because of heavy rain.\nNorthern bus routes were cancelled."],
    ),
    (
        "The company reported higher profits driven by cloud sales.",
        [
            "Profits rose at the company, driven by its cloud business.",
            "Cloud sales lifted profit.",
        ],
    ),
]


#: BLEU-4 of one short sentence is 0 whenever no 4-gram matches (the geometric mean of the
#: n-gram precisions has a zero factor); Chen & Cherry's method1 (NLTK's SmoothingFunction)
#: gives a zero count a small epsilon instead, the usual choice for sentence-level BLEU.
BLEU_SMOOTHING = "method1"


def rouge_bleu(console: Console) -> MetricSet:
    """ROUGE and smoothed sentence BLEU of the three summaries, each checked against the peer."""
    import warnings

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score.rouge_scorer import RougeScorer

    from assay.text import evaluate_text, rouge

    preds = [p for p, _ in PAIRS]
    refs = [r for _, r in PAIRS]
    uids = ["council", "rain", "profits"]
    ms = evaluate_text(preds, refs, uids=uids, use_stemmer=True, smoothing=BLEU_SMOOTHING)
    ours = rouge(preds, refs, use_stemmer=True)
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    smooth = getattr(SmoothingFunction(), BLEU_SMOOTHING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nltk = [
            sentence_bleu([x.split() for x in r], p.split(), smoothing_function=smooth)
            for p, r in PAIRS
        ]
    table = Table("datum", "rouge1", "rougeL", "rougeLsum", "BLEU-4", "= rouge-score & nltk")
    for i, uid in enumerate(uids):
        theirs = scorer.score_multi(refs[i], preds[i])
        bleu = ms.get("BLEU", datum_uid=uid).value
        same = all(ours[t][i] == theirs[t].fmeasure for t in ours) and bleu == nltk[i]
        table.add_row(
            uid,
            *(f"{ours[t][i]:.4f}" for t in ("rouge1", "rougeL", "rougeLsum")),
            f"{bleu:.4f}",
            "yes" if same else "NO",
        )
    console.print(table)
    console.print(
        f"BLEU-4 is sentence BLEU with smoothing {BLEU_SMOOTHING} (Chen & Cherry, NLTK's "
        "SmoothingFunction): unsmoothed, a short sentence with no matching 4-gram scores 0 "
        "however close it is. BLEU counts exact n-grams, ROUGE stemmed unigrams and subsequences, "
        "so a paraphrase scores lower in BLEU."
    )
    agg = ms.get("ROUGE", rouge_type="rouge1", aggregate="mean")
    lo, hi = agg.parameters["ci_low"], agg.parameters["ci_high"]
    console.print(f"ROUGE-1 mean {agg.value:.4f}, 95% CI [{lo:.4f}, {hi:.4f}]")
    return ms


def run(out_dir: Path, console: Console) -> None:
    from assay.llm.judge import Datum, judge

    ms = rouge_bleu(console)

    data = [
        Datum(
            "tower",
            "Where is the Eiffel Tower?",
            "The Eiffel Tower is in Paris.",
            ("It stands in Paris.",),
            ("The Eiffel Tower is a landmark in Paris, France.",),
        ),
    ]
    res = judge(
        data,
        ["faithfulness", "answer_relevance", "bias"],
        model="embedded",
        judge_retries=1,
        # constrained by default (structured "auto"): llama.cpp holds the small model to each
        # reply's JSON schema by a grammar, so every reply parses.
        params={"temperature": 0.0, "max_tokens": 160},
        cache=out_dir / "text-judge-cache.sqlite",
        quiet=False,
    )
    jt = Table("metric", "value", "why")
    for m in res.metrics:
        if "datum_uid" in m.parameters:
            why = m.parameters.get("undefined") or json.dumps(m.parameters["details"])[:70]
            jt.add_row(m.type, "null" if m.value is None else f"{m.value:.3f}", why)
    console.print(jt)
    valid = sum(c.record.ok and c.invalid is None for c in res.calls)
    constraint = res.parameters.get("constraint", "none")
    console.print(
        f"{res.paid_calls} judge calls (constraint: {constraint}); "
        f"{valid} of {len(res.calls)} replies parsed"
    )
    console.print(
        "[yellow]Caution: the judge is a 135M-parameter model; these values demonstrate "
        "the machinery (constrained replies, verdicts, scores), they are not a verdict on "
        "the answer.[/]"
    )
    (out_dir / "text.json").write_text((ms + res.metrics).to_json(indent=2) + "\n")
    from assay.store import ItemRecord

    items = [
        ItemRecord.from_llm(
            c.item, c.record, c.parsed if c.invalid is None else {"invalid": c.invalid}
        )
        for c in res.calls
    ]
    save(out_dir, ms + res.metrics, console, kind="text", dataset="three summaries",
         model="embedded", items=items)  # fmt: skip
