"""``assay llm cat|fairness|language|average``: the LLM suites on the command line.

Every suite command takes the same run options (``--model``, ``--max-queries``, ``--seed``,
``--max-errors``, ``--concurrency``, ``--timeout``, ``--retries``, ``--max-tokens``,
``--cache``/``--no-cache``, ``--save/--no-save``, ``--db``, ``--out``, ``--format``,
``--dry-run N``), parses them and calls the one driver through
:func:`assay.cli.llm_run.run_task`: a run is stored as an evaluation (one item row per call)
unless ``--no-save``; a run with failed calls beyond ``--max-errors`` is stored as
``failed`` and exits 1; SIGINT/SIGTERM store the calls made and exit 130/143 (the same
command resumes). Bad options and bad data exit 2 before any call is paid. Heavy modules
are imported inside the commands so ``assay --help`` stays fast.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from assay.cli.declared import declared_flag
from assay.cli.llm_run import MODEL_HELP, RunOpts
from assay.cli.options import (
    bootstrap_seed_option,
    by_option,
    cluster_option,
    interval_options,
)
from assay.cli.support import OutputFormat, db_option, format_option, guarded, out_option
from assay.llm.suites.declared import SUITE_OPTIONS

__all__ = ["add_commands"]


@dataclass
class _Run:
    """The options every suite command shares."""

    model: str | None
    concurrency: int
    timeout: float
    retries: int
    max_errors: int | None
    max_tokens: int | None
    cache: Path | None
    no_cache: bool
    save: bool
    db: str | None
    out: Path | None
    fmt: OutputFormat
    dry_run: int
    price_per_mtok: str | None
    human_labels: Path | None
    quiet: bool
    answer_mode: str | None
    loglik: str | None
    ci: float | None
    ci_method: str
    num_bootstrap: int
    by: list[str]
    bootstrap_seed: int | None
    cluster: str | None


def _o(default: Any, *names: str, help: str, **kw: Any) -> Any:
    return typer.Option(default, *names, help=help, **kw)


# The options every suite command shares (declared once, used in each signature).
MODEL = _o(None, "--model", "-m", help=MODEL_HELP)
MAX_QUERIES = _o(0, "--max-queries", "-n", help="Items to query at most (0 = all).")
SEED = _o(
    1,
    "--seed",
    help="Seeds everything random in the command: the prompts' deterministic shuffles and "
    "the bootstrap (--ci); --bootstrap-seed re-seeds the bootstrap alone.",
)
CI, CI_METHOD, NUM_BOOTSTRAP, _ = interval_options()  # the seed is the suite's --seed
BOOTSTRAP_SEED = bootstrap_seed_option("the prompts' shuffles")
CLUSTER = cluster_option("item")
AVG_CI = interval_options()  # llm average: --ci, --ci-method, --num-bootstrap, --seed
BY = by_option("An item column (bias_type, test_type, a CSV column, ...)")
MAX_TOKENS = _o(None, "--max-tokens", help="Cap on each answer (default: the suite's own).")
SAVE = _o(True, "--save/--no-save", help="Record the run in the evaluation store.")
DB = db_option("Evaluation store URL or SQLite file.")
OUT = out_option("Write the metric records (JSON) here.")
FMT = format_option("json or table.")
HUMAN_LABELS = _o(
    None,
    "--human-labels",
    help="JSONL, CSV or Parquet of human labels by item id (language: each item's true "
    "accuracy, 1 or 0). The suite's per-item mean gets a PPI++ record (estimator=ppi) and a "
    "JudgeAgreement record.",
)
DRY_RUN = _o(
    0,
    "--dry-run",
    help="Print the first N prompts and, on stderr, the calls, cached calls and prompt tokens "
    "a run would pay; stop (no model call).",
)
ANSWER_MODE = declared_flag(SUITE_OPTIONS["answer_mode"])
LOGLIK = _o(
    None,
    "--loglik",
    help="How an OpenAI-compatible server gives log-probabilities: completions "
    "(/v1/completions with echo: vLLM, llama.cpp server) or chat (top_logprobs: "
    "single-token labels only).",
)


_RUN_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("model", str, MODEL),
    ("max_errors", int, RunOpts.max_errors),
    ("max_tokens", int, MAX_TOKENS),
    ("concurrency", int, RunOpts.concurrency),
    ("timeout", float, RunOpts.timeout),
    ("retries", int, RunOpts.retries),
    ("cache", Path, RunOpts.cache),
    ("no_cache", bool, RunOpts.no_cache),
    ("save", bool, SAVE),
    ("db", str, DB),
    ("out", Path, OUT),
    ("fmt", OutputFormat, FMT),
    ("dry_run", int, DRY_RUN),
    ("price_per_mtok", str, RunOpts.price_per_mtok),
    ("human_labels", Path, HUMAN_LABELS),
    ("quiet", bool, RunOpts.quiet),
    ("answer_mode", str, ANSWER_MODE),
    ("loglik", str, LOGLIK),
    ("ci", float, CI),
    ("ci_method", str, CI_METHOD),
    ("num_bootstrap", int, NUM_BOOTSTRAP),
    ("by", list[str], BY),
    ("bootstrap_seed", int, BOOTSTRAP_SEED),
    ("cluster", str, CLUSTER),
)


def _suite_command(fn: Callable[..., None]) -> Callable[..., None]:
    """Give a suite command the shared run options; it receives them as ``run: _Run``."""
    own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.name != "run"]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=kind)
        for name, kind, opt in _RUN_OPTIONS
    ]
    names = [name for name, _, _ in _RUN_OPTIONS]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> None:
        fn(run=_Run(**{n: kwargs.pop(n) for n in names}), **kwargs)

    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + shared
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


def _execute(suite: Any, run: _Run, title: str) -> None:
    from assay.cli.llm_run import print_estimate, run_task
    from assay.errors import InvalidInputError
    from assay.llm.driver import dry_run_items
    from assay.llm.estimate import parse_prices
    from assay.llm.options import run_options
    from assay.terminal import printable

    options = run_options(
        concurrency=run.concurrency,
        timeout=run.timeout,
        retries=run.retries,
        max_errors=run.max_errors,
        max_tokens=run.max_tokens,
        cache=run.cache,
        no_cache=run.no_cache,
        quiet=run.quiet,
        loglik=run.loglik,
        ci=run.ci,
        ci_method=run.ci_method,
        num_bootstrap=run.num_bootstrap,
        by=tuple(run.by or ()),
        bootstrap_seed=run.bootstrap_seed,
        cluster=run.cluster,
    )
    if run.dry_run < 0:
        raise InvalidInputError(f"must be >= 0, got {run.dry_run}", source="--dry-run")
    prices = parse_prices(run.price_per_mtok)
    labels = None if run.human_labels is None else _read_labels(suite, run.human_labels, options)
    if run.dry_run > 0:
        _dry_run_mode(suite, run)
        for it in dry_run_items(suite, options)[: run.dry_run]:
            prompt = printable(it.messages[-1]["content"], keep_newlines=True)
            sys.stdout.write(f"### {printable(it.id)}\n{prompt}\n")
            if it.kind == "loglik":
                spec = it.params["loglik"]
                shown = printable(f"{spec['prefix']!r}: {spec['continuations']}")
                sys.stdout.write(f"(scored after {shown})\n")
            sys.stdout.write("\n")
        print_estimate(suite, run.model, options, prices, start=False)
        return
    run_task(
        suite,
        run.model,
        options,
        out=run.out,
        fmt=run.fmt,
        save=run.save,
        db=run.db,
        title=title,
        after=None if labels is None else _labelled(suite, labels, options),
    )


def _read_labels(suite: Any, path: Path, options: Any) -> Any:
    """``--human-labels`` of a suite: by item id, checked before any call (a suite without
    per-item scores refuses them)."""
    from assay.cli.support import check_input_file
    from assay.errors import InvalidInputError
    from assay.io.human_labels import read_human_labels
    from assay.llm.driver import dry_run_items
    from assay.llm.human_labels import check_labels

    if not hasattr(suite, "item_scores"):
        raise InvalidInputError(
            f"the {suite.kind} suite has no per-item score to calibrate (the language suite has)",
            source="--human-labels",
        )
    labels = read_human_labels(check_input_file(path, option="--human-labels"))
    ids = [it.id for it in dry_run_items(suite, options)]
    check_labels(labels, ids, {t.lower(): t for t in suite.item_scores([])})
    return labels


def _labelled(suite: Any, labels: Any, options: Any) -> Any:
    """The ``after(run)`` adding the PPI and ``JudgeAgreement`` records of the labels, and
    the caution of a weakly agreeing grader."""
    from assay.llm.caution import PARAMETER, announce
    from assay.llm.human_labels import labelled_records
    from assay.results import Metric, MetricSet
    from assay.uncertainty.intervals import ci_options

    def after(run: Any) -> None:
        opts = ci_options(
            0.95 if options.ci is None else options.ci,
            num_bootstrap=options.num_bootstrap,
            seed=suite.ci_seed() if options.seed is None else options.seed,
        )
        assert opts is not None
        new: list[Any] = []
        for type_, (scores, context) in suite.item_scores(run.calls).items():
            per = [Metric(type_, v, {"item_id": i}) for i, v in scores.items()]
            new += labelled_records(
                per, labels, {type_.lower(): type_}, opts, item_key="item_id", context=context
            )
        for m in new:
            if m.type == "JudgeAgreement" and PARAMETER in m.parameters:
                announce(f"{m.parameters['metric']}: {m.parameters[PARAMETER]}")
                run.parameters[PARAMETER] = m.parameters[PARAMETER]
        run.metrics = MetricSet([*run.metrics, *new])

    return after


@_suite_command
def cat(
    data: Path = typer.Option(
        None, "--data", help="StereoSet dev.json (from the StereoSet repository).", dir_okay=False
    ),
    sample: bool = typer.Option(
        False, "--sample", help="Use the 16-item sample shipped with assay (not StereoSet data)."
    ),
    max_queries: int = MAX_QUERIES,
    seed: int = SEED,
    run: _Run | None = None,
) -> None:
    """Context association tests (StereoSet dev.json): LMS, SS, ICAT per scope."""
    from assay.llm.suites.api import suite_data
    from assay.llm.suites.cat import CATSuite

    path = suite_data(data, sample=sample, suite="cat")
    suite = CATSuite(path, max_queries=max_queries, seed=seed, answer_mode=_given(run).answer_mode)
    _execute(suite, _given(run), f"context association tests: {Path(path).name}")


@_suite_command
def fairness(
    dataset: str = typer.Option(
        "pisa", "--dataset", "-d", help="pisa, compas, or a dataset TOML file."
    ),
    dataset_file: Path = typer.Option(
        None, "--dataset-file", help="A dataset declared in a TOML file (instead of --dataset)."
    ),
    train: Path = typer.Option(None, "--train", help="Train split CSV."),
    test: Path = typer.Option(None, "--test", help="Test split CSV."),
    raw: list[Path] = typer.Option(
        None, "--raw", help="Raw public file(s) to rebuild the splits from (PISA: two files)."
    ),
    sample: bool = typer.Option(False, "--sample", help="Use the small sample shipped with assay."),
    template_file: Path = typer.Option(
        None,
        "--template-file",
        help="Prompt template file (instead of the dataset's; a dataset TOML may only name "
        "files in its own folder).",
        dir_okay=False,
    ),
    max_queries: int = MAX_QUERIES,
    seed: int = SEED,
    run: _Run | None = None,
) -> None:
    """LLM fairness with counterfactual prompts: SPD, DI, AOD, EOD, accuracy, change rates."""
    from dataclasses import replace

    from assay.llm.suites.fairness import FairnessSuite, load_fairness_data

    data = load_fairness_data(
        dataset_file if dataset_file is not None else dataset,
        train=train,
        test=test,
        raw=raw or (),
        sample=sample,
    )
    if template_file is not None:
        data = replace(data, spec=replace(data.spec, template_path=str(template_file)))
    data.spec.prompt_template()  # an unreadable or outside template stops before the model loads
    suite = FairnessSuite(
        data, max_queries=max_queries, seed=seed, answer_mode=_given(run).answer_mode
    )
    _execute(suite, _given(run), f"LLM fairness: {data.spec.name}")


@_suite_command
def language(
    data: Path = typer.Option(
        None,
        "--data",
        help="CSV with language, question, options, answer (built from Kaleidoscope).",
        dir_okay=False,
    ),
    sample: bool = typer.Option(
        False, "--sample", help="Use the 16-question sample shipped with assay (en, es, fr, de)."
    ),
    languages: str = typer.Option(None, "--languages", help="Comma-separated language codes."),
    max_queries: int = MAX_QUERIES,
    seed: int = SEED,
    run: _Run | None = None,
) -> None:
    """Language exams (multiple choice): accuracy and format errors per language."""
    from assay.llm.suites.api import suite_data
    from assay.llm.suites.language import LanguageSuite

    path = suite_data(data, sample=sample, suite="language")
    langs = languages.split(",") if languages else None
    suite = LanguageSuite(
        path,
        languages=langs,
        max_queries=max_queries,
        seed=seed,
        answer_mode=_given(run).answer_mode,
    )
    _execute(suite, _given(run), f"language exams: {Path(path).name}")


def average(
    datasets: str = typer.Option(
        "pisa,compas", "--datasets", help="Comma-separated dataset names."
    ),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="Only evaluations of this model, typed any way: with or without credentials, "
        "or under another name its server answered as.",
    ),
    save: bool = SAVE,
    db: str = DB,
    out: Path = OUT,
    fmt: OutputFormat = FMT,
    ci: float = AVG_CI[0],
    ci_method: str = AVG_CI[1],
    num_bootstrap: int = AVG_CI[2],
    seed: int = AVG_CI[3],
) -> None:
    """Mean fairness metrics over the last finished evaluation of each dataset; with --ci,
    a stratified bootstrap interval over each dataset's stored items (no model call)."""
    from assay.cli.options import interval_kwargs
    from assay.cli.support import publish
    from assay.errors import InvalidInputError
    from assay.llm.suites.average import average_fairness
    from assay.results import MetricSet
    from assay.store import Store

    ci_kw = interval_kwargs(ci, ci_method, num_bootstrap, seed)
    names = list(dict.fromkeys(d.strip() for d in datasets.split(",") if d.strip()))
    if not names:
        raise InvalidInputError(f"no dataset named, got {datasets!r}", source="--datasets")
    if out is not None:
        from assay.io.files import check_writable_file

        check_writable_file(out, option="--out")
    with Store(db, create=False) as store:  # read: a missing store is not made here
        found = store.latest_per_dataset(
            kind="llm_fairness", datasets=names, model=model, require=True
        )
        items = {d: store.get(ev.id, items=True).items for d, ev in found.items()} if ci_kw else {}
    evaluations = {d: (ev.id, ev.metrics or MetricSet()) for d, ev in found.items()}
    metrics = average_fairness(evaluations, items=items, **ci_kw)
    served = {ev.served_model for ev in found.values()}  # one model answered them all?
    publish(
        metrics,
        fmt=fmt,
        out=out,
        title="average LLM fairness",
        save=save,
        db=db,
        kind="llm_fairness_average",
        dataset=",".join(names),
        model=model,
        parameters={"datasets": names, "evaluations": [ev.id for ev in found.values()], **ci_kw},
        served_model=served.pop() if len(served) == 1 else None,
    )


def _dry_run_mode(suite: Any, run: _Run) -> None:
    """The answer mode a real run would use, told by the spec alone (no model loaded)."""
    from assay.llm.models.spec import spec_loglik_support
    from assay.llm.suites.base import resolve_answer_mode

    support = spec_loglik_support(run.model, run.loglik)
    suite.mode = resolve_answer_mode(suite.answer_mode, support, labels_only=suite.labels_only)


def _given(run: _Run | None) -> _Run:
    assert run is not None, "a suite command is called through _suite_command"
    return run


def add_commands(app: typer.Typer) -> None:
    """Attach ``cat``, ``fairness``, ``language`` and ``average`` to the ``assay llm`` group."""
    for name, fn in (
        ("cat", cat),
        ("fairness", fairness),
        ("language", language),
        ("average", average),
    ):
        app.command(name)(guarded(fn))
