"""Pairwise judging as one task of the one driver: :class:`PairwiseTask` and :func:`judge`.

Items: every model against the reference model, both orders (or one seeded random order),
exact matches never sent (:mod:`assay.llm.pairwise.calls`); run: the shared runner
(concurrency, retries, cache, resume, ``max_errors``, interrupts); parse: the judge's
``Choice: X`` (:func:`~assay.llm.pairwise.prompts.extract_choice`, strict: a reply without
one is counted, never guessed); score: :func:`~assay.llm.pairwise.analysis.analyze` (the
original's counts and win rates, the debiased win rates, Bradley-Terry ratings with
bootstrap intervals, length-controlled win rates).

Example:
    >>> from assay.testing.pairwise import make_table
    >>> t = make_table(["quality"], {"m1": [3], "ref": [1]})
    >>> task = PairwiseTask(t, models=["m1"], reference_model="ref", num_bootstrap=10)
    >>> [p.item.id for p in task.stage(0, [])]
    ['proj0_uml_class-general;ref;m1', 'proj0_uml_class-general;m1;ref']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._compat import removed_keywords
from assay.errors import InvalidInputError
from assay.llm.driver import LLMRun, evaluate
from assay.llm.options import RunOptions
from assay.llm.task import Call, LLMTask, Prepared
from assay.results import MetricSet

if TYPE_CHECKING:
    import pandas as pd

    from assay.llm.models.base import ChatModel
    from assay.llm.pairwise.analysis import Analysis

__all__ = ["PairwiseTask", "judge", "check_by_columns"]


def _evaluator_options(*, seed_flag: str, **given: Any) -> dict[str, Any]:
    """The options the task's evaluator will take, checked by its declaration
    (:data:`assay.llm.pairwise.declared.OPTIONS`) before any call: errors name the flags
    (the bootstrap's seed: ``seed_flag``)."""
    from assay.llm.pairwise.declared import OPTIONS
    from assay.options import flags_named

    try:
        with flags_named(OPTIONS):
            return OPTIONS.validate(given)
    except InvalidInputError as e:
        if e.source != "--seed":
            raise
        raise InvalidInputError(e.reason, source=seed_flag) from None


def check_by_columns(
    table: pd.DataFrame, by: Sequence[str], source: str, flag: str = "--by"
) -> list[str]:
    """The slice columns, each a column of the input table (checked before any call).

    Example:
        >>> import pandas as pd
        >>> check_by_columns(pd.DataFrame({"task": ["t"]}), ["topic"], "t.csv")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: t.csv: field 'topic': is not a column of the table (--by)
    """
    for col in by:
        if col not in table.columns:
            raise InvalidInputError(
                f"is not a column of the table ({flag})", source=source, field=col
            )
    return list(by)


@removed_keywords(n_boot="num_bootstrap", confidence="ci")
class PairwiseTask(LLMTask):
    """Judge every model against the reference model (see the module docstring).

    Args:
        data: the input table (a file: .xlsx, .csv, .tsv, .jsonl; or a DataFrame).
        models: the models to evaluate.
        reference_model: the model every model is compared with.
        nopt: options the judge chooses from: 2, 3 or 4.
        mode, seed: ``"dual"`` (both orders) or ``"random"`` (one order, seeded).
        fill_contents: columns whose cells are file paths to read.
        max_tokens: cap on the judge's reply.
        ci, ci_method, num_bootstrap, bootstrap_seed: the intervals (``ci`` on every rate
            record; the ratings and length-controlled win rates always); see
            :func:`~assay.llm.pairwise.analysis.analyze`. The one seed rule: ``seed``
            seeds everything random (random mode's order and the bootstrap, ``|seed|``);
            ``bootstrap_seed`` re-seeds only the bootstrap (no new judge call).
        cluster: a question-level column of the table whose values are clusters (with
            ``ci``): every interval draws whole clusters of questions.
        by: columns of the input table whose every value gets the rate records again.

    After a run, :attr:`rows` holds the judged comparisons and :attr:`analysis` every
    table behind the records.
    """

    kind = "pairwise"
    can_structure = True

    def __init__(
        self,
        data: str | Path | pd.DataFrame,
        *,
        models: Sequence[str],
        reference_model: str,
        nopt: int = 2,
        mode: str = "dual",
        seed: int = 2680,
        fill_contents: Sequence[str] = (),
        max_tokens: int = 1024,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        bootstrap_seed: int | None = None,
        by: Sequence[str] = (),
        cluster: str | None = None,
        repeats: int = 1,
    ) -> None:
        from assay.llm.pairwise.table import build_comparisons, read_table

        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise InvalidInputError(
                f"must be an integer >= 1 (judge calls per comparison), got {repeats!r}",
                source="--repeats",
            )
        self.repeats = repeats
        boot_seed = abs(int(seed)) if bootstrap_seed is None else bootstrap_seed
        v = _evaluator_options(
            reference_model=reference_model, nopt=nopt, ci=ci, ci_method=ci_method,
            num_bootstrap=num_bootstrap, seed=boot_seed,
            cluster=cluster, seed_flag="--seed" if bootstrap_seed is None else "--bootstrap-seed",
        )  # fmt: skip
        self.nopt = v["nopt"]
        self.intervals: dict[str, Any] = {
            k: v[k] for k in ("ci", "ci_method", "num_bootstrap", "seed", "cluster")
        }
        if max_tokens < 1:
            raise InvalidInputError(f"must be >= 1, got {max_tokens}", source="--max-tokens")
        if not models:
            raise InvalidInputError("give at least one model", source="--models")
        self.models, self.reference_model, self.mode, self.seed = (
            list(models),
            reference_model,
            mode,
            seed,
        )
        self.max_tokens = int(max_tokens)
        self.source = "table" if not isinstance(data, (str, Path)) else str(data)
        table = read_table(
            data, models=self.models, reference_model=reference_model, fill_contents=fill_contents
        )
        self.by = tuple(check_by_columns(table, [by] if isinstance(by, str) else by, self.source))
        index = table["index"].astype(str)
        kept = [*self.by, *check_by_columns(table, [cluster] if cluster else [], self.source,
                                            "--cluster")]  # fmt: skip
        if cluster is not None:  # every question has a cluster: checked before any call
            from assay.llm.pairwise.slicing import cell_text
            from assay.llm.slicing import check_clusters

            values = zip((f"question {q}" for q in index), table[cluster].map(cell_text))
            check_clusters(cluster, list(values), "questions")
        self._by_values = {c: dict(zip(index, table[c])) for c in dict.fromkeys(kept)}
        self.comparisons = build_comparisons(
            table, self.models, reference_model, mode=mode, seed=seed
        )
        if not self.comparisons:
            raise InvalidInputError("no question has answers of both models", source=self.source)
        self.judge_name = ""
        self.rows: pd.DataFrame | None = None
        self.analysis: Analysis | None = None

    @property
    def dataset(self) -> str:
        return self.source

    def configure(self, options: RunOptions) -> None:
        """``--max-tokens`` caps the judge's reply; ``--structured`` constrains it."""
        super().configure(options.replace(max_tokens=None))
        if options.max_tokens is not None:
            self.max_tokens = options.max_tokens

    def start(self, model: ChatModel) -> None:
        self.judge_name = model.name

    def parameters(self) -> dict[str, Any]:
        from assay.llm.pairwise.prompts import PROMPT_VERSION

        return {
            "models": self.models,
            "reference_model": self.reference_model,
            "nopt": self.nopt,
            "mode": self.mode,
            "seed": self.seed,
            "prompt_version": PROMPT_VERSION,
        } | ({} if self.repeats == 1 else {"repeats": self.repeats})

    def stage(self, n: int, calls: Sequence[Call]) -> list[Prepared]:
        from assay.llm.pairwise.calls import judge_items

        if n > 0:
            return []
        params: dict[str, Any] = {"temperature": 0.0, "max_tokens": self.max_tokens}
        if self.constraint is not None:  # reasoning, then "Choice: X" with X offered
            from assay.llm.constrain import choice_constraint
            from assay.llm.pairwise.prompts import OPTION_LETTERS

            letters = OPTION_LETTERS[self.nopt]
            params.update(choice_constraint(letters, self.constraint, self.max_tokens))
        items = [
            Prepared(it) for it in judge_items(self.comparisons, nopt=self.nopt, params=params)
        ]
        if self.repeats == 1:
            return items
        from assay.llm.pairwise.repeats import repeated_items

        return repeated_items(items, self.repeats)

    def parse(self, prepared: Prepared, text: str) -> Any:
        from assay.llm.pairwise.prompts import extract_choice

        return extract_choice(self._reply(text), nopt=self.nopt).letter or None

    def _reply(self, text: str | None) -> str | None:
        """A ``json_schema`` choice reply as the text it stands for (reasoning, ``Choice: X``)."""
        if self.constraint is None:
            return text
        from assay.llm.constrain import choice_reply
        from assay.llm.pairwise.prompts import OPTION_LETTERS

        return choice_reply(text, OPTION_LETTERS[self.nopt])

    def score(self, calls: Sequence[Call]) -> MetricSet:
        from assay.llm.pairwise.analysis import analyze
        from assay.llm.pairwise.calls import judged_rows

        records = [c.record for c in calls]
        if self.constraint is not None:
            records = [replace(r, text=self._reply(r.text)) for r in records]
        self.rows = judged_rows(self.comparisons, records, judge=self.judge_name, nopt=self.nopt)
        for col, values in self._by_values.items():
            self.rows[col] = self.rows["index"].map(values)
        self.analysis = analyze(
            self.rows, reference_model=self.reference_model, by=self.by, **self.intervals
        )
        if self.repeats == 1:
            return self.analysis.metrics
        from assay.llm.pairwise.repeats import repeat_record

        def rows_of(recs: list[Any]) -> Any:
            return judged_rows(self.comparisons, recs, judge=self.judge_name, nopt=self.nopt)

        from assay.uncertainty.intervals import ci_options

        iv = self.intervals
        ci = ci_options(iv["ci"], num_bootstrap=iv["num_bootstrap"], seed=iv["seed"])
        rec = repeat_record(records, self.repeats, rows_of, ci)
        return MetricSet([*self.analysis.metrics, rec])


def judge(
    data: str | Path | pd.DataFrame,
    *,
    models: Sequence[str],
    reference_model: str,
    model: ChatModel | str | None = None,
    options: RunOptions | None = None,
    **task: Any,
) -> LLMRun:
    """Pairwise judging as a library call: :class:`PairwiseTask` through the one driver.

    ``task``: the other :class:`PairwiseTask` arguments (``nopt``, ``mode``, ``ci``, ``by``...);
    ``model``: the judge (a spec or a model); ``options``: how the calls are run.
    Returns the run (``.metrics``); ``run.status`` is ``"failed"`` when calls failed
    beyond ``options.max_errors``.
    """
    t = PairwiseTask(data, models=models, reference_model=reference_model, **task)
    return evaluate(t, model, options)
