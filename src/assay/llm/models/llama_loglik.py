"""Log-likelihood of continuations on a llama.cpp model, reusing the shared prompt's KV state.

lm-evaluation-harness scores a multiple-choice option by ``log P(option | prompt)``: the
sum of the log-probabilities of the option's tokens, each given the prompt and the
option's earlier tokens. The tokens are split as lm-eval splits them: the whole text
``prompt + option`` is tokenized once, and the option's tokens are the ones after the
prompt's own tokenization (so a token that merges across the boundary is counted with
the option, never twice).

llama.cpp keeps the key/value state of the tokens it has already decoded. Options of
one question share their prompt, and consecutive questions often share a long prefix
(instructions, few-shot rows), so each scoring call keeps the longest common prefix of
what the context holds and decodes only the rest, asking llama.cpp for logits only at
the positions that predict an option token (the full-vocabulary row of every prompt
position would cost memory and time for nothing).

Example:
    >>> from llama_cpp import Llama                    # doctest: +SKIP
    >>> llm = Llama(model_path="model.gguf", verbose=False)   # doctest: +SKIP
    >>> scorer = LlamaLoglik(llm)                      # doctest: +SKIP
    >>> scores = scorer.score("The sky is", [" blue", " green"])  # doctest: +SKIP
    >>> [round(s.logprob, 2) for s in scores]           # doctest: +SKIP
    [-1.02, -5.71]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.llm.models.base import OptionScore

__all__ = [
    "LlamaLoglik",
    "log_softmax_at",
]


def log_softmax_at(logits: np.ndarray, token: int) -> tuple[float, bool]:
    """``log softmax(logits)[token]`` in float64, and whether ``token`` is the arg-max."""
    row = np.asarray(logits, dtype=np.float64)
    top = float(row.max())
    lse = top + float(np.log(np.exp(row - top).sum()))
    return float(row[token]) - lse, bool(row[token] >= top)


class LlamaLoglik:
    """Scores continuations on a loaded ``llama_cpp.Llama`` (see the module docstring).

    The ``Llama`` object must not be used by another thread meanwhile: the caller
    serialises (the embedded model runs every call in its one worker thread).
    """

    def __init__(self, llama: Any) -> None:
        self.llama = llama

    def tokens(self, text: str) -> list[int]:
        """Tokens of ``text`` as the model reads a prompt (BOS if the model adds one,
        special tokens such as ``<|im_start|>`` recognised)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def score(self, prompt: str, continuations: Sequence[str]) -> list[OptionScore]:
        """``log P(continuation | prompt)`` for each continuation, in order."""
        ctx = self.tokens(prompt)
        out = []
        for text in continuations:
            whole = self.tokens(prompt + text)
            cut = _common_prefix(ctx, whole)
            cut = max(1, cut)  # the first token is always context (BOS or the prompt's start)
            cont = whole[cut:]
            if not cont:
                out.append(OptionScore(0.0, 0, len(text.encode("utf-8")), True))
                continue
            rows = self._logits(whole[:-1], first_needed=cut - 1)
            lp, greedy = 0.0, True
            for row, tok in zip(rows, cont):
                v, top = log_softmax_at(row, tok)
                lp += v
                greedy = greedy and top
            out.append(OptionScore(lp, len(cont), len(text.encode("utf-8")), greedy))
        return out

    def _logits(self, tokens: list[int], first_needed: int) -> list[np.ndarray]:
        """Decode ``tokens`` after the longest prefix already in the context; return the
        logit rows of positions ``first_needed .. len(tokens) - 1``."""
        llm = self.llama
        held = list(llm.input_ids[: llm.n_tokens])
        keep = min(_common_prefix(held, tokens), first_needed)
        llm._ctx.kv_cache_seq_rm(-1, keep, -1)
        llm.n_tokens = keep
        rows: list[np.ndarray] = []
        n_vocab = llm.n_vocab()
        for start in range(keep, len(tokens), llm.n_batch):
            batch = tokens[start : start + llm.n_batch]
            llm._batch.set_batch(batch=batch, n_past=start, logits_all=False)
            wanted = [i for i in range(len(batch)) if start + i >= first_needed]
            for i in range(len(batch)):
                llm._batch.batch.logits[i] = i in wanted
            llm._ctx.decode(llm._batch)
            llm.input_ids[start : start + len(batch)] = batch
            llm.n_tokens = start + len(batch)
            for i in wanted:
                ptr = llm._ctx.get_logits_ith(i)
                rows.append(np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy())
        return rows


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x, y = np.asarray(a[:n]), np.asarray(b[:n])
    diff = np.flatnonzero(x != y)
    return int(diff[0]) if diff.size else n
