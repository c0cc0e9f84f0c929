"""Language exams (Kaleidoscope-style multiple choice): accuracy and format errors per language.

The data is a CSV with columns ``language``, ``question``, ``options`` (a list of option
texts: JSON ``["a", "b"]``, Python ``['a', 'b']`` or numpy ``['a' 'b']`` notation) and
``answer`` (the 0-based index of the right option). Rows of the chosen languages are
taken in file order, once. Row ``r`` (0-based position in the file) shows its options in
the order ``lcg_permutation(n, seed * r)`` (modulo 2**32). The model must reply
``{"choice": "<option text>"}``; the trimmed choice is compared case-insensitively with
the option texts: the right one is *correct*, another one *incorrect*, anything else
(including a reply that is not that JSON object) *invalid*. Call errors are counted apart.

Per language and overall (``parameters.language`` = ``"all"``, so no language may be
named ``all``), with C, I, V, E the correct, incorrect, invalid answers and call errors:

* ``FormatErrorRate = V / (C + I + V)`` (all answers, call errors excluded);
* ``Accuracy = C / (C + I + V)``;
* ``AccuracyOnValid = C / (C + I)``;
* ``LanguageCounts = {correct, incorrect, invalid, errors}``.

A zero denominator gives ``null`` with the reason (the original left the format error rate
empty when every answer was invalid; here it is 1, as its definition gives).

Example:
    >>> outcomes = ["correct", "invalid", "incorrect", "error"]
    >>> ev = LanguageEvaluator().add(["en", "en", "es", "es"], outcomes)
    >>> ms = ev.compute()
    >>> ms.get("Accuracy", language="all").value, ms.get("FormatErrorRate", language="en").value
    (0.3333333333333333, 0.5)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import assay.llm.suites.records as records
from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError
from assay.llm.items import Item
from assay.llm.models.base import LOGLIK_PARAM
from assay.llm.suites.base import CountsEvaluator, Suite, loglik_pick, template
from assay.llm.suites.columns import factorize
from assay.llm.suites.declared import LANGUAGE
from assay.llm.suites.language_data import OVERALL, ExamRow, load_exam
from assay.llm.suites.shuffle import clean_answer, lcg_permutation, u32
from assay.llm.suites.tally import item_tally, one_hot
from assay.llm.task import Call, Prepared
from assay.ratios import divide
from assay.results import Metric, MetricSet
from assay.uncertainty.tally import Tally

__all__ = ["LanguageEvaluator", "LanguageSuite", "parse_choice", "LANGUAGE_OUTCOMES"]

LANGUAGE_OUTCOMES = ("correct", "incorrect", "invalid", "error")
TEMPLATE_VERSION = "v1"
#: The keys of ``LanguageCounts``, in the order of the counts.
LANGUAGE_COUNTS = ("correct", "incorrect", "invalid", "errors")


#: The rates that are proportions: their numerator and denominator columns, for Wilson.
_PROPORTIONS = {
    "FormatErrorRate": ([2], [0, 1, 2]),
    "Accuracy": ([0], [0, 1, 2]),
    "AccuracyOnValid": ([0], [0, 1]),
}


class LanguageEvaluator(CountsEvaluator):
    """Counts of correct/incorrect/invalid/error answers per language.

    ``dataset`` only names what is evaluated: evaluators of different datasets refuse to merge.
    ``ci`` (with ``ci_method``, ``num_bootstrap``, ``seed``) puts an interval over items on
    the three rates (Wilson with ``ci_method="wilson"``; :mod:`assay.llm.suites.tally`).
    """

    METRICS = LANGUAGE
    where, width = "language", len(LANGUAGE_OUTCOMES)
    kinds, proportions = LANGUAGE.with_interval(), _PROPORTIONS

    def _start(self) -> None:
        self._counts: dict[str, np.ndarray]  # language -> counts of the four outcomes
        self.add_state("_counts", {}, "sum")

    def add(self, languages: Any, outcomes: Any) -> LanguageEvaluator:
        li, codes, names = _items(languages, outcomes)
        per = np.bincount(li * 4 + codes, minlength=len(names) * 4).reshape(len(names), 4)
        zero = np.zeros(4, np.int64)
        self._counts = self._counts | {n: self._counts.get(n, zero) + r for n, r in zip(names, per)}
        return self

    def scope_counts(self) -> tuple[np.ndarray, list[str]]:
        order = sorted(self._counts)
        c = np.array([self._counts[x] for x in order], dtype=np.int64).reshape(-1, 4)
        return np.vstack([c.sum(axis=0), c]), [OVERALL, *order]

    def _compute(self) -> MetricSet:
        c, names = self.scope_counts()
        values = language_values(c)
        out: list[Metric] = []
        for i, lang in enumerate(names):
            for kind, why in _RATES.items():
                out.append(records.per_language(kind, values[kind][i], language=lang, reason=why))
            counts = dict(
                zip(("correct", "incorrect", "invalid", "errors"), (int(x) for x in c[i]))
            )
            out.append(records.per_language("LanguageCounts", counts, language=lang))
        self.attach_intervals(out)
        return MetricSet(out)

    def scopes(self, languages: Any, outcomes: Any) -> Any:
        li, codes, order = _items(languages, outcomes)
        return codes, np.stack([np.zeros_like(li), li + 1]), [OVERALL, *order]

    @staticmethod
    def formulas(c: np.ndarray) -> dict[str, np.ndarray]:
        return language_values(c)

    def item_tally(self, languages: Any, outcomes: Any) -> Tally:
        """Each answer counts once in ``all`` and once in its language
        (:func:`~assay.llm.suites.tally.item_tally`)."""
        codes, rows, names = self.scopes(languages, outcomes)
        cells = one_hot([r * 4 + codes for r in rows], len(names) * 4)
        keys = [(k, {"language": x}) for k in _RATES for x in names]

        def values(flat: np.ndarray) -> np.ndarray:
            v = language_values(flat.reshape(len(flat), len(names), 4))
            return np.column_stack([v[k] for k in _RATES])

        return item_tally(cells, keys, values)


#: The rates, and why each is undefined.
_RATES = {
    "FormatErrorRate": "no answer (every call failed)",
    "Accuracy": "no answer (every call failed)",
    "AccuracyOnValid": "no valid answer (correct + incorrect = 0)",
}


def language_values(c: np.ndarray) -> dict[str, np.ndarray]:
    """The three rates of counts shaped (..., 4) (correct, incorrect, invalid, errors): the
    one formula of the records and of every resample's (NaN where undefined).

    Example:
        >>> language_values(np.array([[1, 1, 2, 5], [0, 0, 0, 3]]))["Accuracy"].tolist()
        [0.25, nan]
    """
    ok, bad, inv, _ = np.moveaxis(np.asarray(c, dtype=np.float64), -1, 0)
    answered = ok + bad + inv
    return {
        "FormatErrorRate": divide(inv, answered),
        "Accuracy": divide(ok, answered),
        "AccuracyOnValid": divide(ok, ok + bad),
    }


def _items(languages: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each answer's language (its index in the sorted languages), its outcome code, and
    the sorted languages."""
    langs = as_1d(languages, source="LanguageEvaluator.add", field="languages")
    outs = as_1d(outcomes, source="LanguageEvaluator.add", field="outcomes")
    check_same_length(languages=langs, outcomes=outs)
    oi, onames = factorize(outs)
    lookup = np.array(
        [LANGUAGE_OUTCOMES.index(o) if o in LANGUAGE_OUTCOMES else -1 for o in onames]
    )
    codes = lookup[oi] if len(onames) else np.zeros(0, np.int64)
    if (codes < 0).any():
        raise InvalidInputError(
            f"outcomes must be one of {list(LANGUAGE_OUTCOMES)}",
            source="LanguageEvaluator.add",
            field="outcomes",
        )
    li, lnames = factorize(langs)
    order = [str(x) for x in lnames]
    if OVERALL in order:  # the overall records' name: two records would share a key
        raise InvalidInputError(
            f"{OVERALL!r} names the records over every language; rename this language",
            source="LanguageEvaluator.add",
            record=f"index {int(np.argmax(li == order.index(OVERALL)))}",
            field="languages",
        )
    return li.astype(np.int64), codes.astype(np.int64), order


def parse_choice(text: str, options: Sequence[str], correct: int) -> dict[str, Any]:
    """``{"choice": ...}`` matched case-insensitively against the option texts.

    Example:
        >>> parse_choice('{"choice": " paris "}', ["Rome", "Paris"], 1)
        {'outcome': 'correct', 'choice': 'paris'}
        >>> parse_choice('Paris', ["Rome", "Paris"], 1)["outcome"]
        'invalid'
    """
    try:
        doc = json.loads(clean_answer(text))
    except ValueError:
        return {"outcome": "invalid", "choice": None, "reason": "not JSON"}
    if not isinstance(doc, dict) or not isinstance(doc.get("choice"), str):
        return {"outcome": "invalid", "choice": None, "reason": "no 'choice' string"}
    choice = doc["choice"].strip()
    folded = [o.strip().casefold() for o in options]
    if choice.casefold() == folded[correct]:
        return {"outcome": "correct", "choice": choice}
    if choice.casefold() in folded:
        return {"outcome": "incorrect", "choice": choice}
    return {"outcome": "invalid", "choice": choice, "reason": "not one of the options"}


class LanguageSuite(Suite):
    """The language exams over a Kaleidoscope-style CSV (module docstring)."""

    kind = "llm_language"

    def __init__(
        self,
        data: str | Path,
        *,
        languages: Sequence[str] | None = None,
        max_queries: int = 0,
        seed: int = 1,
        max_tokens: int = 64,
        answer_mode: str | None = None,
    ) -> None:
        self.setup(
            max_queries=max_queries, seed=seed, max_tokens=max_tokens, answer_mode=answer_mode
        )
        self.source = str(data)
        self.rows = load_exam(data)
        self.languages = [x.strip() for x in languages if x.strip()] if languages else None

    @property
    def dataset(self) -> str:
        return Path(self.source).name

    def parameters(self) -> dict[str, Any]:
        extra = {"languages": self.languages, "template_version": TEMPLATE_VERSION}
        return {**super().parameters(), **extra}

    def chosen(self) -> list[ExamRow]:
        rows = [r for r in self.rows if self.languages is None or r.language in self.languages]
        if not rows:
            raise InvalidInputError(f"no row in the languages {self.languages}", source=self.source)
        return rows if self.max_queries == 0 else rows[: self.max_queries]

    def prepare(self) -> list[Prepared]:
        out = []
        for row in self.chosen():
            perm = lcg_permutation(len(row.options), u32(self.seed * row.position))
            shown = [row.options[i] for i in perm]
            prompt = template(f"language.{TEMPLATE_VERSION}.txt").substitute(
                question=row.question, options="".join(o + "\n" for o in shown)
            )
            prompt = prompt.rstrip("\n")
            if self.loglik:  # the reply the prompt asks for, each option's text in it
                spec = {"continuations": [o + '"}' for o in shown], "prefix": '{"choice": "'}
                msgs = ({"role": "user", "content": prompt},)
                it = Item(str(row.position), msgs, {LOGLIK_PARAM: spec})
            else:
                it = Item.from_prompt(
                    str(row.position), prompt, temperature=0, max_tokens=self.max_tokens
                )
            info = {
                "language": row.language,
                "options": list(row.options),
                "answer": row.answer,
                "order": perm,
                "columns": row.columns,
            }
            out.append(Prepared(it, info))
        return out

    def parse(self, prepared: Prepared, text: str) -> dict[str, Any]:
        info = prepared.info
        if self.loglik:
            i, kept = loglik_pick(prepared, text, self.mode)
            picked = info["order"][i]  # the shown option i is the row's option order[i]
            outcome = "correct" if picked == info["answer"] else "incorrect"
            return {"outcome": outcome, "choice": info["options"][picked], **kept}
        return parse_choice(text, info["options"], info["answer"])

    def item_scores(
        self, calls: Sequence[Call]
    ) -> dict[str, tuple[dict[str, float], dict[str, Any]]]:
        """Each answered item's accuracy (1 correct; 0 incorrect or invalid; a failed call
        has none), by item id: what ``--human-labels`` calibrates (record type -> (scores,
        the record's identifying parameters))."""
        scores = {
            c.item.id: float(c.parsed["outcome"] == "correct")
            for c in calls
            if c.parsed is not None
        }
        return {"Accuracy": (scores, {"language": "all"})}

    def evaluator(self) -> LanguageEvaluator:
        return LanguageEvaluator(dataset=self.dataset)

    def item_columns(self) -> list[str]:
        """The columns of the exam CSV (``language``, ``subject``, ...)."""
        return list(dict.fromkeys(k for r in self.rows for k in r.columns))

    def item_values(self, column: str) -> list[tuple[str, Any]]:
        """The chosen rows by CSV line, with their cell of ``column``."""
        return [(f"line {r.position + 2}", r.columns.get(column)) for r in self.chosen()]

    def items(self, calls: Sequence[Call]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        args = {
            "languages": [c.info["language"] for c in calls],
            "outcomes": [c.parsed["outcome"] if c.parsed is not None else "error" for c in calls],
        }
        cols = {k: [c.info["columns"].get(k) for c in calls] for k in self.scored_columns()}
        return args, cols
