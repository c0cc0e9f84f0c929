"""Text benchmark: ROUGE and BLEU in assay vs rouge-score, NLTK and sacrebleu, same run.

10,000 generated (prediction, reference) pairs of English-like text (a Zipf vocabulary
with inflected forms, punctuation and a few line breaks, 20-60 tokens each). Prints wall
times, ratios, and the largest difference between assay's numbers and the reference
package's (expected: 0).

* ROUGE 1/2/L/Lsum without and with the Porter stemmer vs ``rouge_score.RougeScorer.score``
  (assay's stem memo is emptied before each timed run, so the stemmer is paid in full);
* sentence BLEU-4 vs ``nltk.translate.bleu_score.sentence_bleu`` and sacrebleu's
  ``sentence_bleu`` (sacrebleu tokenises and smooths differently, so only the time is
  compared);
* corpus BLEU vs NLTK's ``corpus_bleu``;
* memory of ROUGE without and with the stemmer, each tool in a fresh process (Linux): the
  peak RSS of the whole process, and how far the call raised it above the resident memory
  just before (the tool's module imported, the corpus built; what the call imports lazily
  is counted). "stemmer adds" is the growth with the stemmer minus the growth without; the
  line passes when assay's is at most rouge-score's (plus 5 MB of allocator noise).

Usage: ``python benchmarks/text.py [--n 10000]``
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from assay.text import bleu, corpus_bleu, rouge_scores
from assay.text import tokenize as _tok

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
STEMS = ["connect", "run", "walk", "report", "generat", "model", "evaluat", "translat", "summar"]
ENDINGS = ["", "s", "ed", "ing", "ion", "ions", "er", "ers", "ly", "ness"]
SHORT = "the a of to and in is it that for on with as was by at be this are from".split()


def corpus(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    roots = STEMS + [
        "".join(rng.choice(letters) for _ in range(rng.randint(3, 8))) for _ in range(4000)
    ]
    weights = [1 / (k + 1) for k in range(len(roots))]

    def word() -> str:
        if rng.random() < 0.35:
            return rng.choice(SHORT)
        w = rng.choices(roots, weights)[0] + rng.choice(ENDINGS)
        return w.capitalize() if rng.random() < 0.05 else w

    def text(base: list[str] | None = None) -> str:
        if base is None:
            words = [word() for _ in range(rng.randint(20, 60))]
        else:  # a paraphrase: keep most words, change some, drop some
            words = [w if rng.random() < 0.7 else word() for w in base if rng.random() < 0.9]
        out = []
        for w in words:
            out.append(w)
            r = rng.random()
            if r < 0.04:
                out[-1] += ","
            elif r < 0.06:
                out[-1] += ".\n"
        return " ".join(out)

    refs = [text() for _ in range(n)]
    preds = [text(r.replace("\n", " ").split()) for r in refs]
    return preds, refs


def timed(fn: Callable[[], Any]) -> tuple[tuple[float, float], Any]:
    """``((CPU s, wall s), fn())``: this process's CPU time beside the wall clock."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return (time.process_time() - c0, time.perf_counter() - w0), out


def rouge_rows(preds: list[str], refs: list[str]) -> list[tuple[str, Any, Any, float]]:
    from rouge_score import rouge_scorer

    rows = []
    for stem in (False, True):
        _tok._STEMS.clear()
        ta, ours = timed(lambda s=stem: rouge_scores(preds, refs, rouge_types=TYPES, use_stemmer=s))
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem)
        tb, theirs = timed(lambda sc=scorer: [sc.score(r, p) for p, r in zip(preds, refs)])
        diff = max(
            float(np.max(np.abs(ours[t].measure(m) - np.array([getattr(s[t], m) for s in theirs]))))
            for t in TYPES
            for m in ("precision", "recall", "fmeasure")
        )
        rows.append((f"ROUGE 1/2/L/Lsum{' +stemmer' if stem else ''} vs rouge-score", ta, tb, diff))
    return rows


def bleu_rows(preds: list[str], refs: list[str]) -> list[tuple[str, Any, Any, float]]:
    import sacrebleu
    from nltk.translate import bleu_score as nb

    warnings.simplefilter("ignore")
    ta, ours = timed(lambda: bleu(preds, refs))
    tb, theirs = timed(
        lambda: [nb.sentence_bleu([r.split()], p.split()) for p, r in zip(preds, refs)]
    )
    rows = [("sentence BLEU-4 vs nltk", ta, tb, float(np.max(np.abs(ours - np.array(theirs)))))]
    tc, _ = timed(lambda: [sacrebleu.sentence_bleu(p, [r]) for p, r in zip(preds, refs)])
    rows.append(("sentence BLEU-4 vs sacrebleu (time only)", ta, tc, float("nan")))
    ta, c1 = timed(lambda: corpus_bleu(preds, refs))
    tb, c2 = timed(lambda: nb.corpus_bleu([[r.split()] for r in refs], [p.split() for p in preds]))
    rows.append(("corpus BLEU-4 vs nltk", ta, tb, abs(c1 - c2)))
    tc, _ = timed(lambda: sacrebleu.corpus_bleu(preds, [refs]))
    rows.append(("corpus BLEU-4 vs sacrebleu (time only)", ta, tc, float("nan")))
    return rows


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} in /proc/self/status")


def memory_child(tool: str, stem: bool, n: int) -> None:
    """Run one tool's ROUGE once in this fresh process; print its peak and growth as JSON."""
    preds, refs = corpus(n)
    if tool == "rouge-score":
        from rouge_score import rouge_scorer
    with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
        f.write("5")
    start = _status_mb("VmRSS")
    if tool == "assay":
        rouge_scores(preds, refs, rouge_types=TYPES, use_stemmer=stem)
    else:
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem)
        [scorer.score(r, p) for p, r in zip(preds, refs)]
    peak = _status_mb("VmHWM")
    print(json.dumps({"peak": peak, "grew": peak - start}))


def memory_rows(n: int) -> None:
    out: dict[tuple[str, bool], dict[str, float]] = {}
    for tool in ("assay", "rouge-score"):
        for stem in (False, True):
            cmd = [sys.executable, __file__, "--n", str(n), "--memory-child", tool]
            cmd += ["--stem"] if stem else []
            res = subprocess.run(cmd, capture_output=True, text=True, check=True)
            out[tool, stem] = json.loads(res.stdout.strip().splitlines()[-1])
    print("ROUGE 1/2/L/Lsum memory, fresh process per tool: peak RSS (growth during the call)")
    for tool in ("assay", "rouge-score"):
        no, yes = out[tool, False], out[tool, True]
        print(
            f"  {tool:<12} no stemmer {no['peak']:5.0f} MB ({no['grew']:4.0f} MB)   "
            f"stemmer {yes['peak']:5.0f} MB ({yes['grew']:4.0f} MB)   "
            f"stemmer adds {yes['grew'] - no['grew']:4.0f} MB"
        )
    ours = out["assay", True]["grew"] - out["assay", False]["grew"]
    theirs = out["rouge-score", True]["grew"] - out["rouge-score", False]["grew"]
    verdict = "PASS" if ours <= theirs + 5 else "FAIL"
    print(f"  stemmer memory: assay {ours:.0f} MB vs rouge-score {theirs:.0f} MB: {verdict}")
    peak = "PASS" if out["assay", True]["peak"] <= out["rouge-score", True]["peak"] else "FAIL"
    print(
        f"  peak with stemmer: assay {out['assay', True]['peak']:.0f} MB vs rouge-score "
        f"{out['rouge-score', True]['peak']:.0f} MB: {peak}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--memory-child", choices=["assay", "rouge-score"], help=argparse.SUPPRESS)
    ap.add_argument("--stem", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = args.n
    if args.memory_child:
        memory_child(args.memory_child, args.stem, n)
        return
    preds, refs = corpus(n)
    print(f"{n} pairs, {sum(len(p.split()) for p in preds) / n:.0f} tokens per prediction")
    print("CPU seconds (wall seconds); the ratio is peer / assay in CPU time")
    head = f"{'task':<44} {'assay s':>15} {'peer s':>15} {'ratio':>7} {'max |diff|':>11}"
    print(head)
    for name, ta, tb, diff in rouge_rows(preds, refs) + bleu_rows(preds, refs):
        d = "n/a" if diff != diff else f"{diff:.1e}"
        a, b = f"{ta[0]:.2f} ({ta[1]:.2f})", f"{tb[0]:.2f} ({tb[1]:.2f})"
        print(f"{name:<44} {a:>15} {b:>15} {tb[0] / ta[0]:6.1f}x {d:>11}")
    memory_rows(n)


if __name__ == "__main__":
    main()
