"""Contract cases of LLM tasks run through the one driver (:func:`assay.llm.evaluate`).

A CAT suite, a judge metric set and pairwise judging are each run once with a scripted
in-process model (:mod:`contract.llm_tasks`); the parsed results of their calls are then fed
to the task's evaluator in batches, so split/merge/state/empty hold for what the driver
produced, not only for hand-made inputs.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.llm import RunOptions, evaluate
from assay.llm.judge.evaluator import JudgeEvaluator
from assay.llm.pairwise import PairwiseEvaluator
from assay.llm.suites.cat import CATEvaluator
from contract import ContractCase
from contract.llm_tasks import Scripted, tasks

_OPTS = RunOptions(cache=False, concurrency=4)
_TASKS = tasks()


def _run_all() -> dict[str, Any]:
    return {name: evaluate(task, Scripted(), _OPTS) for name, task in _TASKS.items()}


def _runs() -> dict[str, Any]:
    """The driver's runs. A Dask worker imports this module on its event loop (unpickling a
    case's function), where the driver's blocking run refuses to start: run it on a thread
    there (it used to hang the cluster tests whenever the worker unpickled in the loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_all()
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_run_all).result()


_RUNS = _runs()


def _thirds(seq: list[Any]) -> list[list[Any]]:
    k = len(seq) // 3
    return [seq[:k], seq[k : 2 * k], seq[2 * k :]]


def _suite_add(ev: Any, calls: list[Any]) -> Any:
    _TASKS["suite"].feed(ev, calls)
    return ev


_per_datum = [m for m in _RUNS["judge"].metrics if "aggregate" not in m.parameters]
_COLS = ("index", "model_a", "model_b", "task", "status", "choice", "length_a", "length_b")
_rows = _TASKS["pairwise"].rows
_pairs = [{c: [r[c]] for c in _COLS} for r in _rows.to_dict("records")]


def _join(batch: list[dict[str, list[Any]]]) -> dict[str, list[Any]]:
    return {c: [v for b in batch for v in b[c]] for c in _COLS}


CASES = [
    ContractCase(
        name="llm-task.suite",
        make=lambda: _TASKS["suite"].evaluator(),
        make_other=lambda: CATEvaluator(dataset="other.json"),
        batches=_thirds(_RUNS["suite"].calls),
        concat=lambda bs: [c for b in bs for c in b],
        add=_suite_add,
    ),
    ContractCase(
        name="llm-task.judge",
        make=lambda: JudgeEvaluator(
            metrics=["faithfulness", "bias", "answer_relevance"], num_bootstrap=50
        ),
        make_other=lambda: JudgeEvaluator(metrics=["faithfulness"], num_bootstrap=50),
        batches=_thirds(_per_datum),
        concat=lambda bs: [m for b in bs for m in b],
    ),
    ContractCase(
        name="llm-task.pairwise",
        make=lambda: PairwiseEvaluator(reference_model="ref", nopt=2, num_bootstrap=20),
        make_other=lambda: PairwiseEvaluator(reference_model="m1", nopt=2, num_bootstrap=20),
        batches=[_join(b) for b in _thirds(_pairs)],
        concat=_join,
        rel=1e-7,
    ),
]
