"""Make real Inspect AI logs offline (run as a script by conftest.py: ``python
make_inspect_logs.py DIR``), with inspect-ai itself and no model call.

Each task's solver sets the model output itself (``ModelOutput.from_content``; the model
is Inspect's ``mockllm/model``, never called), so every answer is known: sample ``n``
answers ``2n`` unless ``n * epoch`` (``+ shift``) is a multiple of 3, when it answers
``wrong``; sample 4 raises in every epoch (an errored sample, kept with
``fail_on_error=False``). Scorers: Inspect's ``match()`` (accuracy, stderr) and a numeric
one (mean, stderr, std, var). Three epochs.

Written to DIR: ``a.eval`` and ``a.json`` (model A, both log formats), ``b.eval``
(model B: the same samples, shifted answers), ``c.eval`` (model A with the epoch reducers
``max``, ``pass_at_2`` and ``at_least_2``), ``noscore.eval`` (a task without a scorer).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score, Target, match, mean, scorer, std, stderr, var
from inspect_ai.solver import Generate, TaskState, solver


@solver
def canned(shift: int = 0):  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        n = int(state.sample_id)
        if n == 4:
            raise RuntimeError("sample 4 always fails")
        answer = str(2 * n) if (n * state.epoch + shift) % 3 else "wrong"
        state.output = ModelOutput.from_content(model="mockllm/model", content=answer)
        return state

    return solve


@scorer(metrics=[mean(), stderr(), std(), var()])
def length_score():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(value=len(text) / 4, answer=text, explanation=f"{len(text)} characters")

    return score


def _task(shift: int, scored: bool = True, reducers: list[str] | None = None) -> Task:
    samples = [
        Sample(input=f"double {i}", target=str(2 * i), id=i, metadata={"parity": i % 2})
        for i in range(1, 10)
    ]
    return Task(
        dataset=samples,
        solver=canned(shift),
        scorer=[match(), length_score()] if scored else None,
        epochs=Epochs(3, reducers) if reducers else 3,
        name="doubling",
    )


def _one(task: Task, fmt: str, dest: Path) -> None:
    with tempfile.TemporaryDirectory() as d:
        [log] = eval(task, model="mockllm/model", log_dir=d, log_format=fmt,
                     fail_on_error=False, display="none")  # fmt: skip
        shutil.copy(log.location, dest)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _one(_task(0), "eval", out / "a.eval")
    _one(_task(0), "json", out / "a.json")
    _one(_task(1), "eval", out / "b.eval")
    _one(_task(0, reducers=["max", "pass_at_2", "at_least_2"]), "eval", out / "c.eval")
    _one(_task(0, scored=False), "eval", out / "noscore.eval")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
